/**
 * @file chunk_stream_arena_tests.cpp
 * @brief Property tests of chunk_stream_arena against the naive reference model
 * (bitmap_stream_arena_model.hpp): randomised operations with fixed seeds over superblocks of
 * 2 MiB multiples, superblocks not aligned to 2 MiB, several starting in one 16 MiB chunk, blocks
 * enough to switch superblocks to their tree, add/remove of superblocks and
 * release_free_superblocks, cache size changes and frees of memory outside every superblock;
 * every step compares the whole observable state (with both frees, deallocate and
 * deallocate_if_owned, and the lock-free hints) and validates.
 */
#include "bitmap_stream_arena_model.hpp"
#include "chunk_stream_arena_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

namespace arena = rmm::mr::detail::arena;
using arena::chunk_stream_arena;

constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = rmm::test::fake_arena_base;
constexpr std::size_t CH   = chunk_stream_arena::chunk_size;  // the index's chunk: 8 * SB
// Where superblocks are placed: 16 chunks, several superblocks starting in most of them.
constexpr std::size_t space = std::size_t{256} << 20U;
// A wider range (128 chunks: 8 groups of leaves under a top group), fewer superblocks per chunk.
constexpr std::size_t wide_space = std::size_t{2} << 30U;
// 64 chunks: one level, the leaves are the top level's 4 groups, scanned one after another.
constexpr std::size_t flat_space = std::size_t{1} << 30U;

class harness {
 public:
  harness(std::uint32_t seed, std::size_t cache, bool small_blocks, std::size_t span = space)
      : rng_{seed}, arena_{cache, B, span}, model_{cache}, small_{small_blocks}, space_{span} {}

  void step() {
    auto const op = pick(100);
    if (op < 50) {
      allocate();
    } else if (op < 88) {
      free_random();
    } else if (op < 90) {
      set_cache();
    } else if (op < 92) {
      release_all();
    } else if (op < 93) {
      stray_free();
    } else {
      add_superblock();
    }
    check();
  }

  void drain() {
    while (!live_.empty()) {
      free_block(live_.begin());
    }
    release_all();
    check();
    REQUIRE(arena_.held_bytes() == 0);
  }

  // n more allocations (and the superblocks they need), checked at the end.
  void fill(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      allocate();
    }
    check();
  }

  // Every other live block in address order back: isolated free blocks, more than
  // small_block_limit in any superblock holding over twice as many live ones.
  void free_every_other() {
    bool odd = false;
    for (auto it = live_.begin(); it != live_.end();) {
      auto const next = std::next(it);
      if (odd) {
        free_block(it);
      }
      odd = !odd;
      it  = next;
    }
    check();
  }

  std::size_t max_trees{};

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng_);
  }

  std::size_t request() {
    if (small_) {
      return 256 * (1 + pick(4));
    }  // many small blocks: superblocks go to trees
    switch (pick(4)) {
      case 0:
        return 256 * (1 + pick(16));
      case 1:
        return 256 * (1 + pick(2048));
      case 2:
        return 256 * (1 + pick(SB / 256));
      default:
        return 256 * (1 + pick(3 * SB / 256));
    }
  }

  // A free place in [B, B + space_): 2 MiB multiples, or odd sizes at odd 256-byte offsets.
  void add_superblock(std::size_t at_least = 0) {
    for (int tries = 0; tries < 64; ++tries) {
      std::size_t const size =
          std::max(at_least, pick(2) == 0 ? SB * (1 + pick(3)) : 256 * (1 + pick(3 * SB / 256)));
      std::uintptr_t const base =
          B + (pick(2) == 0 ? SB * pick(space_ / SB - 8) : 256 * pick((space_ - 8 * SB) / 256));
      if (model_.overlaps(base, size)) {
        CHECK_THROWS_AS(arena_.add_superblock(base, size), std::invalid_argument);
        continue;
      }
      arena_.add_superblock(base, size);
      model_.add_superblock(base, size);
      largest_added_ = std::max(largest_added_, size);
      return;
    }
  }

  void allocate() {
    std::size_t const n = request();
    auto p              = arena_.allocate(n);
    REQUIRE(model_.allocate(n) == p);
    if (!p) {
      add_superblock(n);
      p = arena_.allocate(n);
      REQUIRE(model_.allocate(n) == p);
    }
    if (p) {
      live_.emplace(*p, n);
    }
  }

  void free_random() {
    if (live_.empty()) {
      return;
    }
    free_block(std::next(live_.begin(), static_cast<std::ptrdiff_t>(pick(live_.size()))));
  }

  // Through deallocate or deallocate_if_owned (the resource's free), which must agree.
  void free_block(std::map<std::uintptr_t, std::size_t>::iterator it) {
    bool const allow = pick(4) != 0;
    std::optional<arena::range> r;
    if (pick(2) == 0) {
      r = arena_.deallocate(it->first, it->second, allow);
    } else {
      auto const freed = arena_.deallocate_if_owned(it->first, it->second, allow);
      REQUIRE(freed.owned);
      r = freed.released;
    }
    REQUIRE(model_.deallocate(it->first, it->second, allow) == r);
    live_.erase(it);
  }

  // A free of memory in no superblock of the arena: deallocate_if_owned does nothing (check()
  // compares the whole state with the model's), deallocate throws.
  void stray_free() {
    std::uintptr_t const p = B + 256 * pick(space_ / 256);
    if (model_.overlaps(p, 256)) {
      return;
    }
    CHECK_FALSE(arena_.deallocate_if_owned(p, 256).owned);
    CHECK_THROWS_AS(arena_.deallocate(p, 256), std::invalid_argument);
  }

  // The resource changes the cache as streams come (arena_state::keep_bytes).
  void set_cache() {
    std::size_t const sizes[] = {0, 2 * SB, 16 * SB, space_};
    std::size_t const c       = sizes[pick(4)];
    arena_.set_cache_bytes(c);
    model_.set_cache_bytes(c);
    REQUIRE(arena_.cache_bytes() == c);
  }

  void release_all() {
    REQUIRE(arena_.release_free_superblocks() == model_.release_free_superblocks());
  }

  void check() {
    REQUIRE(rmm::test::snapshot_of(arena_) == rmm::test::snapshot_of(model_));
    REQUIRE(arena_.largest_free_block_hint() == model_.largest_free_block());
    REQUIRE(arena_.largest_superblock_hint() == largest_added_);
    max_trees = std::max(max_trees, arena_.num_tree_superblocks());
    arena_.validate();
  }

  std::mt19937 rng_;
  rmm::test::test_stream_arena arena_;
  rmm::test::reference_stream_arena model_;
  bool small_;
  std::size_t space_;
  std::map<std::uintptr_t, std::size_t> live_;
  std::size_t largest_added_{};  // the largest superblock ever added
};

}  // namespace

