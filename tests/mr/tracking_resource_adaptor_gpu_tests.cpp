// tracking_resource_adaptor on a GPU: outstanding device allocations over cuda_memory_resource and
// over a pool (with and without stacks), the string of outstanding allocations, frees on other
// streams, an upstream out-of-memory that leaves nothing tracked, and many threads on their own
// streams.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::tracking_resource_adaptor;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
constexpr std::size_t MiB   = std::size_t{1} << 20U;

std::string pointer_text(void* ptr) {
  std::ostringstream oss;
  oss << ptr;
  return oss.str();
}

}  // namespace

TEMPLATE_TEST_CASE("tracking_resource_adaptor (gpu): tracks device allocations",
                   "[gpu][tracking]",
                   rmm::mr::cuda_memory_resource,
                   rmm::mr::pool_memory_resource) {
  auto upstream = [] {
    if constexpr (std::is_same_v<TestType, rmm::mr::pool_memory_resource>) {
      return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
    } else {
      return rmm::mr::cuda_memory_resource{};
    }
  }();
  for (bool const stacks : {false, true}) {
    INFO("capture_stacks " << stacks);
    tracking_resource_adaptor mr{upstream, stacks};
    CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
    rmm::cuda_stream stream;
    rmm::cuda_stream other;
    void* a = mr.allocate(stream, 2 * MiB, align);
    void* b = mr.allocate_sync(1000, align);
    rmm::test::fill_pattern(a, 2 * MiB, 3, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(a, 2 * MiB, 3, stream.value()) == 0);
    {
      auto const& map = mr.get_outstanding_allocations();
      REQUIRE(map.size() == 2);
      CHECK(map.at(a).allocation_size == 2 * MiB);
      CHECK(map.at(b).allocation_size == 1000);
      CHECK((map.at(a).strace != nullptr) == stacks);
    }
    CHECK(mr.get_allocated_bytes() == 2 * MiB + 1000);
    auto const text = mr.get_outstanding_allocations_str();
    CHECK_THAT(text, Contains(pointer_text(a) + ": " + std::to_string(2 * MiB) + " B"));
    CHECK_THAT(text, Contains(pointer_text(b) + ": 1000 B"));
    CHECK((text.find("callstack") != std::string::npos) == stacks);

    mr.deallocate(other, a, 2 * MiB, align);  // freed on another stream
    CHECK(mr.get_outstanding_allocations().size() == 1);
    mr.deallocate_sync(b, 1000, align);
    other.synchronize();
    stream.synchronize();
    CHECK(mr.get_outstanding_allocations().empty());
    CHECK(mr.get_allocated_bytes() == 0);
    CHECK(mr.get_outstanding_allocations_str().empty());
  }
}

TEST_CASE("tracking_resource_adaptor (gpu): out of memory leaves nothing tracked",
          "[gpu][tracking][expected_api_errors]") {
  tracking_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  rmm::cuda_stream stream;
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate(stream, too_much, align), rmm::out_of_memory);
  CHECK(mr.get_outstanding_allocations().empty());
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("tracking_resource_adaptor (gpu): many threads on their own streams", "[gpu][tracking]") {
  tracking_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                               true};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 100;
  std::atomic<std::size_t> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  std::vector<std::vector<void*>> kept(num_threads);
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        rmm::cuda_stream stream;
        for (int i = 0; i < per_thread; ++i) {
          auto const seed = static_cast<std::uint32_t>(t * 1000 + i);
          void* p         = mr.allocate(stream, 4096, align);
          rmm::test::fill_pattern(p, 4096, seed, stream.value());
          mismatches += rmm::test::count_pattern_mismatches(p, 4096, seed, stream.value());
          if (i % 4 == 0) {
            kept[static_cast<std::size_t>(t)].push_back(p);
          } else {
            mr.deallocate(stream, p, 4096, align);
          }
        }
        stream.synchronize();
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
  CHECK(mr.get_outstanding_allocations().size() == num_threads * per_thread / 4);
  CHECK(mr.get_allocated_bytes() == num_threads * per_thread / 4 * 4096);
  for (auto const& mine : kept) {
    for (void* p : mine) {
      mr.deallocate_sync(p, 4096, align);
    }
  }
  CHECK(mr.get_outstanding_allocations().empty());
}
