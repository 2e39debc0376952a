// limiting_resource_adaptor on a GPU: a limit over cuda_memory_resource and over a pool, filled to
// the byte with device memory that is written and read back, the out-of-memory error (naming the
// limit, the request, the bytes in use and the device), the upstream's own out-of-memory passed
// through with the charge refunded, and many threads on their own streams.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::limiting_resource_adaptor;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
constexpr std::size_t MiB   = std::size_t{1} << 20U;

}  // namespace

TEMPLATE_TEST_CASE("limiting_resource_adaptor (gpu): fills to the limit, then refuses",
                   "[gpu][limiting][expected_api_errors]",
                   rmm::mr::cuda_memory_resource,
                   rmm::mr::pool_memory_resource) {
  auto upstream = [] {
    if constexpr (std::is_same_v<TestType, rmm::mr::pool_memory_resource>) {
      return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
    } else {
      return rmm::mr::cuda_memory_resource{};
    }
  }();
  limiting_resource_adaptor mr{upstream, 16 * MiB};
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  for (std::uint32_t i = 0; i < 16; ++i) {
    void* p = mr.allocate(stream, MiB, align);
    rmm::test::fill_pattern(p, MiB, i, stream.value());
    blocks.push_back(p);
  }
  CHECK(mr.get_allocated_bytes() == 16 * MiB);
  try {
    void* p = mr.allocate(stream, 1, align);
    mr.deallocate(stream, p, 1, align);
    FAIL("allocating beyond the limit did not throw");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK_THAT(what,
               Contains("out_of_memory") && Contains("cannot allocate 1 bytes") &&
                   Contains("limit of " + std::to_string(16 * MiB) + " bytes") &&
                   Contains(std::to_string(16 * MiB) + " bytes in use") &&
                   Contains("device " + std::to_string(rmm::get_current_cuda_device().value())));
  }
  std::size_t mismatches = 0;
  for (std::uint32_t i = 0; i < 16; ++i) {
    mismatches += rmm::test::count_pattern_mismatches(blocks[i], MiB, i, stream.value());
  }
  CHECK(mismatches == 0);
  for (void* p : blocks) {
    mr.deallocate(stream, p, MiB, align);
  }
  CHECK(mr.get_allocated_bytes() == 0);
  void* again = mr.allocate_sync(16 * MiB, align);  // all of it, once everything is back
  mr.deallocate_sync(again, 16 * MiB, align);
  stream.synchronize();
}

TEST_CASE("limiting_resource_adaptor (gpu): the upstream's out of memory refunds the charge",
          "[gpu][limiting][expected_api_errors]") {
  limiting_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, ~std::size_t{0} / 2};
  rmm::cuda_stream stream;
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate(stream, too_much, align), rmm::out_of_memory);
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("limiting_resource_adaptor (gpu): many threads share one limit", "[gpu][limiting]") {
  constexpr std::size_t limit = 8 * MiB;
  limiting_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                               limit};
  constexpr int num_threads = 8;
  std::atomic<std::size_t> mismatches{0};
  std::atomic<std::size_t> refused{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        rmm::cuda_stream stream;
        std::vector<void*> mine;
        for (int i = 0; i < 100; ++i) {
          try {
            void* p = mr.allocate(stream, 512 * 1024, align);  // 16 fit: 8 threads x 3 do not
            auto const seed = static_cast<std::uint32_t>(t * 100 + i);
            rmm::test::fill_pattern(p, 512 * 1024, seed, stream.value());
            mismatches += rmm::test::count_pattern_mismatches(p, 512 * 1024, seed, stream.value());
            mine.push_back(p);
          } catch (rmm::out_of_memory const&) {
            ++refused;
          }
          if (mine.size() > 2) {
            mr.deallocate(stream, mine.front(), 512 * 1024, align);
            mine.erase(mine.begin());
          }
          if (mr.get_allocated_bytes() > limit) {
            ++errors;
          }
        }
        for (void* p : mine) {
          mr.deallocate(stream, p, 512 * 1024, align);
        }
        stream.synchronize();  // the pool needs streams it freed on synchronised before they go
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  CHECK(mismatches == 0);
  CHECK(mr.get_allocated_bytes() == 0);
}
