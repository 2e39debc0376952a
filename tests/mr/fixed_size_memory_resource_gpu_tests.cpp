// fixed_size_memory_resource: construction checks, block size rounding, refusal of large
// requests, growth by blocks_to_preallocate, stream-ordered reuse, giving memory back.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"
#include "../utilities/thread_generations.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {
using Catch::Matchers::Contains;
using rmm::mr::cuda_memory_resource;
using rmm::mr::fixed_size_memory_resource;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

}  // namespace

TEST_CASE("fixed_size: defaults, rounding and bad arguments", "[gpu][fixed_size]") {
  STATIC_REQUIRE(fixed_size_memory_resource::default_block_size == MiB);
  STATIC_REQUIRE(fixed_size_memory_resource::default_blocks_to_preallocate == 128);
  fixed_size_memory_resource defaults{cuda_memory_resource{}};
  CHECK(defaults.get_block_size() == MiB);
  CHECK(defaults.capacity_blocks() == 128);
  fixed_size_memory_resource odd{cuda_memory_resource{}, 1000, 2};
  CHECK(odd.get_block_size() == 1024);
  CHECK_THROWS_WITH(fixed_size_memory_resource(cuda_memory_resource{}, 0),
                    Contains("block_size must not be 0"));
  CHECK_THROWS_AS(fixed_size_memory_resource(cuda_memory_resource{}, 0), rmm::logic_error);
  CHECK_THROWS_WITH(fixed_size_memory_resource(cuda_memory_resource{}, KiB, 0),
                    Contains("blocks_to_preallocate must be at least 1"));
}

TEST_CASE("fixed_size: a request above the block size names both sizes", "[gpu][fixed_size]") {
  fixed_size_memory_resource mr{cuda_memory_resource{}, 64 * KiB, 4};
  rmm::cuda_stream stream;
  CHECK_THROWS_AS(mr.allocate(stream, 64 * KiB + 1, 256), rmm::bad_alloc);
  CHECK_THROWS_WITH(mr.allocate(stream, 64 * KiB + 1, 256),
                    Contains("65537 bytes") && Contains("block size 65536"));
  CHECK(mr.allocate(stream, 0, 256) == nullptr);
}

TEST_CASE("fixed_size: grows by blocks_to_preallocate and hands out distinct blocks",
          "[gpu][fixed_size]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  {
    fixed_size_memory_resource mr{counting, 64 * KiB, 4};
    rmm::cuda_stream stream;
    CHECK(mr.capacity_blocks() == 4);
    std::set<void*> blocks;
    for (int i = 0; i < 9; ++i) {
      void* p = mr.allocate(stream, 1 + static_cast<std::size_t>(i) * 1000, 256);
      rmm::test::fill_pattern(p, 64 * KiB, static_cast<std::uint32_t>(i), stream.value());
      CHECK(blocks.insert(p).second);
    }
    CHECK(mr.capacity_blocks() == 12);
    CHECK(counting.counts().allocations == 3);
    for (void* p : blocks) {
      mr.deallocate(stream, p, 100, 256);
    }
    CHECK(mr.free_blocks() == 12);
    void* again = mr.allocate(stream, 10, 256);
    CHECK(blocks.count(again) == 1);  // reused, no growth
    CHECK(mr.capacity_blocks() == 12);
    mr.deallocate(stream, again, 10, 256);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(counting.counts().deallocations == 3);
}

