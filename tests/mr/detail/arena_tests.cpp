/**
 * @file arena_tests.cpp
 * @brief Tests of the host bookkeeping of arena_memory_resource (rmm::mr::detail::arena):
 * global_arena and stream arena (chunk_stream_arena) edge cases and misuse errors. The randomised
 * operation sequences checked against a reference model are in arena_model_tests.cpp.
 */
#include "chunk_stream_arena_test_helpers.hpp"
#include "free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace arena = rmm::mr::detail::arena;
using arena::global_arena;
using stream_arena = rmm::test::test_stream_arena;  // chunk_stream_arena over a fake range
using rmm::test::hex;
using rmm::test::require_invalid_argument;

constexpr std::size_t KiB  = 1024;
constexpr std::size_t MiB  = 1024 * KiB;
constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = 0x7f0000000000;  // fake arena base

using tickets = std::vector<arena::ticket>;

}  // namespace

TEST_CASE("arena constants", "[arena]") {
  STATIC_REQUIRE(arena::superblock_size == 2 * MiB);
  STATIC_REQUIRE(arena::allocation_granularity == 256);
  STATIC_REQUIRE(arena::minimum_arena_size == arena::superblock_size);
  REQUIRE(global_arena::superblock_size_for(256) == SB);
  REQUIRE(global_arena::superblock_size_for(SB) == SB);
  REQUIRE(global_arena::superblock_size_for(SB + 256) == 2 * SB);
  REQUIRE_FALSE(global_arena::superblock_size_for(~std::size_t{0} - 255).has_value());
  REQUIRE(arena::round_up(1, 256) == 256);
  REQUIRE_FALSE(arena::round_up(~std::size_t{0}, 256).has_value());
}

TEST_CASE("global_arena rejects bad ranges, naming them", "[arena]") {
  require_invalid_argument([] { global_arena{B, 0}; }, {"global_arena", "+0)"});
  require_invalid_argument([] { global_arena{B, SB - 256}; }, {std::to_string(SB - 256)});
  require_invalid_argument([] { global_arena{B + 1, SB}; }, {hex(B + 1)});
  require_invalid_argument([] { global_arena{B, SB + 1}; }, {std::to_string(SB + 1)});
  require_invalid_argument([] { global_arena{~std::uintptr_t{0} - 255, SB}; }, {"wrap"});
}

TEST_CASE("global_arena carves superblocks from the front of free memory and coalesces returns",
          "[arena]") {
  global_arena g{B, 8 * SB};
  REQUIRE(g.free_bytes() == 8 * SB);
  auto a = g.acquire(256);
  REQUIRE(a);
  CHECK(a->base == B);
  CHECK(a->size == SB);
  CHECK(a->tickets.empty());
  auto b = g.acquire(SB + 256);  // rounded to two superblocks
  REQUIRE(b);
  CHECK(b->base == B + SB);
  CHECK(b->size == 2 * SB);
  CHECK(g.free_bytes() == 5 * SB);
  g.release(a->base, a->size, 3);
  g.release(b->base, b->size, 5);
  CHECK(g.free_ranges().size() == 1);  // coalesced with the untouched rest
  CHECK(g.free_bytes() == 8 * SB);
  CHECK(g.tickets_in(B, 8 * SB) == tickets{3, 5});
  g.validate();

  // A grant covering both releases carries both tickets; the rest of a piece keeps its ticket.
  auto c = g.acquire(2 * SB);
  REQUIRE(c);
  CHECK(c->base == B);
  CHECK(c->tickets == tickets{3, 5});
  CHECK(g.tickets_in(B + 2 * SB, SB) == tickets{5});
  CHECK(g.num_ticket_pieces() == 1);
  g.validate();
  auto d = g.acquire(256);
  REQUIRE(d);
  CHECK(d->base == B + 2 * SB);
  CHECK(d->tickets == tickets{5});
  CHECK(g.num_ticket_pieces() == 0);
  auto e = g.acquire(SB);
  REQUIRE(e);
  CHECK(e->tickets.empty());  // never released: nothing to wait for
  g.validate();
}

