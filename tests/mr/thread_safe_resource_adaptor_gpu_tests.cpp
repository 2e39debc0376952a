// thread_safe_resource_adaptor over device memory: many threads, each with its own stream and
// its own copy of the adaptor, over a deliberately non-thread-safe upstream (plain counters and
// map over cudaMalloc): exact counts, never two calls inside the upstream at once, and every
// allocation keeps the data its kernel wrote.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace {

using rmm::mr::thread_safe_resource_adaptor;
using rmm::test::policy_adaptor_fakes::unsynchronized_resource;

constexpr std::size_t KiB = 1024;

}  // namespace

TEST_CASE("thread_safe_resource_adaptor: many threads over a non-thread-safe device upstream",
          "[gpu][thread_safe_resource_adaptor]") {
  auto const over_pool = GENERATE(false, true);
  INFO("over a pool " << over_pool);
  unsynchronized_resource upstream = over_pool
                                         ? unsynchronized_resource{rmm::mr::pool_memory_resource{
                                               rmm::mr::cuda_memory_resource{}, 0}}
                                         : unsynchronized_resource{rmm::mr::cuda_memory_resource{}};
  thread_safe_resource_adaptor const adaptor{upstream};
  constexpr int num_threads = 8;
  constexpr int iterations  = 100;
  std::atomic<int> errors{0};
  std::atomic<std::size_t> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back(
        [mr = thread_safe_resource_adaptor{adaptor}, t, &errors, &mismatches]() mutable {
          try {
            rmm::cuda_stream stream;
            std::mt19937 rng{static_cast<std::uint32_t>(t)};
            std::uniform_int_distribution<std::size_t> size_dist{1, 256 * KiB};
            for (int i = 0; i < iterations; ++i) {
              auto const bytes = size_dist(rng);
              auto const seed  = static_cast<std::uint32_t>(t * 1000 + i);
              void* ptr =
                  (i % 2 == 0) ? mr.allocate(stream, bytes, 256) : mr.allocate_sync(bytes, 256);
              rmm::test::fill_pattern(ptr, bytes, seed, stream.value());
              mismatches += rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value());
              if (i % 2 == 0) {
                mr.deallocate(stream, ptr, bytes, 256);
              } else {
                mr.deallocate_sync(ptr, bytes, 256);
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
  CHECK(upstream.max_concurrent_calls() == 1);
  CHECK(upstream.allocations() == long{num_threads} * iterations);
  CHECK(upstream.deallocations() == long{num_threads} * iterations);
  CHECK(upstream.bytes_outstanding() == 0);
  CHECK(upstream.live() == 0);
  CHECK(upstream.unknown_frees() == 0);
}
