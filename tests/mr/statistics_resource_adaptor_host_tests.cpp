// statistics_resource_adaptor without a GPU, over host-backed "device" memory
// (utilities/test_resources.hpp): exact counters across allocation/free sequences, the counter
// type's operators, nested push/pop (including the peak of nested blocks and popping the last
// level), both forms of allocate, upstream failures, copies, stacking and many threads.
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <random>
#include <shared_mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using rmm::mr::statistics_resource_adaptor;
using rmm::test::host_backed_resource;
using counter = statistics_resource_adaptor::counter;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
cuda::stream_ref const stream{cudaStream_t{}};

void check_counter(counter const& c, std::int64_t value, std::int64_t peak, std::int64_t total) {
  CHECK(c.value == value);
  CHECK(c.peak == peak);
  CHECK(c.total == total);
}

}  // namespace

// An upstream that always fails, in a named namespace: clang drops the hidden-friend
// get_property of a class with internal linkage as unneeded.
namespace rmm::test::statistics_fakes {
struct failing_resource {
  void* allocate_sync(std::size_t, std::size_t) { throw rmm::out_of_memory{"failing_resource"}; }
  void deallocate_sync(void*, std::size_t, std::size_t) noexcept {}
  void* allocate(cuda::stream_ref, std::size_t, std::size_t) {
    throw rmm::out_of_memory{"failing_resource"};
  }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  bool operator==(failing_resource const&) const noexcept { return true; }
  bool operator!=(failing_resource const&) const noexcept { return false; }
  friend void get_property(failing_resource const&, cuda::mr::device_accessible) noexcept {}
};
}  // namespace rmm::test::statistics_fakes

