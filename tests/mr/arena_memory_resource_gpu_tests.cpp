// GPU tests of arena_memory_resource: construction and argument errors, stream ordering
// (same-stream reuse, cross-stream frees, superblocks moving between streams), per-thread default
// streams, out of memory (message and log dump), and a multi-threaded stress with data checks.
// Built twice: with the legacy and with the per-thread default stream.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::arena_memory_resource;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr std::size_t A   = rmm::CUDA_ALLOCATION_ALIGNMENT;

arena_memory_resource make_arena(std::size_t size, bool dump = false) {
  return arena_memory_resource{rmm::mr::cuda_memory_resource{}, size, dump};
}

// A block's address as an integer, for checks of where blocks land.
std::uintptr_t at(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Allocates `bytes` on `s`, enqueues a fill with `seed` that starts after about `delay_ms`, and
// frees the block at once (no wait): the fill is still pending when the free returns.
void* fill_late_and_free(arena_memory_resource& mr,
                         rmm::cuda_stream const& s,
                         std::size_t bytes,
                         std::uint32_t seed,
                         std::uint64_t delay_ms = 200) {
  void* p = mr.allocate(s, bytes, A);
  rmm::test::fill_pattern_after_delay(p, bytes, seed, delay_ms * 1'000'000, s.value());
  mr.deallocate(s, p, bytes, A);
  return p;
}

}  // namespace

TEST_CASE("arena: concepts, copies share state", "[gpu][arena]") {
  STATIC_REQUIRE(cuda::mr::resource_with<arena_memory_resource, cuda::mr::device_accessible>);
  STATIC_REQUIRE(
      cuda::mr::synchronous_resource_with<arena_memory_resource, cuda::mr::device_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<arena_memory_resource>);
  auto mr   = make_arena(64 * MiB);
  auto copy = mr;
  CHECK(copy == mr);
  CHECK(make_arena(8 * MiB) != mr);
  rmm::cuda_stream stream;
  void* p = copy.allocate(stream, 1000, A);
  mr.deallocate(stream, p, 1000, A);  // freed through another copy: same state
  rmm::device_async_resource_ref ref{mr};
  void* q = ref.allocate(stream, 4 * KiB, A);
  CHECK(q == p);  // a block freed on a stream is reused first on it
  ref.deallocate(stream, q, 4 * KiB, A);
  rmm::device_async_resource_ref up = mr.get_upstream_resource();
  void* direct                      = up.allocate(stream, 256, A);
  up.deallocate(stream, direct, 256, A);
}

TEST_CASE("arena: default arena size and bad arguments", "[gpu][arena]") {
  {
    arena_memory_resource mr{rmm::mr::cuda_memory_resource{}};  // half of the free memory
    rmm::cuda_stream stream;
    void* p = mr.allocate(stream, 64 * MiB, A);
    CHECK(rmm::test::fill_and_count_mismatches(p, 64 * MiB, 7, stream.value()) == 0);
    mr.deallocate(stream, p, 64 * MiB, A);
  }
  CHECK_THROWS_AS(make_arena(0), rmm::logic_error);
  CHECK_THROWS_WITH(make_arena(0), Contains("arena_size 0 is below the minimum"));
  CHECK_THROWS_WITH(make_arena(MiB), Contains("arena_size 1048576"));
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream stream;
  CHECK_THROWS_AS(mr.allocate(stream, 1000, 3), rmm::logic_error);
  CHECK_THROWS_WITH(mr.allocate(stream, 1000, 3),
                    Contains("arena_memory_resource") && Contains("alignment 3"));
  CHECK_THROWS_WITH(mr.allocate(stream, 1000, 512), Contains("alignment 512 exceeds"));
  CHECK(mr.allocate(stream, 0, A) == nullptr);
  mr.deallocate(stream, nullptr, 0, A);
  for (std::size_t alignment = 1; alignment <= A; alignment *= 2) {
    void* p = mr.allocate(stream, 1, alignment);
    CHECK(rmm::is_pointer_aligned(p, A));
    mr.deallocate(stream, p, 1, alignment);
  }
  void* s = mr.allocate_sync(MiB, A);
  RMM_CUDA_TRY(cudaMemset(s, 0x5a, MiB));
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  mr.deallocate_sync(s, MiB, A);
}