TEST_CASE("chunk_stream_arena: randomised operations match the reference model", "[arena][chunk]") {
  for (std::size_t span : {space, wide_space, flat_space}) {
    for (std::uint32_t seed : {1U, 2U, 3U}) {
      for (std::size_t cache : {std::size_t{0}, 2 * SB, 16 * SB}) {
        harness h{seed, cache, false, span};
        for (int i = 0; i < 3000; ++i) {
          h.step();
        }
        h.drain();
      }
    }
  }
}

TEST_CASE("chunk_stream_arena: many small blocks switch superblocks to trees and back",
          "[arena][chunk]") {
  for (std::uint32_t seed : {7U, 8U}) {
    harness h{seed, 4 * SB, true};
    for (int i = 0; i < 6000; ++i) {
      h.step();
    }
    h.fill(3 * chunk_stream_arena::small_block_limit);  // enough live blocks for a tree
    h.free_every_other();
    CHECK(h.max_trees > 0);
    for (int i = 0; i < 2000; ++i) {
      h.step();  // random steps over the trees, checked against the model at every step
    }
    h.drain();
  }
}

TEST_CASE("chunk_stream_arena: the array up to its limit, then the tree; recycled records trimmed",
          "[arena][chunk]") {
  constexpr std::size_t limit = chunk_stream_arena::small_block_limit;
  constexpr std::size_t unit  = arena::allocation_granularity;
  // Cache 0: a superblock that becomes entirely free is taken out and its record recycled, so
  // every round reuses the slot the previous one left (validate() checks it was trimmed).
  rmm::test::test_stream_arena a{0};
  for (std::size_t const holes : {limit - 1, limit, std::size_t{200}, std::size_t{3}, limit + 1}) {
    CAPTURE(holes);
    a.add_superblock(B, SB);
    std::vector<std::uintptr_t> blocks;
    for (std::size_t i = 0; i < SB / unit; ++i) {
      auto const p = a.allocate(unit);
      REQUIRE(p == B + i * unit);  // first fit: the superblock fills in address order
      blocks.push_back(*p);
    }
    for (std::size_t i = 0; i < holes; ++i) {
      REQUIRE_FALSE(a.deallocate(blocks[2 * i], unit).has_value());  // isolated free blocks
    }
    CHECK(a.num_tree_superblocks() == (holes > limit ? 1U : 0U));
    CHECK(a.largest_free_block_hint() == unit);
    a.validate();
    std::size_t released = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (i % 2 != 0 || i >= 2 * holes) {
        released += a.deallocate(blocks[i], unit).has_value() ? 1U : 0U;
      }
    }
    CHECK(released == 1);  // the last free empties the superblock, which goes back
    CHECK(a.num_superblocks() == 0);
    CHECK(a.num_tree_superblocks() == 0);
    a.validate();
  }
}

