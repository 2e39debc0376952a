// pool_memory_resource: construction checks, growth and the cap, stream-ordered reuse, the
// last-resort coalescing path, out-of-memory reports, and giving memory back upstream.
#include "../utilities/device_kernels.hpp"
#include "../utilities/messages.hpp"
#include "../utilities/test_resources.hpp"
#include "../utilities/thread_generations.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::test::logic_error_message;

using Catch::Matchers::Contains;
using rmm::mr::cuda_memory_resource;
using rmm::mr::pool_memory_resource;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// On a new thread's per-thread default stream: allocates @p bytes, starts a kernel that writes
// them after about 200 ms, frees them while it still runs, and exits. Returns the block.
void* free_in_finished_thread(pool_memory_resource& pool, std::size_t bytes) {
  void* block = nullptr;
  std::thread{[&] {
    block = pool.allocate(rmm::cuda_stream_per_thread, bytes, 256);
    rmm::test::fill_pattern_after_delay(block, bytes, 1, 200'000'000, cudaStreamPerThread);
    pool.deallocate(rmm::cuda_stream_per_thread, block, bytes, 256);
  }}.join();
  return block;
}

}  // namespace

TEST_CASE("pool: constructor checks sizes and names the bad value", "[gpu][pool]") {
  CHECK_THAT(logic_error_message([] {
               pool_memory_resource{cuda_memory_resource{}, 1000};
             }),
             Contains("initial_pool_size 1000") && Contains("multiple of 256"));
  CHECK_THAT(logic_error_message([] {
               pool_memory_resource{cuda_memory_resource{}, 0, 1000};
             }),
             Contains("maximum_pool_size 1000") && Contains("multiple of 256"));
  CHECK_THAT(logic_error_message([] {
               pool_memory_resource{cuda_memory_resource{}, 2 * MiB, MiB};
             }),
             Contains("maximum_pool_size 1048576 is below initial_pool_size 2097152"));
  pool_memory_resource empty{cuda_memory_resource{}, 0};
  CHECK(empty.pool_size() == 0);
  CHECK_FALSE(empty.maximum_pool_size().has_value());
  cuda_memory_resource upstream;
  pool_memory_resource sized{upstream, 4 * MiB, 8 * MiB};
  CHECK(sized.pool_size() == 4 * MiB);
  CHECK(sized.maximum_pool_size() == 8 * MiB);
  CHECK(sized.free_bytes() == 4 * MiB);
  CHECK(sized.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  rmm::mr::managed_memory_resource other;
  CHECK(sized.get_upstream_resource() != rmm::device_async_resource_ref{other});
}

TEST_CASE("pool: grows generously, then exactly up to the hard cap", "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 0, 100 * MiB};
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 40 * MiB, 256);
  CHECK(pool.pool_size() == 40 * MiB);  // max(request, current size / 8, 32 MiB)
  void* b = pool.allocate(stream, 50 * MiB, 256);
  CHECK(pool.pool_size() == 90 * MiB);
  void* c = pool.allocate(stream, 10 * MiB, 256);  // generous would pass the cap: exactly 10
  CHECK(pool.pool_size() == 100 * MiB);
  CHECK(pool.free_bytes() == 0);
  CHECK_THROWS_AS(pool.allocate(stream, 256, 256), rmm::out_of_memory);
  CHECK(pool.pool_size() == 100 * MiB);
  pool.deallocate(stream, c, 10 * MiB, 256);
  void* d = pool.allocate(stream, 10 * MiB, 256);
  CHECK(d == c);  // same stream: the block just freed
  for (auto [p, n] : {std::pair{a, 40 * MiB}, std::pair{b, 50 * MiB}, std::pair{d, 10 * MiB}}) {
    pool.deallocate(stream, p, n, 256);
  }
  CHECK(pool.free_bytes() == 100 * MiB);
}

TEST_CASE("pool: over a plain upstream, growth is an eighth of the pool once that passes 32 MiB",
          "[gpu][pool]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  pool_memory_resource pool{counting, 0};
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 320 * MiB, 256);
  CHECK(pool.pool_size() == 320 * MiB);
  void* b = pool.allocate(stream, MiB, 256);
  CHECK(pool.pool_size() == 360 * MiB);  // 320 + 320 / 8
  void* c = pool.allocate(stream, MiB, 256);
  CHECK(pool.pool_size() == 360 * MiB);  // served from that chunk
  CHECK(counting.counts().allocations == 2);
  for (void* p : {b, c}) {
    pool.deallocate(stream, p, MiB, 256);
  }
  pool.deallocate(stream, a, 320 * MiB, 256);
  pool.release();  // both chunks are free: both go back
  CHECK(pool.pool_size() == 0);
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK_FALSE(pool.grows_in_place());
}

TEST_CASE("pool: out of memory states request, size, maximum, free and largest block",
          "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 8 * MiB, 8 * MiB};
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 3 * MiB, 256);
  try {
    static_cast<void>(pool.allocate(stream, 6 * MiB + 1, 256));
    FAIL("no out_of_memory");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK_THAT(what, Contains("6291457 bytes"));      // requested
    CHECK_THAT(what, Contains("pool size 8388608"));  // size
    CHECK_THAT(what, Contains("maximum 8388608"));    // cap
    CHECK_THAT(what, Contains("free 5242880"));       // free bytes
    CHECK_THAT(what, Contains("largest free block 5242880"));
    CHECK_THAT(what, Contains("device 0"));
  }
  pool.deallocate(stream, a, 3 * MiB, 256);
}

