/**
 * @file bitmap_stream_arena_tests.cpp
 * @brief Tests of bitmap_stream_arena: stream_arena's scenarios run against both classes
 * (templated), edge cases (runs across word and leaf boundaries, a request of a whole superblock,
 * misuse that must change nothing), and randomised sequences checked after every operation
 * against a byte-per-unit reference model and against stream_arena in lockstep. A hidden
 * micro-benchmark ("[.][bench]") times both classes.
 */
#include "bitmap_stream_arena_model.hpp"
#include "chunk_stream_arena_test_helpers.hpp"
#include "free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/bitmap_stream_arena.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace arena = rmm::mr::detail::arena;
using arena::bitmap_stream_arena;
using stream_arena = rmm::test::test_stream_arena;  // chunk_stream_arena over a fake range
using rmm::test::hex;
using rmm::test::require_invalid_argument;
using blocks = std::vector<std::pair<std::uintptr_t, std::size_t>>;

constexpr std::size_t KiB  = 1024;
constexpr std::size_t MiB  = 1024 * KiB;
constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = 0x7f0000000000;  // fake base

// Drives a bitmap_stream_arena, a stream_arena and the reference model with the same operations,
// over superblocks from a global_arena (2 MiB multiples up to 64 MiB, and exact-size tails) and
// odd-sized superblocks at fake addresses, and compares all three after every step.
class harness {
 public:
  harness(std::uint32_t seed, std::size_t cache)
      : rng_{seed}, g_{B, arena_size}, bm_{cache}, list_{cache}, model_{cache} {}

  void step() {
    auto const op = pick(100);
    if (op < 45) {
      allocate(request_size());
    } else if (op < 80) {
      free_random(pick(5) != 0);
    } else if (op < 83) {
      release_all();
    } else if (op < 86) {
      add_odd_superblock();
    } else {
      misuse();
    }
    check();
  }

  void drain() {
    while (!live_.empty()) {
      free_block(live_.begin(), true);
    }
    release_all();
    check();
    REQUIRE(bm_.held_bytes() == 0);
    REQUIRE(g_.free_bytes() == arena_size);
  }

  [[nodiscard]] std::size_t grants() const { return grants_; }
  [[nodiscard]] std::size_t misuses() const { return misuses_; }
  [[nodiscard]] std::size_t released() const { return released_; }

