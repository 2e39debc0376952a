// statistics_resource_adaptor on a GPU: exact counters over cuda_memory_resource and over a pool
// with device memory written and read back, nested push/pop around stream-ordered work, an
// upstream out-of-memory that is not counted, and many threads on their own streams.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using rmm::mr::statistics_resource_adaptor;
using counter = statistics_resource_adaptor::counter;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
constexpr std::size_t MiB   = std::size_t{1} << 20U;

void check_counter(counter const& c, std::int64_t value, std::int64_t peak, std::int64_t total) {
  CHECK(c.value == value);
  CHECK(c.peak == peak);
  CHECK(c.total == total);
}

std::int64_t i64(std::size_t v) { return static_cast<std::int64_t>(v); }

}  // namespace

TEMPLATE_TEST_CASE("statistics_resource_adaptor (gpu): exact counters over device memory",
                   "[gpu][statistics]",
                   rmm::mr::cuda_memory_resource,
                   rmm::mr::pool_memory_resource) {
  auto upstream = [] {
    if constexpr (std::is_same_v<TestType, rmm::mr::pool_memory_resource>) {
      return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
    } else {
      return rmm::mr::cuda_memory_resource{};
    }
  }();
  statistics_resource_adaptor mr{upstream};
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  rmm::cuda_stream stream;

  void* a = mr.allocate(stream, 3 * MiB, align);
  void* b = mr.allocate_sync(MiB + 1, align);
  rmm::test::fill_pattern(a, 3 * MiB, 1, stream.value());
  rmm::test::fill_pattern(b, MiB + 1, 2, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(a, 3 * MiB, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(b, MiB + 1, 2, stream.value()) == 0);
  check_counter(mr.get_bytes_counter(), i64(4 * MiB + 1), i64(4 * MiB + 1), i64(4 * MiB + 1));
  check_counter(mr.get_allocations_counter(), 2, 2, 2);

  mr.push_counters();
  void* c = mr.allocate(rmm::cuda_stream_per_thread, 512, align);
  mr.deallocate(stream, a, 3 * MiB, align);  // an outer allocation freed inside the block
  check_counter(mr.get_bytes_counter(), 512 - i64(3 * MiB), 512, 512);
  auto const [inner_bytes, inner_allocs] = mr.pop_counters();
  check_counter(inner_bytes, 512 - i64(3 * MiB), 512, 512);
  check_counter(inner_allocs, 0, 1, 1);
  check_counter(
      mr.get_bytes_counter(), i64(MiB + 1) + 512, i64(4 * MiB + 1) + 512, i64(4 * MiB + 1) + 512);
  CHECK_THROWS_AS(mr.pop_counters(), std::out_of_range);

  mr.deallocate(rmm::cuda_stream_per_thread, c, 512, align);
  mr.deallocate_sync(b, MiB + 1, align);
  stream.synchronize();
  check_counter(mr.get_bytes_counter(), 0, i64(4 * MiB + 1) + 512, i64(4 * MiB + 1) + 512);
  // The nested block's one allocation came on top of the two outer ones: peak 3.
  check_counter(mr.get_allocations_counter(), 0, 3, 3);
}

TEST_CASE("statistics_resource_adaptor (gpu): out of memory is not counted",
          "[gpu][statistics][expected_api_errors]") {
  statistics_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  rmm::cuda_stream stream;
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate(stream, too_much, align), rmm::out_of_memory);
  check_counter(mr.get_bytes_counter(), 0, 0, 0);
  check_counter(mr.get_allocations_counter(), 0, 0, 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("statistics_resource_adaptor (gpu): many threads on their own streams",
          "[gpu][statistics]") {
  statistics_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 200;
  std::atomic<std::size_t> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        rmm::cuda_stream stream;
        for (int i = 0; i < per_thread; ++i) {
          auto const bytes = static_cast<std::size_t>(1 + (t * 7919 + i * 104729) % (64 * 1024));
          auto const seed  = static_cast<std::uint32_t>(t * 1000 + i);
          void* p          = mr.allocate(stream, bytes, align);
          rmm::test::fill_pattern(p, bytes, seed, stream.value());
          mismatches += rmm::test::count_pattern_mismatches(p, bytes, seed, stream.value());
          mr.deallocate(stream, p, bytes, align);
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
  auto const allocs = mr.get_allocations_counter();
  CHECK(allocs.value == 0);
  CHECK(allocs.total == num_threads * per_thread);
  CHECK(allocs.peak >= 1);
  CHECK(allocs.peak <= num_threads);
  CHECK(mr.get_bytes_counter().value == 0);
}