TEST_CASE("global_arena: tail smaller than a superblock, exhaustion, misuse", "[arena]") {
  global_arena g{B, 2 * SB + 512};
  auto a = g.acquire(SB);
  auto b = g.acquire(SB);
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(g.acquire(768));  // 512 bytes left
  auto t = g.acquire(512);      // falls back to the exact size
  REQUIRE(t);
  CHECK(t->base == B + 2 * SB);
  CHECK(t->size == 512);
  CHECK_FALSE(g.acquire(256));
  CHECK(g.free_bytes() == 0);
  CHECK(g.largest_free_block() == 0);
  require_invalid_argument([&] { static_cast<void>(g.acquire(0)); }, {"acquire of 0 bytes"});
  require_invalid_argument([&] { static_cast<void>(g.acquire(100)); }, {"100"});
  require_invalid_argument([&] { g.release(B - SB, SB, 1); }, {"outside the arena", hex(B - SB)});
  g.release(a->base, a->size, 1);
  require_invalid_argument([&] { g.release(a->base, a->size, 2); }, {"double free"});
  CHECK(g.tickets_in(B, SB) == tickets{1});  // unchanged by the failed release
  g.release(*b);                             // unused grant back (no tickets)
  g.release(t->base, t->size, arena::no_ticket);
  CHECK(g.free_bytes() == 2 * SB + 512);
  g.clear_tickets();
  CHECK(g.num_ticket_pieces() == 0);
  g.validate();
  CHECK(g.describe().find("global arena") != std::string::npos);
}

TEST_CASE("global_arena: acquire_exact takes exactly the request, by good fit, with tickets",
          "[arena]") {
  STATIC_REQUIRE(arena::large_request_min == SB);
  global_arena g{B, 4 * SB};
  auto a = g.acquire_exact(SB + 256);  // not rounded to two superblocks
  REQUIRE(a);
  CHECK(a->base == B);
  CHECK(a->size == SB + 256);
  auto b = g.acquire_exact(3 * SB - 512);  // the rest but 256 bytes
  REQUIRE(b);
  CHECK(b->base == B + SB + 256);
  CHECK(g.free_bytes() == 256);
  CHECK_FALSE(g.acquire_exact(512));
  g.release(a->base, a->size, 4);
  auto c = g.acquire_exact(SB);  // good fit: a's range (the other is 256 bytes), with a's ticket
  REQUIRE(c);
  CHECK(c->base == B);
  CHECK(c->tickets == tickets{4});
  CHECK(g.tickets_in(B + SB, 256) == tickets{4});  // the rest of the piece keeps it
  require_invalid_argument([&] { static_cast<void>(g.acquire_exact(0)); },
                           {"acquire_exact of 0 bytes"});
  require_invalid_argument([&] { static_cast<void>(g.acquire_exact(SB + 1)); },
                           {std::to_string(SB + 1)});
  g.release(*b);
  g.release(c->base, c->size, arena::no_ticket);
  CHECK(g.free_bytes() == 4 * SB);
  g.validate();
}