TEST_CASE("arena: allocations on many streams are distinct and keep their data", "[gpu][arena]") {
  auto mr = make_arena(512 * MiB);
  std::vector<rmm::cuda_stream> streams(8);
  struct block {
    void* p;
    std::size_t bytes;
    std::size_t stream;
    std::uint32_t seed;
  };
  std::vector<block> blocks;
  std::mt19937 rng{11};
  std::uint32_t seed = 100;
  for (int i = 0; i < 200; ++i) {
    std::size_t const s     = static_cast<std::size_t>(rng() % streams.size());
    std::size_t const bytes = 1 + rng() % (rng() % 4 == 0 ? 8 * MiB : 64 * KiB);
    void* p                 = mr.allocate(streams[s], bytes, A);
    REQUIRE(p != nullptr);
    rmm::test::fill_pattern(p, bytes, ++seed, streams[s].value());
    blocks.push_back({p, bytes, s, seed});
  }
  for (auto const& b : blocks) {
    CHECK(rmm::test::count_pattern_mismatches(b.p, b.bytes, b.seed, streams[b.stream].value()) ==
          0);
    mr.deallocate(streams[b.stream], b.p, b.bytes, A);
  }
}

TEST_CASE("arena: cross-stream free", "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* p = mr.allocate(s1, MiB, A);
  void* q = mr.allocate(s1, MiB, A);
  rmm::test::fill_pattern(p, MiB, 1, s1.value());
  RMM_CUDA_TRY(cudaStreamSynchronize(s1.value()));
  CHECK(rmm::test::fill_and_count_mismatches(p, MiB, 2, s2.value()) ==
        0);  // used on s2, freed on s2: the block belongs to s1's arena
  mr.deallocate(s2, p, MiB, A);
  void* again = mr.allocate(s1, MiB, A);
  CHECK(again == p);  // back in s1's arena, reusable there at once
  CHECK(rmm::test::fill_and_count_mismatches(again, MiB, 3, s1.value()) == 0);
  mr.deallocate(s1, again, MiB, A);
  mr.deallocate(s2, q, MiB, A);
  // Everything is free: a request for nearly the whole arena succeeds (after reclaiming).
  void* big = mr.allocate(s2, 60 * MiB, A);
  CHECK(rmm::test::fill_and_count_mismatches(big, 60 * MiB, 4, s2.value()) == 0);
  mr.deallocate(s2, big, 60 * MiB, A);
}

TEST_CASE("arena: alone, a stream keeps the superblocks it frees, even beyond 1/64 of the arena",
          "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);  // 1/64 is 1 MiB; batches of 4 MiB
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i) {  // 40 MiB in ten batches
    blocks.push_back(mr.allocate(s1, MiB, A));
  }
  CHECK(rmm::test::fill_and_count_mismatches(blocks.front(), MiB, 76, s1.value()) == 0);
  for (void* b : blocks) {
    mr.deallocate(s1, b, MiB, A);
  }
  // Kept by s1's arena (alone, its share is the whole arena): the global arena serves another
  // stream from the rest, after it.
  void* q = mr.allocate(s2, 20 * MiB, A);
  CHECK(q == static_cast<char*>(blocks.front()) + 40 * MiB);
  void* again = mr.allocate(s1, MiB, A);  // from s1's own arena
  CHECK(again == blocks.front());
  mr.deallocate(s1, again, MiB, A);
  mr.deallocate(s2, q, 20 * MiB, A);
}