 private:
  static constexpr std::size_t arena_size = 100 * MiB + 768;  // the tail gives exact-size grants
  static constexpr std::uintptr_t odd_base =
      B + (std::uintptr_t{2} << 30U);  // inside the fake range

  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng_);
  }

  std::size_t request_size() {
    switch (pick(10)) {
      case 0:
      case 1:
      case 2:
      case 3:
        return 256 * (1 + pick(16));
      case 4:
      case 5:
        return 256 * (1 + pick(256));
      case 6:
        return 256 * (1 + pick(SB / 256));
      case 7:
        return 256 * (1 + pick(4 * SB / 256));
      case 8:
        return pick(2) == 0 ? SB : 256 * (1 + pick(3 * SB / 256));
      default:
        return pick(8) == 0 ? (1 + pick(32)) * SB : 256 * (1 + pick(64));
    }
  }

  void allocate(std::size_t n) {
    auto const p = bm_.allocate(n);
    REQUIRE(list_.allocate(n) == p);
    REQUIRE(model_.allocate(n) == p);
    if (!p) {
      auto grant = g_.acquire(n);
      if (!grant) {
        release_all();
        grant = g_.acquire(n);
      }
      if (!grant) {
        REQUIRE(g_.largest_free_block() < n);
        return;
      }
      ++grants_;
      add_superblock(grant->base, grant->size);
      allocate(n);
      return;
    }
    live_.emplace(*p, n);
  }

  void add_superblock(std::uintptr_t base, std::size_t size) {
    bm_.add_superblock(base, size);
    list_.add_superblock(base, size);
    model_.add_superblock(base, size);
  }

  void add_odd_superblock() {
    std::size_t const size = 256 * (1 + pick(pick(2) == 0 ? 40 : 3000));
    add_superblock(odd_next_, size);
    odd_next_ += size + 256 * pick(3);  // adjacent to the previous one, or not
  }

  void free_random(bool allow_release) {
    if (!live_.empty()) {
      free_block(std::next(live_.begin(), static_cast<std::ptrdiff_t>(pick(live_.size()))),
                 allow_release);
    }
  }

  void free_block(std::map<std::uintptr_t, std::size_t>::iterator it, bool allow_release) {
    auto const [p, n] = *it;
    live_.erase(it);
    REQUIRE(model_.can_deallocate(p, n));
    auto const r = bm_.deallocate(p, n, allow_release);
    REQUIRE(list_.deallocate(p, n, allow_release) == r);
    REQUIRE(model_.deallocate(p, n, allow_release) == r);
    if (r) {
      give_back(*r);
    }
  }

  void give_back(arena::range r) {
    ++released_;
    if (r.base < odd_base) {
      g_.release(r.base, r.size, arena::no_ticket);
    }
  }

  void release_all() {
    auto const out = bm_.release_free_superblocks();
    REQUIRE(list_.release_free_superblocks() == out);
    REQUIRE(model_.release_free_superblocks() == out);
    for (auto const& r : out) {
      give_back(r);
    }
  }

  // A free or a superblock the model says is invalid: both arenas throw and change nothing.
  void misuse() {
    std::uintptr_t p = 0;
    std::size_t n    = 256 * (1 + pick(4));
    auto const fb    = model_.free_blocks();
    switch (pick(7)) {
      case 0:  // inside free memory (a double free), possibly running into live memory
        if (fb.empty()) {
          return;
        }
        {
          auto const& [b, s] = fb[pick(fb.size())];
          p                  = b + 256 * pick(s / 256);
        }
        break;
      case 1:  // a live block and the unit after it
        if (live_.empty()) {
          return;
        }
        p = live_.begin()->first;
        n = live_.begin()->second + 256;
        break;
      case 2:  // misaligned, or a size that is not a multiple of 256, or zero
        if (live_.empty()) {
          return;
        }
        p = live_.rbegin()->first + (pick(2) == 0 ? 128 : 0);
        n = pick(2) == 0 ? 0 : 100;
        break;
      case 3:  // an address no superblock holds
        p = pick(2) == 0 ? B - 256 : odd_next_ + 4096;
        break;
      case 4:  // more than the superblock holds from there
        if (live_.empty()) {
          return;
        }
        p = live_.begin()->first;
        n = 200 * MiB;
        break;
      case 5: {  // a superblock overlapping one already held
        std::vector<std::pair<std::uintptr_t, std::size_t>> sbs;
        bm_.for_each_superblock(
            [&](std::uintptr_t b, std::size_t s, std::size_t) { sbs.emplace_back(b, s); });
        if (sbs.empty()) {
          return;
        }
        auto const& [b, s]      = sbs[pick(sbs.size())];
        std::uintptr_t const at = b + 256 * pick(s / 256);
        auto const before       = rmm::test::snapshot_of(bm_);
        require_invalid_argument([&] { bm_.add_superblock(at, 512); }, {"overlaps", hex(at)});
        REQUIRE_THROWS_AS(list_.add_superblock(at, 512), std::invalid_argument);
        REQUIRE(rmm::test::snapshot_of(bm_) == before);
        ++misuses_;
        return;
      }
      default:  // a random range somewhere inside a superblock
        if (live_.empty()) {
          return;
        }
        p = live_.begin()->first + 256 * pick(64);
        n = 256 * (1 + pick(64));
        break;
    }
    if (model_.can_deallocate(p, n)) {
      return;  // a legal free of parts of live blocks: not misuse
    }
    auto const before = rmm::test::snapshot_of(bm_);
    require_invalid_argument([&] { static_cast<void>(bm_.deallocate(p, n)); },
                             {"bitmap_stream_arena", hex(p)});
    REQUIRE_THROWS_AS(list_.deallocate(p, n), std::invalid_argument);
    REQUIRE(rmm::test::snapshot_of(bm_) == before);
    ++misuses_;
  }

  void check() {
    bm_.validate();
    list_.validate();
    g_.validate();
    auto const s = rmm::test::snapshot_of(bm_);
    REQUIRE(rmm::test::snapshot_of(list_) == s);
    REQUIRE(rmm::test::snapshot_of(model_) == s);
    std::size_t live = 0;
    for (auto const& [p, n] : live_) {
      live += n;
    }
    REQUIRE(s.allocated == live);
    for (std::uintptr_t const probe :
         {B + 256 * pick(arena_size / 256), odd_base + 256 * pick(20000), B - 1}) {
      REQUIRE(bm_.owns(probe) == model_.owns(probe));
      REQUIRE(list_.owns(probe) == bm_.owns(probe));
    }
  }

  std::mt19937_64 rng_;
  arena::global_arena g_;
  bitmap_stream_arena bm_;
  stream_arena list_;
  rmm::test::reference_stream_arena model_;
  std::map<std::uintptr_t, std::size_t> live_;
  std::uintptr_t odd_next_{odd_base};
  std::size_t grants_{};
  std::size_t misuses_{};
  std::size_t released_{};
};

}  // namespace

