/**
 * @file tlsf_free_list_holes_tests.cpp
 * @brief Tests of the tlsf_free_list members behind holes in the expandable pool:
 * allocate_range (take a chosen range out of a free block), join_allocated (join two adjacent
 * allocated blocks), free_neighbours (what a deallocation would merge with) and
 * region_allocated_blocks. Each refusal must throw std::invalid_argument naming the values and
 * leave the list unchanged.
 */
#include "free_list_test_helpers.hpp"
#include "tlsf_free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace rmm::test::tlsf;  // NOLINT(google-build-using-namespace)
using rmm::test::hex;
using rmm::test::require_invalid_argument;

constexpr std::size_t G          = 256;
constexpr std::uintptr_t base    = 0x10000;
constexpr std::uintptr_t nowhere = 0x900000;  // in no region

constexpr std::uintptr_t at(std::size_t units) { return base + units * G; }

using neighbours = std::pair<std::size_t, std::size_t>;

// Everything observable about the list, for "unchanged" checks.
struct snapshot {
  std::vector<block_view> blocks;
  std::size_t free_bytes, allocated_bytes, total_bytes, num_free_blocks, num_tags;
  std::vector<std::size_t> allocated_per_region;

  explicit snapshot(tlsf_free_list const& list)
      : blocks{blocks_of(list)},
        free_bytes{list.free_bytes()},
        allocated_bytes{list.allocated_bytes()},
        total_bytes{list.total_bytes()},
        num_free_blocks{list.num_free_blocks()},
        num_tags{list.num_tags()} {
    list.for_each_region([&](std::size_t id, std::uintptr_t, std::size_t, bool) {
      allocated_per_region.push_back(list.region_allocated_blocks(id));
    });
  }

  bool operator==(snapshot const& o) const {
    return blocks == o.blocks && free_bytes == o.free_bytes &&
           allocated_bytes == o.allocated_bytes && total_bytes == o.total_bytes &&
           num_free_blocks == o.num_free_blocks && num_tags == o.num_tags &&
           allocated_per_region == o.allocated_per_region;
  }
};

// f() must throw std::invalid_argument naming every fragment, and leave the list as it was.
template <typename F>
void require_refused(tlsf_free_list const& list, F&& f, std::vector<std::string> const& fragments) {
  snapshot const before{list};
  require_invalid_argument(std::forward<F>(f), fragments);
  REQUIRE(snapshot{list} == before);
  REQUIRE_NOTHROW(list.validate());
}

}  // namespace

// --- allocate_range ------------------------------------------------------------------------------