TEST_CASE("pool: a block freed on a stream is reused on it at once", "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 16 * MiB};
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, MiB, 256);
  rmm::test::fill_pattern(a, MiB, 1, stream.value());
  pool.deallocate(stream, a, MiB, 256);
  void* b = pool.allocate(stream, MiB, 256);
  CHECK(b == a);
  rmm::test::fill_pattern(b, MiB, 2, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(b, MiB, 2, stream.value()) == 0);
  pool.deallocate(stream, b, MiB, 256);
}

TEST_CASE("pool: reuse from another stream waits for the freeing stream's work", "[gpu][pool]") {
  // The block was freed on s1 while a slow kernel on s1 still writes it. s2 takes it; unless s2
  // waits for s1's event, the slow kernel overwrites s2's pattern.
  pool_memory_resource pool{cuda_memory_resource{}, 8 * MiB, 8 * MiB};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* small = pool.allocate(s2, 256, 256);  // s2 is known before s1 frees: s1 records events
  void* a     = pool.allocate(s1, 4 * MiB, 256);
  rmm::test::fill_pattern_after_delay(a, 4 * MiB, 1, 200'000'000, s1.value());  // ~200 ms
  pool.deallocate(s1, a, 4 * MiB, 256);
  void* b = pool.allocate(s2, 4 * MiB, 256);
  CHECK(b == a);
  rmm::test::fill_pattern(b, 4 * MiB, 2, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(b, 4 * MiB, 2, s2.value()) == 0);
  pool.deallocate(s2, b, 4 * MiB, 256);
  pool.deallocate(s2, small, 256, 256);
}

TEST_CASE(
    "pool: with two streams a small free waits in its stream's batch, taken back before growth",
    "[gpu][pool]") {
  constexpr std::size_t KiB = 1024;
  pool_memory_resource pool{cuda_memory_resource{}, MiB, MiB};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  rmm::cuda_stream busy;
  void* small = pool.allocate(s2, 256, 256);  // a second stream: small frees are batched
  void* spin  = pool.allocate(busy, 256, 256);
  void* a     = pool.allocate(s1, 512 * KiB, 256);
  rmm::test::fill_pattern(a, 512 * KiB, 1, s1.value());
  pool.deallocate(s1, a, 512 * KiB, 256);
  CHECK(pool.free_bytes() == MiB - 512);                      // the batch counts as free...
  CHECK(pool.largest_free_block() == MiB - 512 - 512 * KiB);  // ...but is not in the list
  // A kernel on another stream runs for 300 ms: the last resort's device synchronisation would
  // wait for it. s1 needs more than the list holds: its batch joins its list first, with a
  // record on s1 only, and a merges with the free rest.
  rmm::test::fill_pattern_after_delay(spin, 256, 3, 300'000'000, busy.value());
  void* b = pool.allocate(s1, 768 * KiB, 256);
  CHECK(cudaStreamQuery(busy.value()) == cudaErrorNotReady);  // served without synchronising
  CHECK(b == a);
  rmm::test::fill_pattern(b, 768 * KiB, 2, s1.value());
  CHECK(rmm::test::count_pattern_mismatches(b, 768 * KiB, 2, s1.value()) == 0);
  pool.deallocate(s1, b, 768 * KiB, 256);
  pool.deallocate(busy, spin, 256, 256);
  pool.deallocate(s2, small, 256, 256);
}

TEST_CASE("pool: a per-thread default stream alone records nothing, yet another stream waits",
          "[gpu][pool]") {
  // Thread A's per-thread default stream is the pool's only stream, so its free records no event;
  // a second stream that needs the block must synchronise first, or A's slow kernel (still
  // running after A has exited) overwrites its pattern.
  pool_memory_resource pool{cuda_memory_resource{}, 4 * MiB, 4 * MiB};
  void* const a = free_in_finished_thread(pool, 4 * MiB);
  rmm::cuda_stream s2;
  void* b = pool.allocate(s2, 4 * MiB, 256);
  CHECK(b == a);
  rmm::test::fill_pattern(b, 4 * MiB, 2, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(b, 4 * MiB, 2, s2.value()) == 0);
  pool.deallocate(s2, b, 4 * MiB, 256);
}