TEMPLATE_TEST_CASE("stream arenas: first fit within superblocks, no merging across their edges",
                   "[arena][bitmap]",
                   stream_arena,
                   bitmap_stream_arena) {
  TestType s;
  CHECK_FALSE(s.allocate(256));
  s.add_superblock(B + SB, SB);
  s.add_superblock(B, SB);  // adjacent, lower
  CHECK(s.num_free_superblocks() == 2);
  CHECK(s.cached_bytes() == 2 * SB);
  auto p = s.allocate(SB);  // a request of exactly a superblock: the whole lower one
  REQUIRE(p == B);
  auto q = s.allocate(SB / 2);
  REQUIRE(q == B + SB);
  CHECK_FALSE(s.allocate(SB));  // SB/2 free, and free blocks never span two superblocks
  CHECK(s.allocated_bytes() == SB + SB / 2);
  CHECK(s.held_bytes() == 2 * SB);
  CHECK(s.free_bytes() == SB / 2);
  CHECK(s.largest_free_block() == SB / 2);
  CHECK(s.num_free_superblocks() == 0);
  CHECK(s.cached_bytes() == 0);
  s.validate();
  CHECK_FALSE(s.deallocate(*p, SB));  // fully free, kept (cache not full)
  CHECK(s.num_free_superblocks() == 1);
  CHECK(s.free_blocks() == blocks{{B, SB}, {B + SB + SB / 2, SB / 2}});  // not merged
  CHECK_FALSE(s.allocate(SB + SB / 2));
  s.validate();
  CHECK(s.owns(B));
  CHECK(s.owns(B + 2 * SB - 1));
  CHECK_FALSE(s.owns(B + 2 * SB));
  CHECK_FALSE(s.owns(B - 1));
  CHECK(s.describe().find("2 superblocks") != std::string::npos);
  std::vector<std::size_t> seen;
  s.for_each_superblock([&](std::uintptr_t b, std::size_t size, std::size_t allocated) {
    seen.push_back(static_cast<std::size_t>(b - B) + size + allocated);
  });
  CHECK(seen == std::vector<std::size_t>{SB, SB + SB + SB / 2});
}