TEST_CASE("arena: a kept superblock is reused by another stream after the free's work",
          "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* p = fill_late_and_free(mr, s1, MiB, 91);            // kept by s1's arena, alone: no event
  CHECK(cudaStreamQuery(s1.value()) == cudaErrorNotReady);  // the free did not wait
  std::size_t const bytes = 62 * MiB;  // the global arena has 60: out of memory first
  void* q                 = mr.allocate(s2, bytes, A);  // every free superblock goes back
  CHECK(q == p);
  // Taking that superblock synchronised the device: s1's fill has completed.
  CHECK(cudaStreamQuery(s1.value()) == cudaSuccess);
  CHECK(rmm::test::count_pattern_mismatches(q, MiB, 91, s2.value()) == 0);
  mr.deallocate(s2, q, bytes, A);
}

TEST_CASE(
    "arena: alone, a stream returns superblocks with no event; the next stream's first "
    "superblock waits for the device once",
    "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  // A large block goes back when freed, with no event (the only arena), and the merged range
  // serves the larger request.
  void* p   = fill_late_and_free(mr, s1, 40 * MiB, 93);
  void* big = mr.allocate(s1, 50 * MiB, A);
  CHECK(big == p);
  mr.deallocate(s1, big, 50 * MiB, A);
  CHECK(cudaStreamQuery(s1.value()) == cudaErrorNotReady);
  void* small = mr.allocate(s2, KiB, A);  // the first superblock another arena takes
  // It synchronised the device: s1's fill has completed.
  CHECK(cudaStreamQuery(s1.value()) == cudaSuccess);
  mr.deallocate(s2, small, KiB, A);
}

TEST_CASE("arena: with two streams, a returned superblock is ordered by an event, not by waiting",
          "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  for (rmm::cuda_stream const* s : {&s1, &s2}) {  // both arenas exist before any superblock moves
    void* small = mr.allocate(*s, KiB, A);
    mr.deallocate(*s, small, KiB, A);
  }
  // A large block beyond s1's share (32 MiB): returned when freed, under s1's event recorded
  // before the global lock is taken (arena_state::deallocate_large).
  std::size_t const bytes = 40 * MiB;
  void* p                 = fill_late_and_free(mr, s1, bytes, 92, 300);
  void* q                 = mr.allocate(s2, bytes, A);
  CHECK(q == p);
  CHECK(cudaStreamQuery(s1.value()) == cudaErrorNotReady);  // no host wait: s2 waits on the event
  CHECK(rmm::test::count_pattern_mismatches(q, bytes, 92, s2.value()) == 0);
  mr.deallocate(s2, q, bytes, A);
}

TEST_CASE("arena: a small request takes a batch of superblocks, at most 1/64 of the arena",
          "[gpu][arena]") {
  // 2 GiB: 1/64 is 32 MiB, a batch 16 MiB. 64 MiB: the batch is two superblocks, 4 MiB.
  for (auto const& sizes : {std::pair{2048 * MiB, 16 * MiB}, std::pair{64 * MiB, 4 * MiB}}) {
    std::size_t const arena = sizes.first;
    std::size_t const batch = sizes.second;
    INFO("arena " << arena);
    auto mr = make_arena(arena);
    rmm::cuda_stream s1;
    rmm::cuda_stream s2;
    void* p = mr.allocate(s1, KiB, A);
    void* q = mr.allocate(s2, KiB, A);  // first fit in the global arena: right after s1's batch
    CHECK(reinterpret_cast<std::uintptr_t>(q) - reinterpret_cast<std::uintptr_t>(p) == batch);
    void* more = mr.allocate(s1, 3 * MiB, A);  // still inside s1's batch
    CHECK(reinterpret_cast<std::uintptr_t>(more) < reinterpret_cast<std::uintptr_t>(q));
    CHECK(rmm::test::fill_and_count_mismatches(more, 3 * MiB, 5, s1.value()) == 0);
    mr.deallocate(s1, more, 3 * MiB, A);
    mr.deallocate(s2, q, KiB, A);
    mr.deallocate(s1, p, KiB, A);
  }
}