TEST_CASE("global_arena: large blocks are known by base until released", "[arena]") {
  global_arena g{B, 8 * SB};
  auto sb = g.acquire(SB);  // a superblock: not a large block
  REQUIRE(sb);
  auto a = g.acquire_exact(SB + 256);
  auto b = g.acquire_exact(3 * SB);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(g.num_large_blocks() == 2);
  CHECK(g.large_bytes() == 4 * SB + 256);
  CHECK(g.large_size_at(a->base) == SB + 256);
  CHECK(g.large_size_at(b->base) == 3 * SB);
  CHECK(g.large_size_at(sb->base) == 0);           // a superblock
  CHECK(g.large_size_at(a->base + 256) == 0);      // inside a block, not its start
  CHECK(g.large_size_at(b->base + b->size) == 0);  // free memory
  CHECK(g.large_size_at(B - SB) == 0);             // outside the arena
  CHECK(g.describe().find("2 large blocks") != std::string::npos);
  g.validate();
  // A wrong size is refused and the block stays large.
  require_invalid_argument([&] { g.release(a->base, SB, arena::no_ticket); }, {std::to_string(SB)});
  CHECK(g.large_size_at(a->base) == SB + 256);
  g.release(a->base, a->size, 3);
  CHECK(g.large_size_at(a->base) == 0);
  CHECK(g.num_large_blocks() == 1);
  CHECK(g.large_bytes() == 3 * SB);
  // keep_large: a large block kept by a stream arena becomes an ordinary grant.
  auto k = g.acquire_exact(SB);
  REQUIRE(k);
  CHECK(g.num_large_blocks() == 2);
  g.keep_large(k->base);
  CHECK(g.large_size_at(k->base) == 0);
  CHECK(g.num_large_blocks() == 1);
  g.keep_large(k->base);  // no longer large: nothing
  CHECK(g.num_large_blocks() == 1);
  g.validate();
  g.release(*k);
  // The same memory granted again as a superblock is not a large block.
  auto again = g.acquire(SB);
  REQUIRE(again);
  CHECK(again->base == a->base);
  CHECK(g.large_size_at(again->base) == 0);
  g.release(*again);
  // release_large: the check and the release in one; nothing changes unless the size matches.
  CHECK(g.release_large(b->base, SB) == 3 * SB);  // the wrong size: reported, b stays large
  CHECK(g.release_large(sb->base, SB) == 0);      // a superblock
  CHECK(g.release_large(B - SB, SB) == 0);        // outside the arena
  CHECK(g.large_size_at(b->base) == 3 * SB);
  auto const u = g.acquire_exact_untracked(2 * SB + 512);  // a large block, its base alone
  REQUIRE(u);
  CHECK(g.large_size_at(*u) == 2 * SB + 512);
  CHECK(g.num_large_blocks() == 2);
  CHECK(g.release_large(*u, 2 * SB + 512) == 2 * SB + 512);
  CHECK(g.large_size_at(*u) == 0);
  CHECK(g.release_large(*u, 2 * SB + 512) == 0);  // twice: nothing
  CHECK_FALSE(g.acquire_exact_untracked(8 * SB));
  require_invalid_argument([&] { static_cast<void>(g.acquire_exact_untracked(SB + 1)); },
                           {std::to_string(SB + 1)});
  g.validate();
  g.release(*sb);
  CHECK(g.release_large(b->base, 3 * SB) == 3 * SB);
  CHECK(g.num_large_blocks() == 0);
  CHECK(g.large_bytes() == 0);
  CHECK(g.free_bytes() == 8 * SB);
  g.validate();
}

TEST_CASE("global_arena merges equal-ticket pieces and keeps sets on grants given back",
          "[arena]") {
  global_arena g{B, 4 * SB};
  std::vector<arena::superblock_grant> gs;
  for (int i = 0; i < 4; ++i) {
    gs.push_back(*g.acquire(SB));
  }
  g.release(gs[0].base, SB, 7);
  g.release(gs[1].base, SB, 7);
  CHECK(g.num_ticket_pieces() == 1);
  g.release(gs[2].base, SB, 8);
  CHECK(g.num_ticket_pieces() == 2);
  auto big = g.acquire(3 * SB);
  REQUIRE(big);
  CHECK(big->tickets == tickets{7, 8});
  g.release(*big);  // given back unused: the whole range waits on both
  CHECK(g.tickets_in(B + SB, 256) == tickets{7, 8});
  g.validate();
}

TEST_CASE("stream_arena: first fit within superblocks, no merging across their edges", "[arena]") {
  stream_arena s;
  CHECK_FALSE(s.allocate(256));
  s.add_superblock(B + SB, SB);
  s.add_superblock(B, SB);  // adjacent, lower
  auto p = s.allocate(SB);  // whole lower superblock
  REQUIRE(p == B);
  auto q = s.allocate(SB / 2);
  REQUIRE(q == B + SB);
  CHECK_FALSE(s.allocate(SB));  // SB/2 free, and free blocks never span two superblocks
  CHECK(s.allocated_bytes() == SB + SB / 2);
  CHECK(s.held_bytes() == 2 * SB);
  CHECK(s.num_free_superblocks() == 0);
  s.validate();
  CHECK_FALSE(s.deallocate(*p, SB));  // fully free, kept (cache not full)
  CHECK(s.num_free_superblocks() == 1);
  CHECK(s.free_blocks().size() == 2);  // not merged with the other superblock's free tail
  CHECK_FALSE(s.allocate(SB + SB / 2));
  s.validate();
  CHECK(s.owns(B));
  CHECK(s.owns(B + 2 * SB - 1));
  CHECK_FALSE(s.owns(B + 2 * SB));
  CHECK_FALSE(s.owns(B - 1));
  CHECK(s.describe().find("2 superblocks") != std::string::npos);
}