TEST_CASE("chunk_stream_arena: superblocks outside its range are rejected", "[arena][chunk]") {
  chunk_stream_arena a{B, 8 * SB};
  CHECK_THROWS_AS(a.add_superblock(B - SB, SB), std::invalid_argument);
  CHECK_THROWS_AS(a.add_superblock(B + 7 * SB, 2 * SB), std::invalid_argument);
  CHECK_THROWS_AS((chunk_stream_arena{B, 0}), std::invalid_argument);
  // The class tree keeps sizes as 32-bit counts of 256-byte units: about 1 TiB at most.
  CHECK_THROWS_AS((chunk_stream_arena{B, chunk_stream_arena::max_arena_size + 256}),
                  std::invalid_argument);
  a.add_superblock(B + 7 * SB + 256, SB - 256);  // the tail: not 2 MiB aligned
  a.add_superblock(B + 7 * SB, 256);             // two superblocks start in one chunk
  CHECK(a.allocate(512) == B + 7 * SB + 256);
  CHECK(a.allocate(256) == B + 7 * SB);
  CHECK(a.owns(B + 8 * SB - 1));
  CHECK_FALSE(a.owns(B + 6 * SB));
  a.validate();
}

TEST_CASE("chunk_stream_arena: addresses of superblocks sharing a 2 MiB granule",
          "[arena][chunk]") {
  // Granule 0 = [B, B + SB): its first byte is in no superblock, c lies inside it. Granule 1: its
  // first byte is in `a`, and d starts after a's end inside it. find() must not take the
  // granule's superblock for every address in the granule.
  chunk_stream_arena arena{B, 8 * SB, 0};
  std::uintptr_t const a = B + SB / 2, c = B + 256, d = B + 3 * SB / 2;
  arena.add_superblock(a, SB);
  arena.add_superblock(c, SB / 2 - 256);
  arena.add_superblock(d, SB / 4);
  arena.validate();
  CHECK_FALSE(arena.owns(B));
  CHECK(arena.owns(c));
  CHECK(arena.owns(B + SB));  // a, through granule 1
  CHECK(arena.owns(d));       // d, past a's end in granule 1
  CHECK_FALSE(arena.owns(d + SB / 4));
  CHECK(arena.allocate(SB) == a);
  CHECK(arena.allocate(SB / 2 - 256) == c);
  CHECK(arena.allocate(SB / 4) == d);
  // Each free finds its own superblock: with cache 0 an emptied superblock is released, so a
  // free given to the wrong superblock would release the wrong range.
  CHECK(arena.deallocate(d, SB / 4) == arena::range{d, SB / 4});
  arena.validate();
  CHECK(arena.deallocate(a, SB) == arena::range{a, SB});  // granule 1 names no superblock now
  arena.validate();
  CHECK_FALSE(arena.owns(B + SB));
  CHECK_FALSE(arena.deallocate_if_owned(d, 256).owned);
  arena.add_superblock(B + SB, 2 * SB);  // granules 1 and 2 name the new superblock
  arena.validate();
  CHECK(arena.allocate(2 * SB) == B + SB);
  CHECK(arena.deallocate(B + SB, 2 * SB) == arena::range{B + SB, 2 * SB});
  CHECK(arena.deallocate(c, SB / 2 - 256) == arena::range{c, SB / 2 - 256});
  arena.validate();
  CHECK(arena.num_superblocks() == 0);
}

