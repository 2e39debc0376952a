// simulated_memory_resource: addresses only, a capacity, statistics; no CUDA call, so these run
// without a GPU. Also which suballocators run over it without a GPU (docs/replay.md).
#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using rmm::mr::simulated_memory_resource;
constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
cuda::stream_ref const stream{cudaStream_t{nullptr}};

}  // namespace

TEST_CASE("simulated_memory_resource: concepts and properties", "[simulated]") {
  STATIC_REQUIRE(cuda::mr::resource_with<simulated_memory_resource, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(cuda::has_property<simulated_memory_resource, cuda::mr::host_accessible>);
  simulated_memory_resource a{1 << 20};
  simulated_memory_resource copy = a;
  CHECK(copy == a);
  CHECK(simulated_memory_resource{1 << 20} != a);
  cuda::mr::any_resource<cuda::mr::device_accessible> any{a};
  void* p = any.allocate(stream, 1000, align);
  CHECK(a.current_bytes() == 1000);  // the any_resource's copy shares the state
  any.deallocate(stream, p, 1000, align);
  CHECK(a.current_bytes() == 0);
}

TEST_CASE("simulated_memory_resource: the out-of-memory report", "[simulated][oom]") {
  simulated_memory_resource mr{1000};
  void* a = mr.allocate(stream, 700, align);
  try {
    void* b = mr.allocate(stream, 301, align);
    mr.deallocate(stream, b, 301, align);
    FAIL("701 bytes over a capacity of 1000");
  } catch (rmm::out_of_memory const& e) {
    REQUIRE(e.report() != nullptr);
    auto const& r = *e.report();
    CHECK(r.resource == "simulated_memory_resource");
    CHECK(r.requested_bytes == 301);
    CHECK(r.reason == "700 of the capacity of 1000 bytes are in use");
    CHECK(r.used_bytes == std::size_t{700});
    CHECK(r.free_bytes == std::size_t{300});
    CHECK(r.largest_free_block == std::size_t{300});
    CHECK(r.maximum_bytes == std::size_t{1000});
    CHECK_FALSE(r.reserved_bytes);
    CHECK_FALSE(r.device);  // no CUDA call, not even for the report
    CHECK_FALSE(r.stream);
    CHECK(std::string{e.what()} ==
          "std::bad_alloc: out_of_memory: simulated_memory_resource: cannot allocate 301 bytes: "
          "700 of the capacity of 1000 bytes are in use [used 700 bytes; free 300 bytes; largest "
          "free block 300 bytes; maximum 1000 bytes]");
  }
  mr.deallocate(stream, a, 700, align);
}

TEST_CASE("simulated_memory_resource: capacity, statistics, misuse", "[simulated]") {
  simulated_memory_resource mr{1000};
  CHECK(mr.allocate_sync(0) == nullptr);
  void* a = mr.allocate(stream, 600, align);
  void* b = mr.allocate(stream, 400, align);
  CHECK(a != nullptr);
  CHECK(b != a);
  CHECK(rmm::is_pointer_aligned(a, align));
  CHECK(rmm::is_pointer_aligned(b, align));
  CHECK_THROWS_AS(mr.allocate(stream, 1, align), rmm::out_of_memory);
  CHECK_THROWS_AS(mr.allocate(stream, 10, 3), rmm::logic_error);
  mr.deallocate(stream, b, 399, align);  // wrong size: counted, ignored
  mr.deallocate(stream, b, 400, align);
  void* c = mr.allocate(stream, 400, 4096);
  CHECK(rmm::is_pointer_aligned(c, 4096));
  auto const s = mr.statistics();
  CHECK(s.capacity == 1000);
  CHECK(s.current_bytes == 1000);
  CHECK(s.peak_bytes == 1000);
  CHECK(s.allocations == 3);
  CHECK(s.failed_allocations == 1);
  CHECK(s.mismatched_frees == 1);
  mr.deallocate(stream, a, 600, align);
  mr.deallocate(stream, c, 400, align);
  CHECK(mr.current_bytes() == 0);
  CHECK(mr.peak_bytes() == 1000);
}

TEST_CASE("simulated_memory_resource: random workload keeps addresses disjoint", "[simulated]") {
  std::mt19937_64 rng{42};
  simulated_memory_resource mr{std::size_t{64} << 20};
  std::map<std::uintptr_t, std::size_t> live;  // address -> size
  std::size_t bytes = 0;
  std::size_t peak  = 0;
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      std::size_t const size = 1 + rng() % (std::size_t{1} << (rng() % 20));
      void* p                = nullptr;
      try {
        p = mr.allocate(stream, size, align);
      } catch (rmm::out_of_memory const&) {
        CHECK(bytes + size > mr.capacity());
        continue;
      }
      auto const address = reinterpret_cast<std::uintptr_t>(p);
      auto const next    = live.lower_bound(address);
      if (next != live.end()) {
        REQUIRE(address + size <= next->first);
      }
      if (next != live.begin()) {
        auto const prev = std::prev(next);
        REQUIRE(prev->first + prev->second <= address);
      }
      live.emplace(address, size);
      bytes += size;
      peak = std::max(peak, bytes);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % live.size()));
      mr.deallocate(stream, reinterpret_cast<void*>(it->first), it->second, align);
      bytes -= it->second;
      live.erase(it);
    }
    REQUIRE(mr.current_bytes() == bytes);
  }
  CHECK(mr.peak_bytes() == peak);
  CHECK(mr.statistics().mismatched_frees == 0);
}