TEST_CASE("stream_arena: a rejected 0-byte free in an entirely free superblock changes nothing",
          "[arena]") {
  stream_arena s;
  s.add_superblock(B, SB);
  REQUIRE(s.num_free_superblocks() == 1);
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B, 0)); }, {});
  CHECK(s.num_free_superblocks() == 1);  // the rollback used to drop it from the free set
  s.validate();
  CHECK(s.allocate(SB) == B);
}

TEST_CASE("stream_arena coalesces frees and returns superblocks by policy", "[arena]") {
  stream_arena s{2 * SB};
  s.add_superblock(B, SB);
  std::vector<std::uintptr_t> blocks;
  for (int i = 0; i < 8; ++i) {
    blocks.push_back(*s.allocate(SB / 8));
  }
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(blocks[i] == B + i * (SB / 8));  // address-ordered first fit
  }
  CHECK_FALSE(s.deallocate(blocks[1], SB / 8));
  CHECK_FALSE(s.deallocate(blocks[3], SB / 8));
  CHECK_FALSE(s.deallocate(blocks[2], SB / 8));  // joins 1 and 3
  CHECK(s.free_blocks() ==
        std::vector<std::pair<std::uintptr_t, std::size_t>>{{blocks[1], 3 * (SB / 8)}});
  CHECK(s.allocate(2 * (SB / 8)) == blocks[1]);  // lowest fit
  s.validate();

  SECTION("a large superblock goes back as soon as it is free") {
    s.add_superblock(B + 4 * SB, 3 * SB);
    auto big = s.allocate(3 * SB);
    REQUIRE(big == B + 4 * SB);
    auto r = s.deallocate(*big, 3 * SB);
    REQUIRE(r);
    CHECK(*r == arena::range{B + 4 * SB, 3 * SB});
    CHECK_FALSE(s.owns(B + 4 * SB));
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
    CHECK(released.size() == 2);
    CHECK(s.num_free_superblocks() == 0);
    CHECK_FALSE(s.deallocate(*x, SB));  // first free one: kept
    for (std::size_t i = 0; i < 8; ++i) {
      if (i < 1 || i > 3) {  // 1-2 live as one block, 3 already free
        static_cast<void>(s.deallocate(blocks[i], SB / 8));
      }
    }
    CHECK(s.num_free_superblocks() == 1);
    auto r = s.deallocate(blocks[1], 2 * (SB / 8));  // second: kept (cache holds max 2)
    CHECK_FALSE(r);
    CHECK(s.num_free_superblocks() == 2);
    s.add_superblock(B + 6 * SB, SB);
    auto y = s.allocate(SB);  // lowest fit: B (the first free superblock)
    REQUIRE(y == B);
    CHECK(s.num_free_superblocks() == 2);
    auto z = s.deallocate(*y, SB);  // 2 already cached: this one goes back
    REQUIRE(z);
    CHECK(*z == arena::range{B, SB});
    s.validate();
  }
}

TEST_CASE("stream_arena misuse is rejected, naming the block", "[arena]") {
  stream_arena s;
  s.add_superblock(B, SB);
  auto p = s.allocate(1024);
  REQUIRE(p);
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B + SB, 256)); },
                           {"not inside one superblock", hex(B + SB)});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(B + SB - 256, 512)); },
                           {"not inside one superblock"});
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 2048)); }, {"exceeds"});
  static_cast<void>(s.deallocate(*p, 512));
  require_invalid_argument([&] { static_cast<void>(s.deallocate(*p, 512)); }, {"double free"});
  require_invalid_argument([&] { s.add_superblock(B + SB / 2, SB); }, {"overlaps"});
  require_invalid_argument([&] { s.add_superblock(B + 3 * SB + 1, SB); }, {"misaligned"});
  require_invalid_argument([&] { static_cast<void>(s.allocate(0)); }, {"size 0"});
  s.validate();
}