TEMPLATE_TEST_CASE("stream arenas coalesce frees and return superblocks by policy",
                   "[arena][bitmap]",
                   stream_arena,
                   bitmap_stream_arena) {
  TestType s{2 * SB};
  s.add_superblock(B, SB);
  std::vector<std::uintptr_t> b;
  for (std::size_t i = 0; i < 8; ++i) {
    b.push_back(*s.allocate(SB / 8));
    CHECK(b[i] == B + i * (SB / 8));  // address-ordered first fit
  }
  CHECK_FALSE(s.deallocate(b[1], SB / 8));
  CHECK_FALSE(s.deallocate(b[3], SB / 8));
  CHECK_FALSE(s.deallocate(b[2], SB / 8));  // joins 1 and 3
  CHECK(s.free_blocks() == blocks{{b[1], 3 * (SB / 8)}});
  CHECK(s.allocate(2 * (SB / 8)) == b[1]);  // lowest fit
  s.validate();

  SECTION("a superblock larger than the cache goes back as soon as it is free") {
    s.add_superblock(B + 4 * SB, 3 * SB);
    auto big = s.allocate(3 * SB);
    REQUIRE(big == B + 4 * SB);
    auto r = s.deallocate(*big, 3 * SB);
    REQUIRE(r);
    CHECK(*r == arena::range{B + 4 * SB, 3 * SB});
    CHECK_FALSE(s.owns(B + 4 * SB));
    CHECK(s.held_bytes() == SB);
    s.validate();
  }
  SECTION("without allow_release a free superblock is kept beyond the cache") {
    s.add_superblock(B + 4 * SB, 3 * SB);
    auto big = s.allocate(3 * SB);
    CHECK_FALSE(s.deallocate(*big, 3 * SB, false));
    CHECK(s.cached_bytes() == 3 * SB);
    CHECK(s.num_free_superblocks() == 1);
    s.validate();
  }
  SECTION("free superblocks are kept up to the cache size, then returned") {
    s.add_superblock(B + 2 * SB, SB);
    s.add_superblock(B + 3 * SB, SB);
    s.add_superblock(B + 5 * SB, SB);
    CHECK(s.num_free_superblocks() == 3);  // added ones count; policy acts on frees
    auto x = s.allocate(SB);
    REQUIRE(x == B + 2 * SB);
    auto released = s.release_free_superblocks();
    CHECK(released == std::vector<arena::range>{{B + 3 * SB, SB}, {B + 5 * SB, SB}});
    CHECK(s.num_free_superblocks() == 0);
    CHECK(s.cached_bytes() == 0);
    CHECK_FALSE(s.deallocate(*x, SB));  // first free one: kept
    for (std::size_t i = 0; i < 8; ++i) {
      if (i < 1 || i > 3) {  // 1-2 live as one block, 3 already free
        CHECK_FALSE(s.deallocate(b[i], SB / 8));
      }
    }
    CHECK(s.num_free_superblocks() == 1);
    CHECK_FALSE(s.deallocate(b[1], 2 * (SB / 8)));  // second: kept (cache holds max 2)
    CHECK(s.num_free_superblocks() == 2);
    s.add_superblock(B + 6 * SB, SB);
    auto y = s.allocate(SB);  // lowest fit: B (the first free superblock)
    REQUIRE(y == B);
    CHECK(s.num_free_superblocks() == 2);
    auto z = s.deallocate(*y, SB);  // 2 already cached: this one goes back
    REQUIRE(z);
    CHECK(*z == arena::range{B, SB});
    CHECK(s.cached_bytes() == 2 * SB);
    s.validate();
  }
}

TEMPLATE_TEST_CASE("stream arenas reject misuse, naming the block, and change nothing",
                   "[arena][bitmap]",
                   stream_arena,
                   bitmap_stream_arena) {
  TestType s;
  s.add_superblock(B, SB);
  s.add_superblock(B + 4 * SB, SB);
  auto p = s.allocate(1024);
  auto q = s.allocate(1024);
  REQUIRE(p == B);
  REQUIRE(q == B + 1024);
  auto const before = rmm::test::snapshot_of(s);
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B + SB, 256)); },
                           {"not inside one superblock", hex(B + SB)});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B - 256, 256)); },
                           {"not inside one superblock", hex(B - 256)});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B + SB - 256, 512)); },
                           {"not inside one superblock"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 4096)); }, {"exceeds"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p + 128, 256)); },
                           {"not aligned"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 100)); }, {"size 100"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 0)); }, {"size 0"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B + 2048, 256)); },
                           {"double free", hex(B + 2048)});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*q + 768, 512)); },
                           {"double free"});  // half live, half free
  require_invalid_argument([&] { s.add_superblock(B + SB / 2, SB); }, {"overlaps"});
  require_invalid_argument([&] { s.add_superblock(B + 4 * SB - 256, 512); }, {"overlaps"});
  require_invalid_argument([&] { s.add_superblock(B + 3 * SB + 1, SB); }, {"misaligned"});
  require_invalid_argument([&] { s.add_superblock(B + 3 * SB, 0); }, {"empty"});
  require_invalid_argument([&] { static_cast<void>(s.allocate(0)); }, {"size 0"});
  require_invalid_argument([&] { static_cast<void>(s.allocate(300)); }, {"size 300"});
  CHECK(rmm::test::snapshot_of(s) == before);
  s.validate();
  CHECK_FALSE(s.deallocate(*p, 512));  // a part of a live block: accepted, as stream_arena does
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 512)); }, {"double free"});
  s.validate();
}