TEST_CASE("pool: new threads' per-thread streams reuse what finished threads left batched",
          "[gpu][pool]") {
  // With two streams in use, each thread's 24 frees of 256 KiB (6 MiB) wait in its per-thread
  // stream's batch, which only that stream could take back. Before finished threads' slots were
  // reclaimed, every thread's batch stayed out of reach once the thread had exited, and the pool
  // grew by about 6 MiB a thread (40 threads: over 200 MiB).
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  pool_memory_resource pool{counting, 0};
  rmm::cuda_stream other;
  void* held = pool.allocate(other, 256, 256);  // a second stream: small frees are batched
  rmm::test::fill_pattern(held, 256, 9, other.value());
  std::size_t after_first = 0;
  std::size_t const mismatches =
      rmm::test::run_thread_generations(pool, 40, 24, 256 * KiB, [&](int generation) {
        if (generation == 0) {
          after_first = counting.counts().bytes_outstanding.load();
        }
      });
  CHECK(mismatches == 0);
  CHECK(counting.counts().bytes_outstanding.load() == after_first);  // no growth after the first
  CHECK(rmm::test::count_pattern_mismatches(held, 256, 9, other.value()) == 0);
  pool.deallocate(other, held, 256, 256);
}

TEST_CASE("pool: a finished thread's batched block reaches a new thread after its work",
          "[gpu][pool]") {
  // Thread A frees a block into its batch (two streams are in use) while its slow kernel still
  // writes it, and exits. Thread B's per-thread stream gets the same block only after the device
  // synchronisation that vacates A's slot; without it A's kernel would overwrite B's pattern.
  pool_memory_resource pool{cuda_memory_resource{}, 4 * MiB, 4 * MiB};
  rmm::cuda_stream other;
  void* held             = pool.allocate(other, 256, 256);
  void* const a          = free_in_finished_thread(pool, 512 * KiB);
  void* b                = nullptr;
  std::size_t mismatches = 0;
  std::thread{[&] {
    b = pool.allocate(rmm::cuda_stream_per_thread, 512 * KiB, 256);
    rmm::test::fill_pattern(b, 512 * KiB, 2, cudaStreamPerThread);
    cudaDeviceSynchronize();  // A's kernel, if it was not ordered first, has now overwritten b
    mismatches = rmm::test::count_pattern_mismatches(b, 512 * KiB, 2, cudaStreamPerThread);
    pool.deallocate(rmm::cuda_stream_per_thread, b, 512 * KiB, 256);
  }}.join();
  CHECK(b == a);
  CHECK(mismatches == 0);
  pool.deallocate(other, held, 256, 256);
}

TEST_CASE("pool: a stream destroyed after freeing does not break reuse", "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 4 * MiB, 4 * MiB};
  rmm::cuda_stream s2;  // made first, so that it cannot receive the destroyed stream's handle
  void* a = nullptr;
  {
    rmm::cuda_stream gone;
    a = pool.allocate(gone, 4 * MiB, 256);
    rmm::test::fill_pattern_after_delay(a, 4 * MiB, 1, 100'000'000, gone.value());
    pool.deallocate(gone, a, 4 * MiB, 256);
  }  // destroyed with its kernel still running
  void* b = pool.allocate(s2, 4 * MiB, 256);
  CHECK(b == a);
  rmm::test::fill_pattern(b, 4 * MiB, 2, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(b, 4 * MiB, 2, s2.value()) == 0);
  pool.deallocate(s2, b, 4 * MiB, 256);
}

TEST_CASE("pool: blocks freed on different streams coalesce in the last resort", "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 4 * MiB, 4 * MiB};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  rmm::cuda_stream s3;
  void* a = pool.allocate(s1, 2 * MiB, 256);
  void* b = pool.allocate(s2, 2 * MiB, 256);
  rmm::test::fill_pattern_after_delay(a, 2 * MiB, 1, 50'000'000, s1.value());
  rmm::test::fill_pattern_after_delay(b, 2 * MiB, 2, 50'000'000, s2.value());
  pool.deallocate(s1, a, 2 * MiB, 256);
  pool.deallocate(s2, b, 2 * MiB, 256);
  // Neither stream's list alone holds 4 MiB and the pool is at its cap: only synchronising and
  // merging the lists (a and b are neighbours) can serve this.
  void* c = pool.allocate(s3, 4 * MiB, 256);
  REQUIRE(c != nullptr);
  rmm::test::fill_pattern(c, 4 * MiB, 3, s3.value());
  CHECK(rmm::test::count_pattern_mismatches(c, 4 * MiB, 3, s3.value()) == 0);
  pool.deallocate(s3, c, 4 * MiB, 256);
}

TEST_CASE("pool: gives every upstream block back on destruction", "[gpu][pool]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    pool_memory_resource pool{counting, 2 * MiB};
    rmm::cuda_stream stream;
    std::vector<void*> blocks;
    for (int i = 0; i < 8; ++i) {
      blocks.push_back(pool.allocate(stream, 16 * MiB, 256));  // forces growth
    }
    CHECK(counting.counts().allocations > 1);
    for (void* p : blocks) {
      pool.deallocate(stream, p, 16 * MiB, 256);
    }
    auto copy = pool;  // copies share the state: destruction happens with the last one
    CHECK(copy.pool_size() == pool.pool_size());
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().allocations == counting.counts().deallocations);
}

TEST_CASE("pool: rejects a request larger than any pool can hold", "[gpu][pool]") {
  pool_memory_resource pool{cuda_memory_resource{}, 0};
  rmm::cuda_stream stream;
  CHECK_THROWS_AS(pool.allocate(stream, ~std::size_t{0}, 256), rmm::out_of_memory);
}
