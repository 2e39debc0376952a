// fixed_size_memory_resource: construction checks, block size rounding, refusal of large
// requests, growth by blocks_to_preallocate, stream-ordered reuse, giving memory back.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"

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

void fill_and_check_block(void* p, std::size_t bytes, rmm::cuda_stream_view s) {
  rmm::test::fill_pattern(p, bytes, 31, s.value());
  CHECK(rmm::test::count_pattern_mismatches(p, bytes, 31, s.value()) == 0);
}
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
  // With two streams, s1's frees wait in its batch until it holds 8 MiB (8 blocks here): then
  // s1's event is recorded and the blocks join s1's list, where s2 may take them after waiting
  // on that event. Each block's writer is still running when s1 frees it.
  fixed_size_memory_resource mr{cuda_memory_resource{}, MiB, 1};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* theirs = mr.allocate(s2, MiB, 256);  // both streams known: frees are batched
  std::vector<void*> mine(8);
  for (auto& p : mine) {
    p = mr.allocate(s1, MiB, 256);
  }
  CHECK(mr.capacity_blocks() == 9);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    rmm::test::fill_pattern_after_delay(
        mine[i], MiB, static_cast<std::uint32_t>(i + 1), 25'000'000, s1.value());
    mr.deallocate(s1, mine[i], MiB, 256);  // the eighth fills the batch: one record, the list
  }
  mr.deallocate(s2, theirs, MiB, 256);
  CHECK(mr.allocate(s2, MiB, 256) == theirs);  // its own block first (from its batch)
  void* b = mr.allocate(s2, MiB, 256);
  CHECK(std::find(mine.begin(), mine.end(), b) != mine.end());  // then s1's, not grown
  CHECK(mr.capacity_blocks() == 9);
  rmm::test::fill_pattern(b, MiB, 20, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(b, MiB, 20, s2.value()) == 0);
  mr.deallocate(s2, b, MiB, 256);
  mr.deallocate(s2, theirs, MiB, 256);
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
    fill_and_check_block(p, bs, s1);
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
