// pool_memory_resource::snapshot() over the simulated upstream (no GPU: a pool used from one
// stream makes no CUDA call): blocks cover each chunk exactly, allocated blocks are exactly the
// live allocations, and the totals agree with the pool's own statistics, over seeded random
// programs; the JSON form carries the same numbers.
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/memory_snapshot.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>

#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using rmm::mr::memory_snapshot;
using rmm::mr::pool_memory_resource;
using rmm::mr::simulated_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20U;

// Checks the snapshot against the live allocations (address -> rounded size) and the pool.
void check_snapshot(memory_snapshot const& snap,
                    pool_memory_resource const& pool,
                    std::map<std::uintptr_t, std::size_t> const& live) {
  std::map<std::uintptr_t, std::size_t> allocated;
  for (auto const& c : snap.chunks) {
    CHECK(c.shard == 0);  // one thread never shards
    std::size_t covered = 0;
    for (auto const& b : c.blocks) {
      CHECK(b.offset == covered);  // in order, no gap, no overlap
      covered += b.size;
      if (b.allocated) {
        allocated.emplace(c.base + b.offset, b.size);
        CHECK(b.stream == 0);
      }
    }
    CHECK(covered == c.size);
  }
  CHECK(allocated == live);
  CHECK(snap.total_bytes() == pool.pool_size());
  CHECK(snap.free_bytes() == pool.free_bytes());
  CHECK(snap.largest_free_block() == pool.largest_free_block());
}

}  // namespace

TEST_CASE("pool snapshot: blocks and totals match the live allocations", "[snapshot][simulated]") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    simulated_memory_resource upstream{std::size_t{64} << 30U};
    pool_memory_resource pool{upstream, 0};
    cuda::stream_ref const stream = rmm::cuda_stream_view{};
    std::mt19937_64 rng{seed};
    std::map<std::uintptr_t, std::size_t> live;  // address -> size as rounded by the pool
    std::map<std::uintptr_t, std::size_t> asked;
    for (int step = 0; step < 400; ++step) {
      if (live.empty() || rng() % 3 != 0) {
        std::size_t const n = 1 + rng() % (48 * MiB);
        auto const p        = reinterpret_cast<std::uintptr_t>(pool.allocate(stream, n, 256));
        live[p]             = (n + 255) / 256 * 256;
        asked[p]            = n;
      } else {
        auto it = std::next(live.begin(), static_cast<std::ptrdiff_t>(rng() % live.size()));
        pool.deallocate(stream, reinterpret_cast<void*>(it->first), asked[it->first], 256);
        asked.erase(it->first);
        live.erase(it);
      }
      if (step % 50 == 0) {
        check_snapshot(pool.snapshot(), pool, live);
      }
    }
    check_snapshot(pool.snapshot(), pool, live);
    for (auto const& [p, n] : asked) {
      pool.deallocate(stream, reinterpret_cast<void*>(p), n, 256);
    }
    memory_snapshot const empty = pool.snapshot();
    CHECK(empty.free_bytes() == empty.total_bytes());
  }
}

TEST_CASE("pool snapshot: the JSON form", "[snapshot][simulated]") {
  simulated_memory_resource upstream{std::size_t{1} << 30U};
  pool_memory_resource pool{upstream, 0};
  cuda::stream_ref const stream = rmm::cuda_stream_view{};
  void* a                       = pool.allocate(stream, 1000, 256);
  memory_snapshot const snap    = pool.snapshot();
  REQUIRE(snap.chunks.size() == 1);
  auto const& c = snap.chunks.front();
  REQUIRE(c.blocks.size() == 2);  // the allocation, then the rest of the chunk, free
  CHECK(c.blocks[0].allocated);
  CHECK(c.blocks[0].size == 1024);
  CHECK_FALSE(c.blocks[1].allocated);
  std::string const json = snap.to_json();
  CHECK(json.find("\"total_bytes\":" + std::to_string(c.size)) != std::string::npos);
  CHECK(json.find("\"largest_free_block\":" + std::to_string(c.size - 1024)) != std::string::npos);
  CHECK(json.find("\"base\":" + std::to_string(c.base)) != std::string::npos);
  CHECK(json.find("[0,1024,1,0]") != std::string::npos);
  // The rest of the chunk was carved for the stream: its free part belongs to that stream (as
  // the pool names it: the legacy default stream 0 becomes cudaStreamLegacy).
  auto const handle =
      reinterpret_cast<std::uintptr_t>(rmm::mr::detail::stream_key::of(stream).handle);
  CHECK(handle != 0);
  CHECK(c.blocks[1].stream == handle);
  CHECK(json.find("[1024," + std::to_string(c.size - 1024) + ",0," + std::to_string(handle) +
                  "]") != std::string::npos);
  pool.deallocate(stream, a, 1000, 256);
}