TEST_CASE("chunk_stream_arena: frees in superblocks starting inside a granule held by another",
          "[arena][chunk]") {
  // Granule 2 = [B + 2 SB, B + 3 SB): `a` holds its first byte, and x and then y start inside it
  // past a's end, so the granule's entry does not answer for them. Then x goes, then a, then y.
  // Each free must find its own superblock (cache 0: an emptied superblock is released, and its
  // range returned); validate() checks the granule table after each step.
  chunk_stream_arena arena{B, 8 * SB, 0};
  std::uintptr_t const a = B + SB + SB / 2, x = B + 2 * SB + SB / 2, y = B + 2 * SB + 3 * SB / 4;
  arena.add_superblock(a, SB);
  arena.add_superblock(y, 2 * SB);  // y before x, which lands below it in the chunk's list
  arena.add_superblock(x, SB / 4);
  arena.validate();
  CHECK(arena.allocate(SB) == a);
  CHECK(arena.allocate(SB / 4) == x);
  CHECK(arena.allocate(2 * SB) == y);
  for (std::uintptr_t p : {a + SB - 256, x, x + SB / 4 - 256, y, y + SB, y + 2 * SB - 256}) {
    CHECK(arena.owns(p));
  }
  CHECK_FALSE(arena.owns(a - 256));
  CHECK_FALSE(arena.owns(y + 2 * SB));
  CHECK(arena.deallocate(x, SB / 4) == arena::range{x, SB / 4});
  arena.validate();
  CHECK_FALSE(arena.owns(x));
  CHECK(arena.owns(y));
  CHECK(arena.deallocate(a, SB) == arena::range{a, SB});
  arena.validate();
  CHECK_FALSE(arena.owns(B + 2 * SB));  // granule 2's first byte: in no superblock now
  CHECK(arena.owns(y + SB / 8));        // granule 2's only superblock now
  CHECK(arena.deallocate(y, 2 * SB) == arena::range{y, 2 * SB});
  arena.validate();
  CHECK_FALSE(arena.owns(y));
  CHECK(arena.num_superblocks() == 0);
}

TEST_CASE("chunk_stream_arena: ranges whose class tree groups are padded", "[arena][chunk]") {
  // 81 chunks (+256 B): 82 leaves, their classes in 2 groups of 64 (the second padded), the group
  // classes padded to 16; 2528 chunks (the resource's 40448 MiB arena): 40 groups; 4400 chunks
  // (an H200's default arena, 68.75 GiB): 69 groups, the last padded; the largest range: 1024
  // groups.
  for (std::size_t span :
       {81 * CH + 256, std::size_t{40448} << 20U, 4400 * CH, chunk_stream_arena::max_arena_size}) {
    chunk_stream_arena a{B, span, 0};
    a.validate();
    std::uintptr_t const last =
        B + (span - 1) / SB * SB;  // the last superblock place, maybe partial
    a.add_superblock(last, B + span - last);
    a.add_superblock(B + SB, SB);
    a.validate();
    CHECK(a.allocate(SB) == B + SB);
    CHECK(a.allocate(256) == last);
    CHECK(a.largest_free_block() == B + span - last - 256);
    a.validate();
    CHECK(a.deallocate(B + SB, SB) == arena::range{B + SB, SB});  // cache 0: released at once
    CHECK(a.deallocate(last, 256) == arena::range{last, B + span - last});
    a.validate();
    CHECK(a.largest_free_block() == 0);
  }
}

TEST_CASE("chunk_stream_arena: first fit and the largest block across groups of chunks",
          "[arena][chunk]") {
  // 4400 chunks: 69 groups of 64, the first and the last holding a superblock. Then 64 chunks: one
  // group.
  for (std::size_t chunks : {std::size_t{4400}, std::size_t{64}}) {
    chunk_stream_arena a{B, chunks * CH, 0};
    std::uintptr_t const low  = B + CH;                 // the first top group
    std::uintptr_t const high = B + (chunks - 1) * CH;  // the last one
    a.add_superblock(high, 4 * SB);
    a.add_superblock(low, SB);
    a.validate();
    CHECK(a.largest_free_block() == 4 * SB);
    CHECK(a.allocate(2 * SB) == high);  // only the high superblock holds it
    CHECK(a.largest_free_block() == 2 * SB);
    CHECK(a.allocate(SB) == low);  // both hold it: the lower one
    a.validate();
    CHECK(a.allocate(2 * SB) == high + 2 * SB);
    CHECK(a.largest_free_block() == 0);
    CHECK_FALSE(a.allocate(256).has_value());
    CHECK_FALSE(a.deallocate(high, 2 * SB).has_value());  // kept until the superblock is free
    CHECK(a.largest_free_block() == 2 * SB);
    CHECK(a.deallocate(low, SB) == arena::range{low, SB});  // cache 0: released
    CHECK(a.largest_free_block() == 2 * SB);
    CHECK(a.allocate(256) == high);
    CHECK(a.largest_free_block() == 2 * SB - 256);  // the largest leaf shrank: recomputed
    a.validate();
  }
}