TEST_CASE("tlsf_free_list::allocate_range takes a range at the start, middle or end of a block",
          "[detail]") {
  tlsf_free_list list{G};
  auto const id = list.insert_region(base, 16 * G, 1);

  SECTION("start: the rest stays free with the block's tag") {
    list.allocate_range(base, base, 4 * G);
    REQUIRE(blocks_of(list) ==
            std::vector<block_view>{{at(0), 4 * G, false, 0}, {at(4), 12 * G, true, 1}});
    REQUIRE(list.free_bytes(1) == 12 * G);
    REQUIRE(list.allocated_bytes() == 4 * G);
    REQUIRE(list.region_allocated_blocks(id) == 1);
    REQUIRE_NOTHROW(list.validate());
    list.deallocate(base, 4 * G, 1);
  }
  SECTION("middle: free pieces before and after, both of the block's tag") {
    list.allocate_range(base, at(4), 4 * G);
    REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 4 * G, true, 1},
                                                       {at(4), 4 * G, false, 0},
                                                       {at(8), 8 * G, true, 1}});
    REQUIRE(list.num_free_blocks(1) == 2);
    REQUIRE(list.free_bytes(1) == 12 * G);
    REQUIRE(list.largest_free_block(1) == 8 * G);
    REQUIRE(list.region_allocated_blocks(id) == 1);
    REQUIRE_NOTHROW(list.validate());
    list.deallocate(at(4), 4 * G, 1);
  }
  SECTION("end: the region's last block is the range") {
    list.allocate_range(base, at(12), 4 * G);
    REQUIRE(blocks_of(list) ==
            std::vector<block_view>{{at(0), 12 * G, true, 1}, {at(12), 4 * G, false, 0}});
    REQUIRE_FALSE(list.trailing_free_block(id).has_value());
    REQUIRE(list.region_allocated_blocks(id) == 1);
    REQUIRE_NOTHROW(list.validate());
    list.deallocate(at(12), 4 * G, 1);
  }
  SECTION("the whole block") {
    list.allocate_range(base, base, 16 * G);
    REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 16 * G, false, 0}});
    REQUIRE(list.num_free_blocks() == 0);
    REQUIRE(list.free_bytes() == 0);
    REQUIRE_FALSE(list.region_fully_free(id));
    REQUIRE_NOTHROW(list.validate());
    list.deallocate(base, 16 * G, 1);
  }
  // Deallocated with the block's tag, the range merges back into one block.
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 16 * G, true, 1}});
  REQUIRE(list.num_free_blocks() == 1);
  REQUIRE(list.region_allocated_blocks(id) == 0);
  REQUIRE(list.largest_free_block(1) == 16 * G);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::allocate_range from a free block between allocated blocks", "[detail]") {
  tlsf_free_list list{G};
  auto const id = list.insert_region(base, 32 * G, 2);
  auto const a  = list.allocate(4 * G, 2);  // [0, 4)
  auto const b  = list.allocate(8 * G, 2);  // [4, 12)
  auto const c  = list.allocate(4 * G, 2);  // [12, 16)
  REQUIRE((a == at(0) && b == at(4) && c == at(12)));
  list.deallocate(*b, 8 * G, 2);  // free [4, 12) between a and c
  REQUIRE(list.region_allocated_blocks(id) == 2);

  list.allocate_range(at(4), at(6), 2 * G);  // middle: the free tail is followed by c
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 4 * G, false, 0},
                                                     {at(4), 2 * G, true, 2},
                                                     {at(6), 2 * G, false, 0},
                                                     {at(8), 4 * G, true, 2},
                                                     {at(12), 4 * G, false, 0},
                                                     {at(16), 16 * G, true, 2}});
  REQUIRE_NOTHROW(list.validate());
  list.allocate_range(at(8), at(10), 2 * G);  // end of a block that is followed by c
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 4 * G, false, 0},
                                                     {at(4), 2 * G, true, 2},
                                                     {at(6), 2 * G, false, 0},
                                                     {at(8), 2 * G, true, 2},
                                                     {at(10), 2 * G, false, 0},
                                                     {at(12), 4 * G, false, 0},
                                                     {at(16), 16 * G, true, 2}});
  REQUIRE(list.region_allocated_blocks(id) == 4);
  REQUIRE(list.free_bytes(2) == 20 * G);
  REQUIRE(list.allocated_bytes() == 12 * G);
  REQUIRE_NOTHROW(list.validate());

  // Freed with another tag, a range stays apart from its neighbours.
  list.deallocate(at(6), 2 * G, 3);
  REQUIRE(list.num_free_blocks(3) == 1);
  REQUIRE(list.num_free_blocks(2) == 3);
  REQUIRE_NOTHROW(list.validate());
  // Freed with the neighbours' tag, it merges with both.
  list.deallocate(at(10), 2 * G, 2);
  REQUIRE(list.retag_block(at(6), 3, 2) == 2 * G);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 4 * G, false, 0},
                                                     {at(4), 8 * G, true, 2},
                                                     {at(12), 4 * G, false, 0},
                                                     {at(16), 16 * G, true, 2}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::allocate_range refuses bad ranges and stays unchanged", "[detail]") {
  tlsf_free_list list{G};
  list.insert_region(base, 16 * G, 1);
  list.insert_region(at(16), 8 * G, 1);    // adjacent: a range must not cross into it
  list.allocate_range(base, base, 4 * G);  // free block [4, 16)
  std::uintptr_t const blk = at(4);

  auto refused =
      [&](std::uintptr_t block, std::uintptr_t ptr, std::size_t size, std::string const& why) {
        INFO("allocate_range(" << hex(block) << ", " << hex(ptr) << ", " << size << ")");
        require_refused(list,
                        [&] { list.allocate_range(block, ptr, size); },
                        {hex(block), hex(ptr), std::to_string(size) + " bytes", why});
      };

  SECTION("no free block starts at block") {
    refused(base, base, G, "no free block starts there");            // allocated
    refused(at(5), at(5), G, "no free block starts there");          // inside a free block
    refused(nowhere, nowhere, G, "no free block starts there");      // in no region
    refused(at(4) + G / 2, at(5), G, "no free block starts there");  // unaligned block
  }
  SECTION("unaligned address or size, or zero size") {
    refused(blk, blk + 16, G, "multiples of 256");
    refused(blk, blk, G + 1, "multiples of 256");
    refused(blk, blk, G / 2, "multiples of 256");
    refused(blk, blk, 0, "the size non-zero");
  }
  SECTION("range not inside the block") {
    std::string const inside = "not inside that block [" + hex(blk) + ", +3072)";
    refused(blk, base, 4 * G, inside);    // before the block
    refused(blk, at(3), 2 * G, inside);   // straddles its start
    refused(blk, at(12), 8 * G, inside);  // runs past its end (into the next region)
    refused(blk, at(16), G, inside);      // starts at its end
    refused(blk, at(17), G, inside);      // beyond it, in the next region
    refused(blk, blk, 13 * G, inside);    // one granule too long
    constexpr std::size_t huge = std::numeric_limits<std::size_t>::max() & ~(G - 1);
    refused(blk, at(5), huge, inside);  // would wrap around
  }
  // Still usable: the largest valid range succeeds.
  list.allocate_range(blk, blk, 12 * G);
  REQUIRE(list.free_bytes(1) == 8 * G);
  REQUIRE_NOTHROW(list.validate());
}