TEST_CASE("bitmap_stream_arena: a zero-byte free in an entirely free superblock changes nothing",
          "[arena][bitmap]") {
  // stream_arena rejects this too, but leaves its free-superblock set without the superblock.
  bitmap_stream_arena s;
  s.add_superblock(B, SB);
  auto const before = rmm::test::snapshot_of(s);
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B, 0)); }, {"size 0"});
  CHECK(rmm::test::snapshot_of(s) == before);
  s.validate();
  CHECK(s.release_free_superblocks() == std::vector<arena::range>{{B, SB}});
}

TEST_CASE("bitmap_stream_arena: lowest fit across word and leaf boundaries of a superblock",
          "[arena][bitmap]") {
  bitmap_stream_arena s;
  stream_arena l;
  s.add_superblock(B, SB);
  l.add_superblock(B, SB);
  std::size_t const units = SB / 256;
  for (std::size_t i = 0; i < units; ++i) {  // 8192 blocks of one unit
    REQUIRE(s.allocate(256) == l.allocate(256));
  }
  CHECK_FALSE(s.allocate(256));
  auto free_units = [&](std::size_t from, std::size_t to) {
    for (std::size_t u = from; u < to; ++u) {
      REQUIRE_FALSE(s.deallocate(B + u * 256, 256));
      REQUIRE_FALSE(l.deallocate(B + u * 256, 256));
    }
  };
  free_units(60, 70);      // crosses a word boundary (64 units)
  free_units(100, 105);    // inside a word
  free_units(500, 530);    // crosses a leaf boundary (512 units)
  free_units(1000, 2100);  // spans whole leaves
  free_units(units - 3, units);
  CHECK(s.free_blocks() == l.free_blocks());
  CHECK(s.largest_free_block() == 1100 * 256);
  s.validate();
  for (std::size_t n : {5U, 10U, 5U, 30U, 1U, 1070U, 3U, 2U}) {
    INFO("units " << n);
    auto const a = s.allocate(n * 256);
    REQUIRE(a == l.allocate(n * 256));
    REQUIRE(a);
    s.validate();
  }
  CHECK(s.free_blocks() == l.free_blocks());
  CHECK(s.free_bytes() == l.free_bytes());
}

TEST_CASE("bitmap_stream_arena: a large superblock, allocated whole and in pieces",
          "[arena][bitmap]") {
  bitmap_stream_arena s{0};
  std::size_t const big = 1024 * MiB;  // 4 Mi units: 64 Ki words, 8 Ki leaves
  s.add_superblock(B, big);
  s.validate();
  auto p = s.allocate(big);
  REQUIRE(p == B);
  CHECK(s.largest_free_block() == 0);
  auto r = s.deallocate(B, big);  // cache 0: goes back at once
  REQUIRE(r);
  CHECK(*r == arena::range{B, big});
  CHECK(s.num_superblocks() == 0);
  s.add_superblock(B, big);
  auto a = s.allocate(256);
  auto b = s.allocate(big - 512);
  REQUIRE(a == B);
  REQUIRE(b == B + 256);
  CHECK(s.free_blocks() == blocks{{B + big - 256, 256}});
  CHECK_FALSE(s.deallocate(*b, big - 512));
  CHECK(s.free_blocks() == blocks{{B + 256, big - 256}});
  CHECK(s.allocate(big - 256) == B + 256);
  s.validate();
}

TEST_CASE("bitmap_stream_arena: randomised operations match the model and stream_arena",
          "[arena][bitmap]") {
  for (std::uint32_t seed : {1U, 2U, 3U, 42U, 2024U}) {
    INFO("seed " << seed);
    harness h{seed, (seed % 3) * SB + (seed % 2) * 256};
    for (int i = 0; i < 2000; ++i) {
      h.step();
    }
    CHECK(h.grants() > 0);
    CHECK(h.misuses() > 0);
    CHECK(h.released() > 0);
    h.drain();
  }
}