TEST_CASE("statistics_resource_adaptor: types and properties", "[statistics]") {
  STATIC_REQUIRE(cuda::mr::resource_with<statistics_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(cuda::has_property<statistics_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<statistics_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<statistics_resource_adaptor>);
  STATIC_REQUIRE(std::is_same_v<statistics_resource_adaptor::read_lock_t,
                                std::shared_lock<std::shared_mutex>>);
  STATIC_REQUIRE(std::is_same_v<statistics_resource_adaptor::write_lock_t,
                                std::unique_lock<std::shared_mutex>>);
  STATIC_REQUIRE(std::is_same_v<decltype(counter{}.value), std::int64_t>);
  // The constructor is explicit, as documented.
  STATIC_REQUIRE_FALSE(std::is_convertible_v<host_backed_resource, statistics_resource_adaptor>);
}

TEST_CASE("statistics_resource_adaptor: counter operators", "[statistics]") {
  counter c;
  check_counter(c, 0, 0, 0);
  c += 10;
  c += 5;
  check_counter(c, 15, 15, 15);
  c -= 12;
  check_counter(c, 3, 15, 15);  // -= leaves the peak and the total
  c += 4;
  check_counter(c, 7, 15, 19);
  CHECK(&(c += 1) == &c);
  CHECK(&(c -= 1) == &c);

  // A nested block that started at outer value 7 and peaked at 10 above it: outer peak 17.
  counter inner;
  inner += 10;
  inner -= 6;
  c.add_counters_from_tracked_sub_block(inner);
  check_counter(c, 11, 17, 30);
  // A nested block whose peak does not exceed the outer one leaves the peak.
  counter small;
  small += 1;
  c.add_counters_from_tracked_sub_block(small);
  check_counter(c, 12, 17, 31);
}

TEST_CASE("statistics_resource_adaptor: counters are exact across allocations and frees",
          "[statistics]") {
  statistics_resource_adaptor mr{host_backed_resource{}};
  check_counter(mr.get_bytes_counter(), 0, 0, 0);
  check_counter(mr.get_allocations_counter(), 0, 0, 0);

  void* a = mr.allocate(stream, 100, align);
  void* b = mr.allocate(stream, 1000, align);
  check_counter(mr.get_bytes_counter(), 1100, 1100, 1100);
  check_counter(mr.get_allocations_counter(), 2, 2, 2);
  mr.deallocate(stream, a, 100, align);
  check_counter(mr.get_bytes_counter(), 1000, 1100, 1100);
  check_counter(mr.get_allocations_counter(), 1, 2, 2);
  void* c = mr.allocate_sync(50, align);  // the synchronous form counts the same
  check_counter(mr.get_bytes_counter(), 1050, 1100, 1150);
  check_counter(mr.get_allocations_counter(), 2, 2, 3);
  void* d = mr.allocate(stream, 4096, align);
  check_counter(mr.get_bytes_counter(), 5146, 5146, 5246);
  check_counter(mr.get_allocations_counter(), 3, 3, 4);
  mr.deallocate(stream, b, 1000, align);
  mr.deallocate_sync(c, 50, align);
  mr.deallocate(stream, d, 4096, align);
  check_counter(mr.get_bytes_counter(), 0, 5146, 5246);
  check_counter(mr.get_allocations_counter(), 0, 3, 4);

  // Zero bytes count as an allocation of zero bytes, as in RMM.
  void* z = mr.allocate(stream, 0, align);
  check_counter(mr.get_allocations_counter(), 1, 3, 5);
  mr.deallocate(stream, z, 0, align);
  check_counter(mr.get_allocations_counter(), 0, 3, 5);
  check_counter(mr.get_bytes_counter(), 0, 5146, 5246);
}

TEST_CASE("statistics_resource_adaptor: push and pop nest the counters", "[statistics]") {
  statistics_resource_adaptor mr{host_backed_resource{}};
  void* outer = mr.allocate(stream, 1000, align);

  auto const [bytes_before, allocs_before] = mr.push_counters();
  check_counter(bytes_before, 1000, 1000, 1000);  // the level below, before the push
  check_counter(allocs_before, 1, 1, 1);
  check_counter(mr.get_bytes_counter(), 0, 0, 0);  // the new level starts at zero
  check_counter(mr.get_allocations_counter(), 0, 0, 0);

  void* x = mr.allocate(stream, 300, align);
  void* y = mr.allocate(stream, 200, align);
  mr.deallocate(stream, x, 300, align);
  check_counter(mr.get_bytes_counter(), 200, 500, 500);

  mr.push_counters();
  void* deep = mr.allocate(stream, 50, align);
  mr.deallocate(stream, deep, 50, align);
  // Freeing memory of an outer level subtracts from the inner one: it goes negative.
  mr.deallocate(stream, outer, 1000, align);
  check_counter(mr.get_bytes_counter(), -1000, 50, 50);
  check_counter(mr.get_allocations_counter(), -1, 1, 1);

  auto const [deep_bytes, deep_allocs] = mr.pop_counters();
  check_counter(deep_bytes, -1000, 50, 50);
  check_counter(deep_allocs, -1, 1, 1);
  // Merged into the middle level: value 200-1000, peak max(500, 200+50), total 550.
  check_counter(mr.get_bytes_counter(), -800, 500, 550);
  check_counter(mr.get_allocations_counter(), 0, 2, 3);

  auto const [mid_bytes, mid_allocs] = mr.pop_counters();
  check_counter(mid_bytes, -800, 500, 550);
  check_counter(mid_allocs, 0, 2, 3);
  // Merged into the bottom level: value 1000-800, peak max(1000, 1000+500), total 1550.
  check_counter(mr.get_bytes_counter(), 200, 1500, 1550);
  check_counter(mr.get_allocations_counter(), 1, 3, 4);

  mr.deallocate(stream, y, 200, align);
  check_counter(mr.get_bytes_counter(), 0, 1500, 1550);
}

TEST_CASE("statistics_resource_adaptor: popping the last level throws out_of_range",
          "[statistics]") {
  statistics_resource_adaptor mr{host_backed_resource{}};
  void* p = mr.allocate(stream, 100, align);
  CHECK_THROWS_AS(mr.pop_counters(), std::out_of_range);
  CHECK_THROWS_AS(mr.pop_counters(), rmm::out_of_range);
  // RMM's text, as RMM throws it, then what this library adds.
  CHECK_THROWS_WITH(mr.pop_counters(),
                    Catch::Matchers::StartsWith("cannot pop the last counter pair") &&
                        Catch::Matchers::Contains("without a matching push_counters()"));
  // The failed pops changed nothing.
  check_counter(mr.get_bytes_counter(), 100, 100, 100);
  mr.push_counters();
  mr.pop_counters();
  CHECK_THROWS_AS(mr.pop_counters(), std::out_of_range);
  mr.deallocate(stream, p, 100, align);
  check_counter(mr.get_bytes_counter(), 0, 100, 100);
}

TEST_CASE("statistics_resource_adaptor: a failed allocation is not counted", "[statistics]") {
  statistics_resource_adaptor mr{rmm::test::statistics_fakes::failing_resource{}};
  CHECK_THROWS_AS(mr.allocate(stream, 100, align), rmm::out_of_memory);
  CHECK_THROWS_AS(mr.allocate_sync(100, align), rmm::out_of_memory);
  check_counter(mr.get_bytes_counter(), 0, 0, 0);
  check_counter(mr.get_allocations_counter(), 0, 0, 0);
}

TEST_CASE("statistics_resource_adaptor: forwards to the upstream unchanged", "[statistics]") {
  rmm::test::verifying_resource upstream{host_backed_resource{}};
  statistics_resource_adaptor mr{upstream};
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  void* p = mr.allocate(stream, 123, 64);
  void* q = mr.allocate_sync(77, 128);
  mr.deallocate(stream, p, 123, 64);
  mr.deallocate_sync(q, 77, 128);
  CHECK(upstream.failures().empty());
  CHECK(upstream.live_allocations() == 0);
}

TEST_CASE("statistics_resource_adaptor: copies share counters; stacking counts at each level",
          "[statistics]") {
  statistics_resource_adaptor inner{host_backed_resource{}};
  statistics_resource_adaptor copy = inner;
  CHECK(copy == inner);
  CHECK(statistics_resource_adaptor{host_backed_resource{}} != inner);
  // Wrapping the inner adaptor in an any_resource makes a new level instead of a copy.
  statistics_resource_adaptor outer{cuda::mr::any_resource<cuda::mr::device_accessible>{inner}};
  CHECK(outer != inner);
  void* p = outer.allocate(stream, 512, align);
  void* q = copy.allocate(stream, 256, align);
  check_counter(outer.get_bytes_counter(), 512, 512, 512);
  check_counter(inner.get_bytes_counter(), 768, 768, 768);
  outer.deallocate(stream, p, 512, align);
  inner.deallocate(stream, q, 256, align);
  check_counter(outer.get_bytes_counter(), 0, 512, 512);
  check_counter(copy.get_bytes_counter(), 0, 768, 768);
  // Push through one copy, read through another: one stack.
  copy.push_counters();
  check_counter(inner.get_bytes_counter(), 0, 0, 0);
  inner.pop_counters();
  check_counter(copy.get_bytes_counter(), 0, 768, 768);
}

TEST_CASE("statistics_resource_adaptor: many threads", "[statistics]") {
  statistics_resource_adaptor mr{host_backed_resource{}};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 2000;
  std::vector<std::thread> threads;
  std::vector<std::int64_t> bytes_of(num_threads, 0);
  std::atomic<int> inconsistent{0};
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng{static_cast<unsigned>(t)};
      std::uniform_int_distribution<std::size_t> size_dist{1, 4096};
      std::vector<std::pair<void*, std::size_t>> live;
      for (int i = 0; i < per_thread; ++i) {
        auto const bytes = size_dist(rng);
        live.emplace_back(mr.allocate(stream, bytes, align), bytes);
        bytes_of[static_cast<std::size_t>(t)] += static_cast<std::int64_t>(bytes);
        if (live.size() > 4) {
          mr.deallocate(stream, live.front().first, live.front().second, align);
          live.erase(live.begin());
        }
        if (i % 100 == 0) {
          auto const c = mr.get_bytes_counter();  // readers run alongside the writers
          if (c.peak < c.value) {
            ++inconsistent;  // Catch's assertions are not thread-safe: count, check after
          }
        }
      }
      for (auto const& [ptr, bytes] : live) {
        mr.deallocate(stream, ptr, bytes, align);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::int64_t total{0};
  for (auto b : bytes_of) {
    total += b;
  }
  CHECK(inconsistent == 0);
  auto const bytes  = mr.get_bytes_counter();
  auto const allocs = mr.get_allocations_counter();
  CHECK(bytes.value == 0);
  CHECK(bytes.total == total);
  CHECK(bytes.peak <= num_threads * 5 * 4096);
  CHECK(allocs.value == 0);
  CHECK(allocs.total == num_threads * per_thread);
  CHECK(allocs.peak >= 5);
  CHECK(allocs.peak <= num_threads * 5);
}