// --- join_allocated ------------------------------------------------------------------------------

TEST_CASE("tlsf_free_list::join_allocated makes one block of two adjacent ones", "[detail]") {
  tlsf_free_list list{G};
  auto const id = list.insert_region(base, 16 * G);
  auto const a  = list.allocate(4 * G);  // [0, 4)
  auto const b  = list.allocate(2 * G);  // [4, 6)
  auto const c  = list.allocate(3 * G);  // [6, 9)
  REQUIRE((a == at(0) && b == at(4) && c == at(6)));
  REQUIRE(list.region_allocated_blocks(id) == 3);

  list.join_allocated(*a, *b);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 6 * G, false, 0},
                                                     {at(6), 3 * G, false, 0},
                                                     {at(9), 7 * G, true, 0}});
  REQUIRE(list.region_allocated_blocks(id) == 2);
  REQUIRE(list.allocated_bytes() == 9 * G);
  REQUIRE(list.free_bytes() == 7 * G);
  REQUIRE_NOTHROW(list.validate());
  // The second block is gone: it can no longer be freed or named.
  require_refused(list, [&] { list.deallocate(*b, 2 * G); }, {hex(*b)});
  // Nor can the joined block be freed with its first part's size.
  require_refused(list, [&] { list.deallocate(*a, 4 * G); }, {hex(*a), std::to_string(4 * G)});

  list.join_allocated(*a, *c);  // again, with the result
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{at(0), 9 * G, false, 0}, {at(9), 7 * G, true, 0}});
  REQUIRE(list.region_allocated_blocks(id) == 1);
  REQUIRE_NOTHROW(list.validate());

  list.deallocate(*a, 9 * G);  // the sum: merges with the free rest
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 16 * G, true, 0}});
  REQUIRE(list.region_allocated_blocks(id) == 0);
  REQUIRE(list.region_fully_free(id));
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::join_allocated of the last block keeps the region's end right",
          "[detail]") {
  tlsf_free_list list{G};
  auto const id = list.insert_region(base, 8 * G, 1);
  list.allocate_range(base, at(2), 2 * G);   // holes, as the pool makes them: [2, 4)
  list.allocate_range(at(4), at(4), 4 * G);  // and [4, 8), the region's last block
  REQUIRE(list.region_allocated_blocks(id) == 2);
  list.join_allocated(at(2), at(4));
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{at(0), 2 * G, true, 1}, {at(2), 6 * G, false, 0}});
  REQUIRE(list.region_allocated_blocks(id) == 1);
  REQUIRE_FALSE(list.trailing_free_block(id).has_value());
  REQUIRE_NOTHROW(list.validate());
  // The region's last block is the joined one: growth lands after it.
  list.extend_region(id, 2 * G, 1);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 2 * G, true, 1},
                                                     {at(2), 6 * G, false, 0},
                                                     {at(8), 2 * G, true, 1}});
  REQUIRE_NOTHROW(list.validate());
  list.deallocate(at(2), 6 * G, 1);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{at(0), 10 * G, true, 1}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::join_allocated refuses what is not two adjacent allocated blocks",
          "[detail]") {
  tlsf_free_list list{G};
  auto const r1 = list.insert_region(base, 8 * G);
  auto const r2 = list.insert_region(at(8), 8 * G);  // adjacent to r1
  list.allocate_range(base, base, 2 * G);            // [0, 2)
  list.allocate_range(at(2), at(2), 2 * G);          // [2, 4)
  list.allocate_range(at(4), at(6), 2 * G);          // free [4, 6), allocated [6, 8): r1's end
  list.allocate_range(at(8), at(8), 2 * G);          // [8, 10): r2's start
  REQUIRE(list.region_allocated_blocks(r1) == 3);
  REQUIRE(list.region_allocated_blocks(r2) == 1);

  auto refused = [&](std::uintptr_t first, std::uintptr_t second) {
    INFO("join_allocated(" << hex(first) << ", " << hex(second) << ")");
    require_refused(list,
                    [&] { list.join_allocated(first, second); },
                    {hex(first), hex(second), "not two physically adjacent allocated blocks"});
  };
  refused(at(0), at(6));      // not adjacent: [2, 4) lies between
  refused(at(2), at(6));      // not adjacent: the free [4, 6) lies between
  refused(at(2), at(4));      // the second is free
  refused(at(4), at(6));      // the first is free
  refused(at(0), at(0));      // a block with itself
  refused(at(2), at(0));      // the wrong order
  refused(at(1), at(2));      // the first is inside a block
  refused(at(0), at(3));      // the second is inside a block
  refused(at(6), at(8));      // adjacent in memory, but in another region
  refused(nowhere, at(0));    // the first is in no region
  refused(at(8), nowhere);    // the block after the first is free (and not there)
  refused(at(0), at(2) + 1);  // unaligned second

  list.join_allocated(at(0), at(2));  // still usable
  REQUIRE(list.region_allocated_blocks(r1) == 2);
  REQUIRE_NOTHROW(list.validate());
}