TEST_CASE("arena: per-thread default streams from several threads", "[gpu][arena]") {
  auto mr = make_arena(256 * MiB);
  std::vector<std::thread> threads;
  std::vector<std::size_t> mismatches(8, 0);
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      auto const s = rmm::cuda_stream_per_thread;
      for (std::uint32_t i = 0; i < 50; ++i) {
        std::size_t const bytes = (i % 5 == 0 ? 3 * MiB : 100 * KiB) + i;
        void* p                 = mr.allocate(s, bytes, A);
        auto const seed         = static_cast<std::uint32_t>(t * 1000 + i);
        rmm::test::fill_pattern(p, bytes, seed, s.value());
        mismatches[t] += rmm::test::count_pattern_mismatches(p, bytes, seed, s.value());
        mr.deallocate(s, p, bytes, A);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (auto m : mismatches) {
    CHECK(m == 0);
  }
  // The threads are gone; their cached superblocks come back through the last-resort path.
  rmm::cuda_stream stream;
  void* big = mr.allocate(stream, 250 * MiB, A);
  mr.deallocate(stream, big, 250 * MiB, A);
}

TEST_CASE("arena: a new thread's per-thread stream takes over a finished thread's arena",
          "[gpu][arena]") {
  auto mr         = make_arena(256 * MiB);
  auto const s    = rmm::cuda_stream_per_thread;
  void* first     = nullptr;
  void* kept      = nullptr;  // allocated by the first thread, freed by the second
  std::size_t bad = 0;
  std::thread{[&] {
    first = mr.allocate(s, KiB, A);
    kept  = mr.allocate(s, MiB, A);
    mr.deallocate(s, first, KiB, A);
    // Waits for its stream before exiting: a thread that exited with a delayed kernel still queued
    // on its per-thread stream hung in the CUDA runtime's thread teardown, after the resource's
    // thread-exit notice had run (seen only after "default arena size" ran in the same process;
    // H100, driver 580.159.04), so the finished thread's pending work is not part of this test.
    bad += rmm::test::fill_and_count_mismatches(kept, MiB, 7, s.value());
  }}.join();
  void* second = nullptr;
  void* other  = nullptr;
  std::thread{[&] {
    // The finished thread's arena: first fit gives the same block back.
    second = mr.allocate(s, KiB, A);
    mr.deallocate(s, kept, MiB, A);  // the finished thread's block, an own-stream free now
    void* again = mr.allocate(s, MiB, A);
    CHECK(again == kept);
    bad += rmm::test::count_pattern_mismatches(again, MiB, 7, s.value());  // the block kept
    bad += rmm::test::fill_and_count_mismatches(again, MiB, 8, s.value());
    // A thread running meanwhile has no finished arena to take: it gets its own memory.
    std::thread{[&] {
      other = mr.allocate(s, KiB, A);
      mr.deallocate(s, other, KiB, A);
    }}.join();
    mr.deallocate(s, again, MiB, A);
    mr.deallocate(s, second, KiB, A);
  }}.join();
  CHECK(second == first);
  CHECK(other != first);
  CHECK(bad == 0);
  // Both finished arenas serve later threads; neither is lost.
  std::vector<void*> got(2);
  std::vector<std::thread> two;
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    two.emplace_back([&, i] {
      got[i] = mr.allocate(s, KiB, A);
      std::unique_lock<std::mutex> lock{m};
      ++started;
      cv.notify_all();
      cv.wait(lock, [&] { return started == 2; });  // both alive: two distinct arenas
      lock.unlock();
      mr.deallocate(s, got[i], KiB, A);
    });
  }
  for (auto& t : two) {
    t.join();
  }
  std::sort(got.begin(), got.end());
  std::vector<void*> expected{first, other};
  std::sort(expected.begin(), expected.end());
  CHECK(got == expected);
}

