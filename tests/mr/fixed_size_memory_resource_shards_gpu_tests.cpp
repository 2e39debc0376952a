// fixed_size_memory_resource's shards: when it shards (contention, never for one thread), that
// children's blocks are freed to their owner from any stream, that chunks left free in one child
// serve another when the upstream runs out, that the out-of-memory report names both, and that
// destruction gives every chunk back. The stress and fault-injection suites run a sharded
// fixed_size too.
#include "../utilities/device_kernels.hpp"
#include "../utilities/shard_churn.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::cuda_memory_resource;
using rmm::mr::fixed_size_memory_resource;
using impl_t              = rmm::mr::detail::fixed_size_memory_resource_impl;
constexpr std::size_t KiB = 1024;

impl_t& state(fixed_size_memory_resource const& mr) {
  return rmm::mr::detail::shared_state<impl_t>(mr);
}

using rmm::test::shard_churn;
constexpr std::size_t churn_bytes = 64 * KiB;  // the largest request of shard_churn here

}  // namespace

TEST_CASE("fixed_size shards: one thread on many streams never shards",
          "[gpu][fixed_size][shards]") {
  fixed_size_memory_resource mr{cuda_memory_resource{}, 64 * KiB, 32};
  std::vector<rmm::cuda_stream> streams(8);
  for (unsigned i = 0; i < 8; ++i) {
    shard_churn(mr, streams[i].view(), i, 20000, churn_bytes);
  }
  CHECK_FALSE(state(mr).sharded());
  CHECK(state(mr).num_children() == 0);
}

TEST_CASE("fixed_size shards: threads contending for the resource make it shard",
          "[gpu][fixed_size][shards]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    fixed_size_memory_resource mr{counting, 64 * KiB, 32};
    constexpr int num_threads = 16;
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> total{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) {
      threads.emplace_back([&, t] {
        rmm::cuda_stream stream;
        // Until the resource shards (or a generous bound), then a little more on the children.
        std::size_t ops = 0;
        while (!state(mr).sharded() && ops < 4000000) {
          ops += shard_churn(mr, stream.view(), static_cast<unsigned>(t), 1000, churn_bytes);
        }
        ops += shard_churn(mr, stream.view(), static_cast<unsigned>(t) + 100, 20000, churn_bytes);
        total += ops;
      });
    }
    for (auto& th : threads) {
      th.join();
    }
    stop = true;
    INFO("operations: " << total.load());
    CHECK(state(mr).sharded());
    CHECK(state(mr).num_children() >= 2);
    // Every block is back: the shards' free blocks add up to what the resource holds.
    CHECK(mr.free_blocks() == mr.capacity_blocks());
    CHECK(counting.counts().bytes_outstanding == mr.capacity_blocks() * 64 * KiB);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().allocations == counting.counts().deallocations);
}

TEST_CASE("fixed_size shards: blocks freed on other streams go back to the shard that owns them",
          "[gpu][fixed_size][shards]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    fixed_size_memory_resource mr{counting, 64 * KiB, 16};
    void* from_root = mr.allocate(rmm::cuda_stream_view{}, KiB, 256);  // before sharding
    state(mr).enable_sharding();
    REQUIRE(state(mr).sharded());
    rmm::cuda_stream a;
    rmm::cuda_stream b;
    std::vector<void*> from_a;
    for (std::uint32_t i = 0; i < 40; ++i) {  // 40 blocks: a's child borrows three chunks
      from_a.push_back(mr.allocate(a, 64 * KiB, 256));
      rmm::test::fill_pattern(from_a.back(), 64 * KiB, i, a.value());
    }
    void* on_b = mr.allocate(b, 64 * KiB, 256);  // b's child
    CHECK(state(mr).num_children() == 2);
    CHECK(mr.capacity_blocks() == 16 + 3 * 16 + 16);  // the root's chunk, a's three, b's one
    std::set<void*> distinct(from_a.begin(), from_a.end());
    distinct.insert(on_b);
    distinct.insert(from_root);
    CHECK(distinct.size() == 42);
    a.synchronize();
    for (std::uint32_t i = 0; i < from_a.size(); ++i) {  // freed on b, into a's child
      CHECK(rmm::test::count_pattern_mismatches(from_a[i], 64 * KiB, i, b.value()) == 0);
      mr.deallocate(b, from_a[i], 64 * KiB, 256);
    }
    mr.deallocate(a, on_b, 64 * KiB, 256);
    mr.deallocate(b, from_root, KiB, 256);  // the root's block, freed after sharding
    b.synchronize();
    CHECK(mr.free_blocks() == mr.capacity_blocks());
    // A block freed into a shard that does not own it would be refused (and logged): the counts
    // would not add up. Destruction then gives every chunk back (checked below).
    CHECK(mr.capacity_blocks() == 16 + 3 * 16 + 16);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().allocations == counting.counts().deallocations);
}

