// pool_memory_resource's shards: when the pool shards (contention, never for one thread), that
// children's blocks are freed to their owner from any stream, that memory left free in one
// child's pieces serves another child once memory runs out, and that release() and destruction
// give everything back. The stress and fault-injection suites run a sharded pool too.
#include "../utilities/device_kernels.hpp"
#include "../utilities/shard_churn.hpp"
#include "../utilities/test_resources.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::mr::cuda_memory_resource;
using rmm::mr::pool_memory_resource;
using impl_t              = rmm::mr::detail::pool_memory_resource_impl;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

impl_t& state(pool_memory_resource const& pool) {
  return rmm::mr::detail::shared_state<impl_t>(pool);
}

using rmm::test::shard_churn;
constexpr std::size_t churn_bytes = 256 * KiB;  // the largest request of shard_churn here

}  // namespace

TEST_CASE("pool shards: one thread on many streams never shards", "[gpu][pool][shards]") {
  pool_memory_resource pool{cuda_memory_resource{}, 0};
  std::vector<rmm::cuda_stream> streams(8);
  for (unsigned i = 0; i < 8; ++i) {
    shard_churn(pool, streams[i].view(), i, 20000, churn_bytes);
  }
  CHECK_FALSE(state(pool).sharded());
  CHECK(state(pool).num_children() == 0);
}

TEST_CASE("pool shards: threads contending for the pool make it shard", "[gpu][pool][shards]") {
  pool_memory_resource pool{cuda_memory_resource{}, 0};
  constexpr int num_threads = 16;
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      rmm::cuda_stream stream;
      // Until the pool shards (the condition under test), at most 400,000 operations a thread.
      total +=
          shard_churn(pool, stream.view(), static_cast<unsigned>(t), 400000, churn_bytes, &stop);
      if (state(pool).sharded()) {
        // Now on a child.
        shard_churn(pool, stream.view(), static_cast<unsigned>(t + 100), 2000, churn_bytes);
        stop = true;
      }
      stream.synchronize();
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  INFO("operations before the threads stopped: " << total.load());
  CHECK(state(pool).sharded());
  CHECK(state(pool).num_children() > 0);
  pool.release();
  CHECK(pool.free_bytes() == pool.pool_size());
}

TEST_CASE("pool shards: blocks freed on other streams go back to the shard that owns them",
          "[gpu][pool][shards]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    pool_memory_resource pool{counting, 0};
    state(pool).enable_sharding();
    REQUIRE(state(pool).sharded());
    rmm::cuda_stream a;
    rmm::cuda_stream b;
    std::vector<std::pair<void*, std::size_t>> from_a;
    for (std::size_t i = 1; i <= 64; ++i) {
      from_a.emplace_back(pool.allocate(a, i * 4 * KiB, 256), i * 4 * KiB);
      rmm::test::fill_pattern(from_a.back().first, from_a.back().second, 1, a.value());
    }
    void* on_b = pool.allocate(b, 8 * MiB, 256);  // b's child
    CHECK(state(pool).num_children() == 2);
    a.synchronize();
    for (auto const& [p, n] : from_a) {  // freed on b, into a's child (b's slot there)
      CHECK(rmm::test::count_pattern_mismatches(p, n, 1, b.value()) == 0);
      pool.deallocate(b, p, n, 256);
    }
    pool.deallocate(a, on_b, 8 * MiB, 256);
    b.synchronize();
    // Everything is free: the children's pieces and the root's free space add up to the pool.
    CHECK(pool.free_bytes() == pool.pool_size());
    pool.release();
    CHECK(pool.pool_size() == 0);
    CHECK(counting.counts().bytes_outstanding == 0);
    // And it serves again afterwards, from both children.
    void* p = pool.allocate(a, MiB, 256);
    void* q = pool.allocate(b, MiB, 256);
    pool.deallocate(a, p, MiB, 256);
    pool.deallocate(b, q, MiB, 256);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().allocations == counting.counts().deallocations);
}

TEST_CASE("pool shards: memory left free in one child serves another when memory runs out",
          "[gpu][pool][shards]") {
  // A 64 MiB cap: child A borrows most of it, frees it all; child B then needs 48 MiB, which the
  // root can only have once A gives its free pieces back.
  pool_memory_resource pool{cuda_memory_resource{}, 0, 64 * MiB};
  state(pool).enable_sharding();
  rmm::cuda_stream a;
  rmm::cuda_stream b;
  std::vector<void*> blocks;
  for (int i = 0; i < 12; ++i) {
    blocks.push_back(pool.allocate(a, 4 * MiB, 256));
  }
  for (void* p : blocks) {
    pool.deallocate(a, p, 4 * MiB, 256);
  }
  void* big = pool.allocate(b, 48 * MiB, 256);
  rmm::test::fill_pattern(big, 48 * MiB, 9, b.value());
  CHECK(rmm::test::count_pattern_mismatches(big, 48 * MiB, 9, b.value()) == 0);
  CHECK(pool.pool_size() <= 64 * MiB);
  // Beyond the cap, the report names the shard and the root.
  try {
    void* p = pool.allocate(a, 32 * MiB, 256);
    pool.deallocate(a, p, 32 * MiB, 256);
    FAIL("expected rmm::out_of_memory");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK(what.find("shard") != std::string::npos);
    CHECK(what.find("root") != std::string::npos);
    CHECK(what.find("33554432") != std::string::npos);  // the request
  }
  pool.deallocate(b, big, 48 * MiB, 256);
}

TEST_CASE("pool shards: an expandable pool never shards", "[gpu][pool][shards][vmm]") {
  if (rmm::test::vmm_unavailable()) {
    return;
  }
  pool_memory_resource pool{rmm::mr::virtual_memory_resource{}, 0};
  state(pool).enable_sharding();
  CHECK_FALSE(state(pool).sharded());
}
