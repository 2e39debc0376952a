// thread_safe_resource_adaptor without a GPU: many threads over a deliberately non-thread-safe
// upstream (plain integer counters and a plain map, policy_adaptor_test_resources.hpp) keep
// exact counts, and the upstream never sees two calls at once; both allocation forms, copies
// sharing the one mutex, the refusal of a bad alignment, and what the upstream throws.
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::thread_safe_resource_adaptor;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;
using rmm::test::policy_adaptor_fakes::failing_resource;
using rmm::test::policy_adaptor_fakes::unsynchronized_resource;

cuda::stream_ref host_stream() { return cuda::stream_ref{cudaStream_t{}}; }

// Each thread allocates and frees through its own copy of the adaptor, half of the calls
// stream-ordered and half synchronous, keeping some allocations live across iterations.
void hammer(thread_safe_resource_adaptor const& shared,
            int num_threads,
            int iterations,
            std::atomic<int>& errors) {
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back(
        [adaptor = thread_safe_resource_adaptor{shared}, t, iterations, &errors]() mutable {
          try {
            std::mt19937 rng{static_cast<std::uint32_t>(t)};
            std::uniform_int_distribution<std::size_t> size_dist{1, 4096};
            std::vector<std::pair<void*, std::size_t>> live;
            for (int i = 0; i < iterations; ++i) {
              auto const bytes = size_dist(rng);
              void* ptr        = (i % 2 == 0) ? adaptor.allocate(host_stream(), bytes, 256)
                                              : adaptor.allocate_sync(bytes, 256);
              live.emplace_back(ptr, bytes);
              if (live.size() > 4) {
                auto [p, b] = live.front();
                live.erase(live.begin());
                if (i % 3 == 0) {
                  adaptor.deallocate_sync(p, b, 256);
                } else {
                  adaptor.deallocate(host_stream(), p, b, 256);
                }
              }
            }
            for (auto [p, b] : live) {
              adaptor.deallocate(host_stream(), p, b, 256);
            }
          } catch (...) {
            ++errors;
          }
        });
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

}  // namespace

TEST_CASE("thread_safe_resource_adaptor: types", "[thread_safe_resource_adaptor]") {
  STATIC_REQUIRE(std::is_same_v<thread_safe_resource_adaptor::lock_t, std::lock_guard<std::mutex>>);
  STATIC_REQUIRE(
      cuda::mr::resource_with<thread_safe_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(cuda::mr::synchronous_resource_with<thread_safe_resource_adaptor,
                                                     cuda::mr::device_accessible>);
  STATIC_REQUIRE(!cuda::has_property<thread_safe_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<thread_safe_resource_adaptor>);
  STATIC_REQUIRE(std::is_copy_assignable_v<thread_safe_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<thread_safe_resource_adaptor>);
  // explicit: an upstream does not silently become a thread-safe adaptor
  STATIC_REQUIRE(
      !std::is_convertible_v<rmm::test::any_device_resource, thread_safe_resource_adaptor>);
}

TEST_CASE(
    "thread_safe_resource_adaptor: many threads over a non-thread-safe upstream keep exact "
    "counts",
    "[thread_safe_resource_adaptor]") {
  constexpr int num_threads = 8;
  constexpr int iterations  = 400;
  unsynchronized_resource upstream{host_backed_resource{}};
  thread_safe_resource_adaptor adaptor{upstream};
  std::atomic<int> errors{0};
  hammer(adaptor, num_threads, iterations, errors);
  CHECK(errors == 0);
  CHECK(upstream.max_concurrent_calls() == 1);
  CHECK(upstream.allocations() == long{num_threads} * iterations);
  CHECK(upstream.deallocations() == long{num_threads} * iterations);
  CHECK(upstream.bytes_outstanding() == 0);
  CHECK(upstream.live() == 0);
  CHECK(upstream.unknown_frees() == 0);
}

TEST_CASE("thread_safe_resource_adaptor: copies share the mutex; independent adaptors do not",
          "[thread_safe_resource_adaptor]") {
  unsynchronized_resource upstream{host_backed_resource{}};
  thread_safe_resource_adaptor adaptor{upstream};
  thread_safe_resource_adaptor copy{adaptor};
  thread_safe_resource_adaptor other{upstream};
  CHECK(copy == adaptor);
  CHECK_FALSE(copy != adaptor);
  CHECK(other != adaptor);
  auto moved = std::move(copy);
  CHECK(moved == adaptor);

  // hammer() copies the adaptor into every thread: all copies serialise on one mutex.
  std::atomic<int> errors{0};
  hammer(moved, 4, 200, errors);
  CHECK(errors == 0);
  CHECK(upstream.max_concurrent_calls() == 1);
  CHECK(upstream.allocations() == 800);
  CHECK(upstream.live() == 0);
}

TEST_CASE("thread_safe_resource_adaptor: forwards sizes, alignments and pointers unchanged",
          "[thread_safe_resource_adaptor]") {
  verifying_resource verifying{host_backed_resource{}};
  thread_safe_resource_adaptor adaptor{verifying};
  void* a = adaptor.allocate(host_stream(), 1000, 64);
  void* b = adaptor.allocate_sync(5000, 256);
  CHECK(rmm::is_pointer_aligned(a, 256));
  CHECK(verifying.live_allocations() == 2);
  adaptor.deallocate(host_stream(), a, 1000, 64);
  adaptor.deallocate_sync(b, 5000, 256);
  CHECK(verifying.live_allocations() == 0);
  CHECK(verifying.failures().empty());
  CHECK(adaptor.allocate(host_stream(), 0, 256) == nullptr);
  adaptor.deallocate(host_stream(), nullptr, 0, 256);

  rmm::device_async_resource_ref upstream = adaptor.get_upstream_resource();
  void* c                                 = upstream.allocate(host_stream(), 128, 256);
  CHECK(verifying.live_allocations() == 1);
  verifying.deallocate(host_stream(), c, 128, 256);
  CHECK(verifying.failures().empty());
}

TEST_CASE("thread_safe_resource_adaptor: errors propagate and leave the mutex free",
          "[thread_safe_resource_adaptor][expected_api_errors]") {
  failing_resource<> upstream{host_backed_resource{}, 1};
  thread_safe_resource_adaptor adaptor{upstream};
  CHECK_THROWS_AS(adaptor.allocate(host_stream(), 64, 256), rmm::out_of_memory);
  CHECK_THROWS_WITH(adaptor.allocate(host_stream(), 64, 3),
                    Contains("thread_safe_resource_adaptor: alignment 3 is not a power of two"));
  CHECK_THROWS_AS(adaptor.allocate_sync(64, 0), rmm::logic_error);
  // The lock was released by the throws: this would deadlock otherwise.
  void* ptr = adaptor.allocate(host_stream(), 64, 256);
  adaptor.deallocate(host_stream(), ptr, 64, 256);
  CHECK(upstream.requests().size() == 2);
}
