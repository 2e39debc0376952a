/**
 * @file bitmap_stream_arena_bench_tests.cpp
 * @brief Hidden micro-benchmark ("[.][bench]", run it by name or tag) of the two stream arenas:
 * one recorded trace of random allocations and frees, replayed on stream_arena and on
 * bitmap_stream_arena; prints nanoseconds per operation. Host only, a few seconds in Release.
 *
 *   rmm_host_tests "[bench]" -s   (or: rmm_host_tests "stream arena micro-benchmark")
 */
#include <rmm/mr/detail/algorithms/arena.hpp>
#include "chunk_stream_arena_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/bitmap_stream_arena.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

namespace {

namespace arena = rmm::mr::detail::arena;

// chunk_stream_arena over the range the trace's superblocks come from (1 TiB on).
struct far_stream_arena : rmm::test::test_stream_arena {
  explicit far_stream_arena(std::size_t cache)
      : test_stream_arena{cache, std::uintptr_t{1} << 40U, std::size_t{64} << 30U} {}
};

struct op {
  enum kind_t : std::uint8_t { alloc, free, add } kind;
  std::uintptr_t addr;  // alloc: the expected result; free, add: the argument
  std::size_t bytes;
};

struct workload {
  char const* name;
  std::size_t live_target;  // blocks kept live in the steady state
  std::size_t max_small;    // bytes: most requests are 256 B .. max_small
  std::size_t max_large;    // bytes: one request in 16 is up to max_large
  std::size_t ops;
  std::size_t cache;  // bytes of entirely free superblocks each arena keeps
};

// Records a trace on bitmap_stream_arena: allocate until live_target blocks are live, then
// alternate random frees and allocations. A miss adds a superblock at a fresh address.
std::vector<op> record(workload const& w, std::uint32_t seed) {
  std::mt19937_64 rng{seed};
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng);
  };
  arena::bitmap_stream_arena a{w.cache};
  std::vector<op> trace;
  std::vector<std::pair<std::uintptr_t, std::size_t>> live;
  std::uintptr_t next = std::uintptr_t{1} << 40U;
  while (trace.size() < w.ops) {
    if (live.size() < w.live_target || pick(2) == 0) {
      std::size_t const n = 256 * (1 + pick((pick(16) == 0 ? w.max_large : w.max_small) / 256));
      auto p              = a.allocate(n);
      if (!p) {
        std::size_t const size = *arena::global_arena::superblock_size_for(n);
        a.add_superblock(next, size);
        trace.push_back(op{op::add, next, size});
        next += size;
        p = a.allocate(n);
      }
      trace.push_back(op{op::alloc, *p, n});
      live.emplace_back(*p, n);
    } else {
      std::size_t const i = pick(live.size());
      auto const [p, n]   = live[i];
      live[i]             = live.back();
      live.pop_back();
      trace.push_back(op{op::free, p, n});
      static_cast<void>(a.deallocate(p, n));
    }
  }
  return trace;
}

// Replays the trace; returns ns per allocate/deallocate call. Checks every allocation's address.
template <typename Arena>
double replay(std::vector<op> const& trace, std::size_t cache) {
  Arena a{cache};
  std::size_t calls = 0;
  bool same         = true;
  auto const start  = std::chrono::steady_clock::now();
  for (op const& o : trace) {
    switch (o.kind) {
      case op::alloc:
        same = a.allocate(o.bytes) == o.addr && same;
        break;
      case op::free:
        static_cast<void>(a.deallocate(o.addr, o.bytes));
        break;
      default:
        a.add_superblock(o.addr, o.bytes);
        break;
    }
    calls += o.kind == op::add ? 0 : 1;
  }
  auto const stop = std::chrono::steady_clock::now();
  REQUIRE(same);
  return std::chrono::duration<double, std::nano>(stop - start).count() /
         static_cast<double>(calls);
}

}  // namespace

TEST_CASE("stream arena micro-benchmark", "[.][bench]") {
  constexpr std::size_t KiB   = 1024;
  constexpr std::size_t MiB   = 1024 * KiB;
  constexpr std::size_t cache = arena::default_cache_bytes;
  for (workload const& w :
       {workload{"small (256 B-4 KiB), 1000 live", 1000, 4 * KiB, 4 * KiB, 400000, cache},
        workload{"mixed (<=64 KiB, 1/16 <=1 MiB), 2000 live", 2000, 64 * KiB, MiB, 400000, cache},
        workload{"large (<=1 MiB, 1/16 <=8 MiB), 1000 live", 1000, MiB, 8 * MiB, 200000, cache},
        workload{"large, cache 64 MiB", 1000, MiB, 8 * MiB, 200000, 64 * MiB}}) {
    auto const trace        = record(w, 12345);
    std::size_t superblocks = 0;
    for (op const& o : trace) {
      superblocks += o.kind == op::add ? 1 : 0;
    }
    // Best of three, each on a fresh arena.
    double list = 1e30;
    double bits = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      list = std::min(list, replay<far_stream_arena>(trace, w.cache));
      bits = std::min(bits, replay<arena::bitmap_stream_arena>(trace, w.cache));
    }
    std::printf(
        "%-45s superblocks added %6zu: stream_arena %7.1f ns/op, "
        "bitmap_stream_arena %7.1f ns/op\n",
        w.name,
        superblocks,
        list,
        bits);
  }
}