TEST_CASE("fixed_size: reuse from another stream waits for the freeing stream's work",
          "[gpu][fixed_size]") {
  // With two streams, s1's frees wait in its batch until it holds 32 blocks: then s1's event is
  // recorded and the oldest 16 join s1's list, where s2 may take them after waiting on that
  // event (the newest 16 stay in s1's batch). Each block's writer is still running when s1 frees
  // it (the delayed fills run one after another on s1).
  fixed_size_memory_resource mr{cuda_memory_resource{}, MiB, 1};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* theirs = mr.allocate(s2, MiB, 256);  // both streams known: frees are batched
  std::vector<void*> mine(32);
  for (auto& p : mine) {
    p = mr.allocate(s1, MiB, 256);
  }
  CHECK(mr.capacity_blocks() == 33);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (i < 16) {
      rmm::test::fill_pattern_after_delay(
          mine[i], MiB, static_cast<std::uint32_t>(i + 1), 5'000'000, s1.value());
    }
    mr.deallocate(s1, mine[i], MiB, 256);  // the 32nd fills the batch: one record, 16 to the list
  }
  mr.deallocate(s2, theirs, MiB, 256);
  CHECK(mr.allocate(s2, MiB, 256) == theirs);  // its own block first (from its batch)
  std::vector<void*> taken;
  for (int i = 0; i < 16; ++i) {  // then s1's returned blocks, after one wait: not grown
    taken.push_back(mr.allocate(s2, MiB, 256));
    CHECK(std::find(mine.begin(), mine.begin() + 16, taken.back()) != mine.begin() + 16);
  }
  CHECK(mr.capacity_blocks() == 33);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    CHECK(rmm::test::fill_and_count_mismatches(
              taken[i], MiB, static_cast<std::uint32_t>(40 + i), s2.value()) == 0);
  }
  CHECK(mr.allocate(s1, MiB, 256) == mine[31]);  // s1 kept its newest 16 in its batch
  mr.deallocate(s1, mine[31], MiB, 256);
  for (void* p : taken) {
    mr.deallocate(s2, p, MiB, 256);
  }
  mr.deallocate(s2, theirs, MiB, 256);
  CHECK(mr.free_blocks() == 33);
}

TEST_CASE("fixed_size: a stream that waits for another's blocks adopts half of them",
          "[gpu][fixed_size]") {
  // s1 frees 96 blocks: its batch returns 16 at each 32nd..96th free, so its list holds
  // mine[0..79] (mine[79] on top) and its batch mine[80..95]. s2 takes mine[79] after waiting on
  // s1's event; the wait orders all of s1's list, so half of the rest (mine[40..78]) moves to
  // s2's list with it. s1 then finds mine[39] on top of its own list, not mine[78].
  constexpr std::size_t bs = 64 * KiB;
  fixed_size_memory_resource mr{cuda_memory_resource{}, bs, 97};  // one chunk: no growth
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* theirs = mr.allocate(s2, bs, 256);
  std::vector<void*> mine(96);
  for (auto& p : mine) {
    p = mr.allocate(s1, bs, 256);
    rmm::test::fill_pattern(p, bs, 3, s1.value());
  }
  for (void* p : mine) {
    mr.deallocate(s1, p, bs, 256);
  }
  CHECK(mr.allocate(s2, bs, 256) == mine[79]);  // from s1's list, after the event wait
  CHECK(mr.allocate(s2, bs, 256) == mine[78]);  // adopted: now in s2's own list
  for (std::size_t i = 95; i >= 80; --i) {      // s1's batch, newest first
    CHECK(mr.allocate(s1, bs, 256) == mine[i]);
  }
  CHECK(mr.allocate(s1, bs, 256) == mine[39]);  // what s1's list kept
  for (std::size_t i : {79U, 78U, 39U}) {
    cudaStream_t const s = i == 39 ? s1.value() : s2.value();
    CHECK(rmm::test::fill_and_count_mismatches(mine[i], bs, 9, s) == 0);
  }
  for (std::size_t i = 80; i < 96; ++i) {
    mr.deallocate(s1, mine[i], bs, 256);
  }
  mr.deallocate(s1, mine[39], bs, 256);
  mr.deallocate(s2, mine[78], bs, 256);
  mr.deallocate(s2, mine[79], bs, 256);
  mr.deallocate(s2, theirs, bs, 256);
  CHECK(mr.free_blocks() == 97);
  CHECK(mr.capacity_blocks() == 97);
}