// Without a GPU: the pool with initial size 0 on one ordinary stream makes no CUDA call that
// can fail; it grows from the simulated upstream and stops at its maximum.
TEST_CASE("pool_memory_resource over simulated_memory_resource, no GPU needed", "[simulated]") {
  simulated_memory_resource up{std::size_t{256} << 20};
  std::vector<void*> ptrs;
  {
    rmm::mr::pool_memory_resource pool{up, 0, std::size_t{64} << 20};
    for (int i = 0; i < 60; ++i) {
      ptrs.push_back(pool.allocate(stream, std::size_t{1} << 20, align));
    }
    CHECK(pool.pool_size() <= (std::size_t{64} << 20));
    CHECK(up.current_bytes() == pool.pool_size());
    CHECK_THROWS_AS(pool.allocate(stream, std::size_t{32} << 20, align), rmm::out_of_memory);
    for (void* p : ptrs) {
      pool.deallocate(stream, p, std::size_t{1} << 20, align);
    }
    void* big = pool.allocate(stream, std::size_t{48} << 20, align);
    pool.deallocate(stream, big, std::size_t{48} << 20, align);
  }
  CHECK(up.current_bytes() == 0);
  CHECK(up.statistics().mismatched_frees == 0);
}

// binning_memory_resource (its fixed_size bins synchronise the stream when they take a chunk:
// CCCL's stream_ref::sync() terminates the process without a device) and arena_memory_resource
// (synchronises the default stream at construction) need a GPU even over this upstream.

TEST_CASE("arena_memory_resource: an arena_size above the stream arenas' maximum is rejected first",
          "[simulated][arena]") {
  // Checked before the upstream is asked (so this runs without a GPU): the stream arenas' max tree
  // keeps sizes as 32-bit counts of 256-byte units.
  using rmm::mr::detail::arena::chunk_stream_arena;
  rmm::mr::simulated_memory_resource up{std::size_t{4} << 40U};
  std::size_t const over = chunk_stream_arena::max_arena_size + 256;
  CHECK_THROWS_AS(rmm::mr::arena_memory_resource(up, over), rmm::logic_error);
  CHECK_THROWS_WITH(
      rmm::mr::arena_memory_resource(up, over),
      Catch::Contains("arena_size " + std::to_string(over) + " is above the maximum"));
  CHECK(up.current_bytes() == 0);
}