TEST_CASE("chunk_stream_arena: first fit passes chunks of the request's class too small for it",
          "[arena][chunk]") {
  // Leaves of 990, 1000 and 1010 units share a class (8 an octave: 960-1023 units), so the class
  // bytes alone cannot tell them apart for a request of 1000 units: first fit must pass the
  // chunks of 990, in group 0 and in group 17 (past the first 16 group classes, one SSE2 vector),
  // to the first chunk that holds 1000. Three chunks at 990 then hold the largest leaf at once.
  constexpr std::size_t U = 256;
  std::size_t const g17   = 64 * 17;
  chunk_stream_arena a{B, 64 * 20 * CH, 0};
  for (std::size_t c : {std::size_t{3}, g17 + 5, g17 + 6}) {
    a.add_superblock(B + c * CH, 990 * U);
  }
  a.add_superblock(B + (g17 + 9) * CH, 1010 * U);
  a.add_superblock(B + 64 * 19 * CH, 1000 * U);
  a.validate();
  CHECK(a.largest_free_block() == 1010 * U);
  CHECK(a.allocate(1000 * U) == B + (g17 + 9) * CH);
  CHECK(a.largest_free_block() == 1000 * U);  // the one chunk at the largest shrank
  CHECK(a.allocate(1000 * U) == B + 64 * 19 * CH);
  CHECK(a.largest_free_block() == 990 * U);
  a.validate();
  CHECK(a.allocate(990 * U) == B + 3 * CH);
  CHECK(a.largest_free_block() == 990 * U);  // two chunks still hold it
  CHECK(a.allocate(990 * U) == B + (g17 + 5) * CH);
  CHECK(a.largest_free_block() == 990 * U);
  a.validate();
  CHECK(a.allocate(990 * U) == B + (g17 + 6) * CH);
  CHECK(a.largest_free_block() == 10 * U);  // what the 1010-unit superblock has left
  CHECK_FALSE(a.allocate(11 * U).has_value());
  a.validate();
}

TEST_CASE("chunk_stream_arena: a changed cache size rules the next emptied superblock",
          "[arena][chunk]") {
  chunk_stream_arena a{B, 8 * SB, 0};
  CHECK(a.cache_bytes() == 0);
  a.set_cache_bytes(2 * SB);
  for (std::size_t i = 0; i < 3; ++i) {
    a.add_superblock(B + i * SB, SB);
  }
  std::uintptr_t const p0 = *a.allocate(SB);
  std::uintptr_t const p1 = *a.allocate(SB);
  std::uintptr_t const p2 = *a.allocate(SB);
  CHECK(a.keeps(2 * SB));
  CHECK_FALSE(a.keeps(2 * SB + 256));
  CHECK_FALSE(a.deallocate(p0, SB).has_value());  // kept: 2 MiB of a 4 MiB cache
  CHECK(a.keeps(SB));
  CHECK_FALSE(a.keeps(SB + 256));
  CHECK_FALSE(a.deallocate(p1, SB).has_value());  // kept: the cache is full now
  CHECK_FALSE(a.keeps(256));
  a.set_cache_bytes(SB);  // below what is kept: those stay
  CHECK(a.cached_bytes() == 2 * SB);
  CHECK_FALSE(a.keeps(256));
  CHECK(a.deallocate(p2, SB) == arena::range{p2, SB});  // beyond the new size: released
  a.set_cache_bytes(8 * SB);
  std::uintptr_t const q = *a.allocate(SB);
  CHECK_FALSE(a.deallocate(q, SB).has_value());
  CHECK(a.cached_bytes() == 2 * SB);
  a.validate();
}

TEST_CASE("chunk_stream_arena: the hints may be read by another thread while the arena changes",
          "[arena][chunk]") {
  // The resource reads them without the arena's lock; under TSan a plain read would race.
  chunk_stream_arena a{B, space, 0};
  std::atomic<bool> done{false};
  std::size_t seen_superblock = 0;
  bool shrank                 = false;
  bool beyond                 = false;
  std::thread reader{[&] {
    while (!done.load(std::memory_order_acquire)) {
      std::size_t const sb = a.largest_superblock_hint();
      shrank               = shrank || sb < seen_superblock;  // it never decreases
      seen_superblock      = sb;
      beyond               = beyond || a.largest_free_block_hint() > space;
    }
  }};
  for (std::size_t i = 0; i < 2000; ++i) {
    std::size_t const size = SB * (1 + i % 4);
    a.add_superblock(B, size);  // cache 0: the free below releases it
    std::uintptr_t const p = *a.allocate(256);
    CHECK(a.largest_free_block_hint() == size - 256);
    CHECK(a.deallocate(p, 256) == arena::range{B, size});
    CHECK(a.largest_free_block_hint() == 0);
  }
  done.store(true, std::memory_order_release);
  reader.join();
  CHECK_FALSE(shrank);
  CHECK_FALSE(beyond);
  CHECK(a.largest_superblock_hint() == 4 * SB);
}