// --- free_neighbours -----------------------------------------------------------------------------

TEST_CASE("tlsf_free_list::free_neighbours gives the free neighbours of the tag", "[detail]") {
  tlsf_free_list list{G};
  list.insert_region(base, 16 * G, 1);
  auto const a = list.allocate(4 * G, 1);  // [0, 4)
  auto const b = list.allocate(2 * G, 1);  // [4, 6)
  auto const c = list.allocate(2 * G, 1);  // [6, 8); free [8, 16) of tag 1 after it
  REQUIRE((a == at(0) && b == at(4) && c == at(6)));
  list.deallocate(*a, 4 * G, 2);  // free [0, 4) of tag 2

  REQUIRE(list.free_neighbours(*b, 2) == neighbours{4 * G, 0});
  REQUIRE(list.free_neighbours(*b, 1) == neighbours{0, 0});  // the prev has another tag
  REQUIRE(list.free_neighbours(*c, 1) == neighbours{0, 8 * G});
  REQUIRE(list.free_neighbours(*c, 2) == neighbours{0, 0});
  REQUIRE(list.free_neighbours(*b, 0) == neighbours{0, 0});  // a tag the list has
  REQUIRE(list.free_neighbours(*b, 9) == neighbours{0, 0});  // a tag it has never seen
  REQUIRE(list.num_tags() == 3);                             // ... and still has not

  // What deallocate then merges with.
  auto const [prev, next] = list.free_neighbours(*c, 1);
  list.deallocate(*c, 2 * G, 1);
  REQUIRE(list.largest_free_block(1) == prev + 2 * G + next);
  REQUIRE(list.free_neighbours(*b, 1) == neighbours{0, 10 * G});
  REQUIRE(list.free_neighbours(*b, 2) == neighbours{4 * G, 0});
  list.deallocate(*b, 2 * G, 2);
  REQUIRE(list.largest_free_block(2) == 6 * G);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::free_neighbours stops at region boundaries", "[detail]") {
  tlsf_free_list list{G};
  list.insert_region(base, 8 * G);    // r1: allocated [0, 4), free [4, 8)
  list.insert_region(at(8), 8 * G);   // r2: entirely allocated
  list.insert_region(at(16), 8 * G);  // r3: free [16, 20), allocated [20, 24)
  list.allocate_range(base, base, 4 * G);
  list.allocate_range(at(8), at(8), 8 * G);
  list.allocate_range(at(16), at(20), 4 * G);

  REQUIRE(list.free_neighbours(at(0), 0) == neighbours{0, 4 * G});  // at r1's start
  // r2's block has free blocks of the tag right before and after it, but in other regions.
  REQUIRE(list.free_neighbours(at(8), 0) == neighbours{0, 0});
  REQUIRE(list.free_neighbours(at(20), 0) == neighbours{4 * G, 0});  // at r3's end
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list::free_neighbours refuses a pointer that starts no allocated block",
          "[detail]") {
  tlsf_free_list list{G};
  list.insert_region(base, 16 * G, 1);
  list.allocate_range(base, at(4), 4 * G);  // free [0, 4), allocated [4, 8), free [8, 16)
  for (std::uintptr_t const p : {at(0), at(8), at(5), at(4) + 1, nowhere}) {
    INFO("free_neighbours(" << hex(p) << ")");
    require_refused(list,
                    [&] { static_cast<void>(list.free_neighbours(p, 1)); },
                    {hex(p), "not the start of an allocated block"});
  }
  REQUIRE(list.free_neighbours(at(4), 1) == neighbours{4 * G, 8 * G});
}