TEST_CASE("fixed_size shards: chunks left free in one child serve another when memory runs out",
          "[gpu][fixed_size][shards]") {
  // Room upstream for four chunks of 16 blocks of 64 KiB: the root's first and three more.
  constexpr std::size_t chunk = 16 * 64 * KiB;
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    rmm::mr::limiting_resource_adaptor limited{counting, 4 * chunk};
    fixed_size_memory_resource mr{limited, 64 * KiB, 16};
    state(mr).enable_sharding();
    rmm::cuda_stream a;
    rmm::cuda_stream b;
    std::vector<void*> blocks;
    // a's child takes the root's free chunk first (lent after a synchronisation), then the three
    // chunks the upstream has left.
    for (int i = 0; i < 64; ++i) {
      blocks.push_back(mr.allocate(a, 64 * KiB, 256));
    }
    CHECK(counting.counts().bytes_outstanding == 4 * chunk);
    CHECK(state(mr).shard_capacities() == std::vector<std::size_t>{0, 64});
    for (void* p : blocks) {
      mr.deallocate(a, p, 64 * KiB, 256);
    }
    blocks.clear();
    // b's child cannot borrow from the upstream: a's child gives its free chunks back first.
    for (std::uint32_t i = 0; i < 64; ++i) {
      blocks.push_back(mr.allocate(b, 64 * KiB, 256));
      rmm::test::fill_pattern(blocks.back(), 64 * KiB, i, b.value());
    }
    for (std::uint32_t i = 0; i < blocks.size(); ++i) {
      CHECK(rmm::test::count_pattern_mismatches(blocks[i], 64 * KiB, i, b.value()) == 0);
    }
    CHECK(counting.counts().bytes_outstanding == 4 * chunk);
    CHECK(state(mr).shard_capacities() == std::vector<std::size_t>{0, 0, 64});
    CHECK(mr.free_blocks() == 0);
    // Beyond that, the report names the shard and the root, and every block the resource holds.
    try {
      void* p = mr.allocate(a, 64 * KiB, 256);
      mr.deallocate(a, p, 64 * KiB, 256);
      FAIL("expected rmm::out_of_memory");
    } catch (rmm::out_of_memory const& e) {
      std::string const what = e.what();
      CHECK_THAT(what, Contains("in shard 1") && Contains("the root: all 0 blocks of 65536 bytes"));
      REQUIRE(e.report() != nullptr);
      CHECK(e.report()->reserved_bytes == 4 * chunk);
      CHECK(e.report()->used_bytes == 4 * chunk);
      CHECK(e.report()->free_bytes == 0);
      CHECK(e.report()->requested_bytes == 64 * KiB);
    }
    for (void* p : blocks) {
      mr.deallocate(b, p, 64 * KiB, 256);
    }
    b.synchronize();
    CHECK(mr.free_blocks() == mr.capacity_blocks());
  }
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("fixed_size shards: children reuse the chunks the root grew to before sharding",
          "[gpu][fixed_size][shards]") {
  constexpr std::size_t chunk = 16 * 64 * KiB;
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    fixed_size_memory_resource mr{counting, 64 * KiB, 16};
    rmm::cuda_stream a;
    rmm::cuda_stream b;
    std::vector<void*> blocks;
    for (std::uint32_t i = 0; i < 48; ++i) {  // the root grows to three chunks
      blocks.push_back(mr.allocate(a, 64 * KiB, 256));
      rmm::test::fill_pattern(blocks.back(), 64 * KiB, i, a.value());
    }
    void* kept = blocks.back();  // one block stays in use: its chunk stays with the root
    blocks.pop_back();
    for (void* p : blocks) {
      mr.deallocate(a, p, 64 * KiB, 256);  // freed on a, whose work may still run
    }
    CHECK(counting.counts().bytes_outstanding == 3 * chunk);
    state(mr).enable_sharding();
    // b's child takes the root's two chunks with no block in use (after waiting for the device),
    // not two new ones from the upstream.
    std::vector<void*> on_b;
    for (std::uint32_t i = 0; i < 32; ++i) {
      on_b.push_back(mr.allocate(b, 64 * KiB, 256));
      rmm::test::fill_pattern(on_b.back(), 64 * KiB, 100 + i, b.value());
    }
    CHECK(counting.counts().bytes_outstanding == 3 * chunk);
    CHECK(mr.capacity_blocks() == 48);
    CHECK(state(mr).shard_capacities() == std::vector<std::size_t>{16, 32});  // root, b's child
    a.synchronize();  // the test's own ordering for reading a's pattern on b
    CHECK(rmm::test::count_pattern_mismatches(kept, 64 * KiB, 47, b.value()) == 0);
    for (std::uint32_t i = 0; i < on_b.size(); ++i) {
      CHECK(rmm::test::count_pattern_mismatches(on_b[i], 64 * KiB, 100 + i, b.value()) == 0);
      mr.deallocate(b, on_b[i], 64 * KiB, 256);
    }
    // And b's child serves again from its two chunks.
    void* more = mr.allocate(b, 64 * KiB, 256);
    CHECK(counting.counts().bytes_outstanding == 3 * chunk);
    mr.deallocate(b, more, 64 * KiB, 256);
    mr.deallocate(a, kept, 64 * KiB, 256);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().allocations == counting.counts().deallocations);
}