TEST_CASE("fixed_size: with two streams, an allocation under the shared lock prefetches 16 blocks",
          "[gpu][fixed_size]") {
  constexpr std::size_t bs = 64 * KiB;
  fixed_size_memory_resource mr{cuda_memory_resource{}, bs, 64};  // one chunk, handed out in order
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  auto* const first = static_cast<char*>(mr.allocate(s2, bs, 256));  // alone: no prefetch
  void* a           = mr.allocate(s1, bs, 256);  // two streams: block 1, and 2..17 to s1's batch
  CHECK(a == first + bs);
  CHECK(mr.free_blocks() == 62);       // prefetched blocks still count as free
  void* b = mr.allocate(s2, bs, 256);  // past s1's prefetched blocks; 19..34 to s2's batch
  CHECK(b == first + 18 * bs);
  std::vector<void*> mine{a};
  for (int i = 0; i < 16; ++i) {  // from s1's batch, most recent first
    auto* const p = static_cast<char*>(mr.allocate(s1, bs, 256));
    CHECK(p == first + static_cast<std::ptrdiff_t>(17 - i) * static_cast<std::ptrdiff_t>(bs));
    mine.push_back(p);
  }
  mine.push_back(mr.allocate(s1, bs, 256));  // the batch is empty: the shared lock again
  CHECK(mine.back() == first + 35 * bs);
  for (void* p : mine) {
    CHECK(rmm::test::fill_and_count_mismatches(p, bs, 31, s1.value()) == 0);
  }
  for (void* p : mine) {
    mr.deallocate(s1, p, bs, 256);
  }
  mr.deallocate(s2, b, bs, 256);
  mr.deallocate(s2, first, bs, 256);
  CHECK(mr.free_blocks() == 64);
  CHECK(mr.capacity_blocks() == 64);
}

TEST_CASE("fixed_size: blocks freed while one stream was alone are reused, not grown past",
          "[gpu][fixed_size]") {
  // Freed with no event (the only stream): a second stream takes them after one device
  // synchronisation turns them into memory of no stream. They must count as free then, or the
  // resource grows instead of reusing them.
  fixed_size_memory_resource mr{cuda_memory_resource{}, MiB, 2};
  rmm::cuda_stream s1;
  void* a = mr.allocate(s1, MiB, 256);
  void* b = mr.allocate(s1, MiB, 256);
  mr.deallocate(s1, a, MiB, 256);
  mr.deallocate(s1, b, MiB, 256);
  rmm::cuda_stream s2;
  void* c = mr.allocate(s2, MiB, 256);
  void* d = mr.allocate(s2, MiB, 256);
  CHECK(std::set<void*>{a, b} == std::set<void*>{c, d});
  CHECK(mr.capacity_blocks() == 2);
  mr.deallocate(s2, c, MiB, 256);
  mr.deallocate(s2, d, MiB, 256);
}

TEST_CASE("fixed_size: new threads' per-thread streams reuse what finished threads left batched",
          "[gpu][fixed_size]") {
  // With two streams in use, each thread's frees (and the blocks its allocations prefetched) wait
  // in its per-thread stream's batch. Before finished threads' slots were reclaimed, those
  // blocks stayed out of reach once the thread had exited, and every new thread grew the
  // resource by about as many blocks as it used.
  fixed_size_memory_resource mr{cuda_memory_resource{}, 256 * KiB, 8};
  rmm::cuda_stream other;
  void* held = mr.allocate(other, 256 * KiB, 256);  // a second stream: frees are batched
  std::size_t after_first = 0;
  std::size_t const mismatches =
      rmm::test::run_thread_generations(mr, 40, 24, 256 * KiB, [&](int generation) {
        if (generation == 0) {
          after_first = mr.capacity_blocks();
        }
      });
  CHECK(mismatches == 0);
  CHECK(mr.capacity_blocks() == after_first);  // no growth after the first thread
  mr.deallocate(other, held, 256 * KiB, 256);
}