// --- region_allocated_blocks ---------------------------------------------------------------------

TEST_CASE("tlsf_free_list::region_allocated_blocks counts each region's allocated blocks",
          "[detail]") {
  tlsf_free_list list{G};
  auto const r1 = list.insert_region(base, 32 * G);
  auto const r2 = list.insert_region(at(64), 8 * G, 1);
  REQUIRE(list.region_allocated_blocks(r1) == 0);
  REQUIRE(list.region_allocated_blocks(r2) == 0);

  auto const a = list.allocate(4 * G);  // r1 [0, 4): r2 has another tag
  REQUIRE(a == at(0));
  REQUIRE(list.region_allocated_blocks(r1) == 1);
  REQUIRE(list.region_allocated_blocks(r2) == 0);

  list.allocate_range(at(64), at(66), 2 * G);  // r2, middle
  REQUIRE(list.region_allocated_blocks(r2) == 1);
  REQUIRE(list.region_allocated_blocks(r1) == 1);
  list.allocate_range(at(4), at(4), 2 * G);  // r1, at a free block's start
  list.allocate_range(at(6), at(6), 3 * G);
  REQUIRE(list.region_allocated_blocks(r1) == 3);
  list.join_allocated(at(4), at(6));
  REQUIRE(list.region_allocated_blocks(r1) == 2);
  list.deallocate(at(4), 5 * G);
  REQUIRE(list.region_allocated_blocks(r1) == 1);
  list.deallocate(*a, 4 * G);
  REQUIRE(list.region_allocated_blocks(r1) == 0);
  REQUIRE(list.region_allocated_blocks(r2) == 1);
  list.deallocate(at(66), 2 * G, 1);
  REQUIRE(list.region_allocated_blocks(r2) == 0);
  REQUIRE(list.region_fully_free(r1));
  REQUIRE_NOTHROW(list.validate());

  // Unknown ids: never issued, far off, and taken back.
  for (std::size_t const bad : {std::size_t{5}, std::size_t{1} << 40U}) {
    require_refused(list,
                    [&] { static_cast<void>(list.region_allocated_blocks(bad)); },
                    {"unknown region id " + std::to_string(bad)});
  }
  REQUIRE(list.take_free_regions().size() == 2);
  for (std::size_t const gone : {r1, r2}) {
    require_refused(list,
                    [&] { static_cast<void>(list.region_allocated_blocks(gone)); },
                    {"unknown region id " + std::to_string(gone)});
  }
}