TEST_CASE("arena: a large request takes exactly its size and returns it when freed",
          "[gpu][arena]") {
  auto mr = make_arena(8 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  // 3 + 5 MiB fill the arena: no rounding to 2 MiB superblocks (that would need 4 + 6).
  void* a = mr.allocate(s1, 3 * MiB, A);
  void* b = mr.allocate(s1, 5 * MiB, A);
  CHECK(b == static_cast<char*>(a) + 3 * MiB);
  CHECK(rmm::test::fill_and_count_mismatches(b, 5 * MiB, 21, s1.value()) == 0);
  mr.deallocate(s1, a, 3 * MiB, A);  // back in the global arena at once
  void* c = mr.allocate(s2, 2 * MiB, A);
  CHECK(c == a);
  mr.deallocate(s2, c, 2 * MiB, A);
  mr.deallocate(s1, b, 5 * MiB, A);
  // A large request first fits in the stream arena's free blocks (here s1's batch).
  auto big       = make_arena(64 * MiB);  // batches of 4 MiB
  void* small    = big.allocate(s1, KiB, A);
  void* in_batch = big.allocate(s1, 3 * MiB, A);
  CHECK(in_batch == static_cast<char*>(small) + KiB);
  big.deallocate(s1, in_batch, 3 * MiB, A);
  big.deallocate(s1, small, KiB, A);
}

TEST_CASE("arena: a large block freed on another stream is ordered before its next use",
          "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  rmm::cuda_stream s3;
  std::size_t const bytes = 8 * MiB;
  void* p                 = mr.allocate(s1, bytes, A);
  // Freed on s3, which has no arena: the free waits for s3.
  rmm::test::fill_pattern_after_delay(p, bytes, 31, 100'000'000, s3.value());
  mr.deallocate(s3, p, bytes, A);
  CHECK(cudaStreamQuery(s3.value()) == cudaSuccess);
  void* again = mr.allocate(s1, bytes, A);
  CHECK(again == p);
  CHECK(rmm::test::count_pattern_mismatches(again, bytes, 31, s1.value()) == 0);
  // Freed on s2, which has an arena (one of two): kept by s2's arena, whose share (32 MiB) has
  // room. No CUDA call: s2 reuses it at once, in stream order.
  void* small = mr.allocate(s2, KiB, A);
  rmm::test::fill_pattern_after_delay(again, bytes, 32, 300'000'000, s2.value());
  mr.deallocate(s2, again, bytes, A);
  CHECK(cudaStreamQuery(s2.value()) == cudaErrorNotReady);
  void* reuse = mr.allocate(s2, bytes, A);
  CHECK(reuse == p);
  CHECK(cudaStreamQuery(s2.value()) == cudaErrorNotReady);  // no wait
  CHECK(rmm::test::count_pattern_mismatches(reuse, bytes, 32, s2.value()) == 0);
  rmm::test::fill_pattern_after_delay(reuse, bytes, 33, 300'000'000, s2.value());
  mr.deallocate(s2, reuse, bytes, A);  // kept again
  // s1 gets other memory while s2 keeps it...
  void* other = mr.allocate(s1, bytes, A);
  CHECK(other != p);
  // ...and gets it once the rest of the arena is taken: the out-of-memory path returns s2's
  // free superblocks after synchronising the device.
  std::size_t const rest = 64 * MiB - 2 * bytes - 4 * MiB;  // s2's batch of small blocks: 4 MiB
  void* filler           = mr.allocate(s1, rest, A);
  void* third            = mr.allocate(s1, bytes, A);
  CHECK(third == p);
  CHECK(cudaStreamQuery(s2.value()) == cudaSuccess);
  CHECK(rmm::test::count_pattern_mismatches(third, bytes, 33, s1.value()) == 0);
  for (auto [q, n] : {std::pair{third, bytes}, std::pair{filler, rest}, std::pair{other, bytes}}) {
    mr.deallocate(s1, q, n, A);
  }
  mr.deallocate(s2, small, KiB, A);
}

TEST_CASE(
    "arena: alone, a stream's large requests try its free blocks, and large frees find theirs",
    "[gpu][arena]") {
  // The stream arena is involved only when it could be (its largest free block, its largest
  // superblock: arena_state::try_allocate, release_large_alone); every block lands where first
  // fit in the stream arena, then good fit in the global arena, put it before.
  auto mr = make_arena(64 * MiB);  // batches of 4 MiB
  rmm::cuda_stream s;
  void* small            = mr.allocate(s, KiB, A);  // a batch: [small, small + 4 MiB)
  std::uintptr_t const b = at(small);
  void* in_batch         = mr.allocate(s, 2 * MiB, A);  // first fit in the batch
  CHECK(at(in_batch) == b + KiB);
  void* big = mr.allocate(s, 6 * MiB, A);  // no free block of the batch holds it
  CHECK(at(big) == b + 4 * MiB);
  void* mid = mr.allocate(s, 3 * MiB, A);  // nor this one (2 MiB - 1 KiB free there)
  CHECK(at(mid) == b + 10 * MiB);
  CHECK(rmm::test::fill_and_count_mismatches(mid, 3 * MiB, 7, s.value()) == 0);
  mr.deallocate(s, in_batch, 2 * MiB, A);     // back into the batch
  mr.deallocate(s, mid, 3 * MiB, A);          // no larger than the batch, not in it: global
  mr.deallocate(s, big, 6 * MiB, A);          // larger than any superblock: the global lock alone
  void* merged = mr.allocate(s, 9 * MiB, A);  // both large blocks went back and coalesced
  CHECK(merged == big);
  CHECK(rmm::test::fill_and_count_mismatches(merged, 9 * MiB, 8, s.value()) == 0);
  void* again = mr.allocate(s, 2 * MiB, A);  // the batch's free block, first
  CHECK(again == in_batch);
  mr.deallocate(s, again, 2 * MiB, A);
  mr.deallocate(s, merged, 9 * MiB, A);
  mr.deallocate(s, small, KiB, A);
  void* rest = mr.allocate(s, 60 * MiB, A);  // nothing was lost: all but the kept batch
  CHECK(at(rest) == b + 4 * MiB);
  mr.deallocate(s, rest, 60 * MiB, A);
}

TEST_CASE("arena: a large block freed with the wrong size stays allocated", "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream s;
  void* p = mr.allocate(s, 4 * MiB, A);
  mr.deallocate(s, p, 6 * MiB, A);  // logged, nothing freed
  void* q = mr.allocate(s, 4 * MiB, A);
  CHECK(q == static_cast<char*>(p) + 4 * MiB);
  CHECK(rmm::test::fill_and_count_mismatches(p, 4 * MiB, 41, s.value()) == 0);
  mr.deallocate(s, q, 4 * MiB, A);
  mr.deallocate(s, p, 4 * MiB, A);
  void* r = mr.allocate(s, 4 * MiB, A);
  CHECK(r == p);
  mr.deallocate(s, r, 4 * MiB, A);
}

TEST_CASE("arena: alone, a large block within a superblock's size freed with the wrong size stays",
          "[gpu][arena]") {
  // The free is no larger than the stream's batch, so it looks in the stream arena first and then
  // reaches deallocate_large, which checks and releases in one lookup while one arena exists.
  auto mr = make_arena(64 * MiB);  // batches of 4 MiB
  rmm::cuda_stream s;
  void* small    = mr.allocate(s, KiB, A);      // a batch: [small, small + 4 MiB)
  void* in_batch = mr.allocate(s, 2 * MiB, A);  // first fit in the batch
  void* p        = mr.allocate(s, 3 * MiB, A);  // 2 MiB - 1 KiB left there: the global arena
  CHECK(at(p) == at(small) + 4 * MiB);
  mr.deallocate(s, p, 4 * MiB, A);  // logged, nothing freed
  void* q = mr.allocate(s, 3 * MiB, A);
  CHECK(at(q) == at(p) + 3 * MiB);
  CHECK(rmm::test::fill_and_count_mismatches(p, 3 * MiB, 43, s.value()) == 0);
  mr.deallocate(s, q, 3 * MiB, A);
  mr.deallocate(s, p, 3 * MiB, A);
  void* r = mr.allocate(s, 3 * MiB, A);  // both went back and coalesced
  CHECK(r == p);
  mr.deallocate(s, r, 3 * MiB, A);
  mr.deallocate(s, in_batch, 2 * MiB, A);
  mr.deallocate(s, small, KiB, A);
}

TEST_CASE("arena: out of memory states the request and the arena", "[gpu][arena]") {
  auto mr = make_arena(64 * MiB);
  rmm::cuda_stream stream;
  CHECK_THROWS_AS(mr.allocate(stream, 128 * MiB, A), rmm::out_of_memory);
  CHECK_THROWS_WITH(mr.allocate(stream, 128 * MiB, A),
                    Contains("134217728") && Contains("arena size 67108864"));
  void* p = mr.allocate(stream, 48 * MiB, A);
  CHECK_THROWS_WITH(mr.allocate(stream, 48 * MiB, A),
                    Contains("cannot allocate 50331648 bytes") && Contains("free 16777216 bytes") &&
                        Contains("largest free block 16777216 bytes"));
  mr.deallocate(stream, p, 48 * MiB, A);
  // Memory cached by another stream's arena is reclaimed before failing.
  rmm::cuda_stream other;
  std::vector<void*> small;
  for (int i = 0; i < 60; ++i) {
    small.push_back(mr.allocate(other, MiB, A));
  }
  for (void* s : small) {
    mr.deallocate(other, s, MiB, A);  // its share is 32 MiB: it keeps 32 MiB of batches
  }
  void* all = mr.allocate(stream, 64 * MiB, A);
  CHECK(all != nullptr);
  mr.deallocate(stream, all, 64 * MiB, A);
}

TEST_CASE("arena: dump_log_on_failure writes the arenas' state to the log", "[gpu][arena]") {
  char path[]  = "/tmp/rmm_arena_logXXXXXX";
  int const fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  rmm::set_log_file(path);
  {
    auto mr = make_arena(32 * MiB, true);
    rmm::cuda_stream stream;
    void* p = mr.allocate(stream, MiB, A);
    CHECK_THROWS_AS(mr.allocate(stream, 31 * MiB, A), rmm::out_of_memory);
    mr.deallocate(stream, p, MiB, A);
  }
  rmm::flush_log();
  rmm::set_log_to_stderr();
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  CHECK_THAT(text.str(),
             Contains("arena_memory_resource") && Contains("global arena") &&
                 Contains("stream arena") && Contains("superblock"));
}

TEST_CASE("arena: 16 threads x 16 streams stress with data checks", "[gpu][arena]") {
  auto mr                        = make_arena(2048 * MiB);
  constexpr std::size_t nthreads = 16;
  std::vector<rmm::cuda_stream> streams(16);
  std::vector<std::size_t> mismatches(nthreads, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng{static_cast<std::uint32_t>(t + 1)};
      struct live {
        void* p;
        std::size_t bytes;
        std::size_t s;
        std::uint32_t seed;
      };
      std::vector<live> blocks;
      std::uint32_t seed = static_cast<std::uint32_t>(t << 20U);
      auto retire        = [&](std::size_t i) {
        auto const b = blocks[i];
        auto& s      = streams[b.s];
        mismatches[t] += rmm::test::count_pattern_mismatches(b.p, b.bytes, b.seed, s.value());
        // Sometimes free on another stream (after the check, which synchronised b's stream).
        auto& fs = rng() % 8 == 0 ? streams[(b.s + 1) % streams.size()] : s;
        mr.deallocate(fs, b.p, b.bytes, A);
        blocks[i] = blocks.back();
        blocks.pop_back();
      };
      for (int i = 0; i < 400; ++i) {
        if (!blocks.empty() && (blocks.size() > 24 || rng() % 2 == 0)) {
          retire(rng() % blocks.size());
          continue;
        }
        std::size_t const s     = (t + rng() % 2) % streams.size();
        std::size_t const bytes = 1 + rng() % (rng() % 10 == 0 ? 6 * MiB : 256 * KiB);
        void* p                 = mr.allocate(streams[s], bytes, A);
        rmm::test::fill_pattern(p, bytes, ++seed, streams[s].value());
        blocks.push_back({p, bytes, s, seed});
      }
      while (!blocks.empty()) {
        retire(blocks.size() - 1);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (std::size_t t = 0; t < nthreads; ++t) {
    INFO("thread " << t);
    CHECK(mismatches[t] == 0);
  }
}
