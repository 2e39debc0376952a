/**
 * @file tlsf_free_list_tests.cpp
 * @brief Tests of rmm::mr::detail::tlsf_free_list: edge cases, misuse errors, and growing and
 * trimming a region in place. The randomised comparison with a reference model is in
 * tlsf_free_list_model_tests.cpp.
 */
#include "free_list_test_helpers.hpp"
#include "tlsf_free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace rmm::test::tlsf;  // NOLINT(google-build-using-namespace)
using rmm::test::hex;
using rmm::test::require_invalid_argument;

constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

using trailing = std::optional<std::pair<std::size_t, tag_t>>;

}  // namespace

TEST_CASE("tlsf_free_list rejects a granularity that is not a power of two", "[detail]") {
  for (std::size_t g : {std::size_t{0}, std::size_t{3}, std::size_t{384}}) {
    require_invalid_argument([g] { tlsf_free_list list{g}; }, {std::to_string(g)});
  }
  REQUIRE(tlsf_free_list{1}.granularity() == 1);
}

TEST_CASE("tlsf_free_list starts empty", "[detail]") {
  tlsf_free_list list{256};
  REQUIRE(list.free_bytes() == 0);
  REQUIRE(list.largest_free_block() == 0);
  REQUIRE(list.num_free_blocks() == 0);
  REQUIRE_FALSE(list.allocate(256).has_value());
  REQUIRE(list.take_free_regions().empty());
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list validates regions", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x10000, 0x1000);
  require_invalid_argument([&] { list.insert_region(0x20000, 0); }, {"0"});
  require_invalid_argument([&] { list.insert_region(0x20000, 300); }, {"300"});
  require_invalid_argument([&] { list.insert_region(0x20080, 256); }, {"0x20080"});
  require_invalid_argument([&] { list.insert_region(MAX - 255, 256); }, {"wraps"});
  // Overlaps: inside, across the start, across the end, enclosing, identical.
  for (auto const& [base, size] : std::vector<range>{{0x10100, 0x100},
                                                     {0xff00, 0x200},
                                                     {0x10f00, 0x200},
                                                     {0xf000, 0x3000},
                                                     {0x10000, 0x1000}}) {
    require_invalid_argument([&, b = base, s = size] { list.insert_region(b, s); },
                             {hex(base), "overlaps"});
  }
  REQUIRE_NOTHROW(list.insert_region(0x11000, 0x1000));  // touching is fine
  REQUIRE_NOTHROW(list.insert_region(0xf000, 0x1000));
  REQUIRE(list.total_bytes() == 0x3000);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list validates allocation sizes", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x10000, 0x10000);
  require_invalid_argument([&] { list.allocate(0); }, {"size 0"});
  require_invalid_argument([&] { list.allocate(100); }, {"size 100"});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list splits from the front and coalesces both neighbours", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x100000, 0x1000);
  auto const a = list.allocate(0x100);
  auto const b = list.allocate(0x200);
  auto const c = list.allocate(0x300);
  REQUIRE(a == std::optional<std::uintptr_t>{0x100000});
  REQUIRE(b == std::optional<std::uintptr_t>{0x100100});
  REQUIRE(c == std::optional<std::uintptr_t>{0x100300});
  REQUIRE(list.num_free_blocks() == 1);
  list.deallocate(*a, 0x100);
  list.deallocate(*c, 0x300);  // merges with the tail
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE(list.largest_free_block() == 0xd00);
  list.deallocate(*b, 0x200);  // merges with both
  REQUIRE(list.num_free_blocks() == 1);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE(list.allocated_bytes() == 0);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list never merges adjacent regions", "[detail]") {
  tlsf_free_list list{256};
  auto const r1 = list.insert_region(0x1000, 0x1000);
  auto const r2 = list.insert_region(0x2000, 0x1000);
  REQUIRE(r1 != r2);
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE_FALSE(list.allocate(0x2000).has_value());
  auto const p = list.allocate(0x1000);
  auto const q = list.allocate(0x1000);
  REQUIRE(p.has_value());
  REQUIRE(q.has_value());
  list.deallocate(*p, 0x1000);
  list.deallocate(*q, 0x1000);
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list finds a fit that lies only in the request's own size class", "[detail]") {
  // With 256-byte granules, 64 and 65 granules share a class of width 2. A request for 65
  // rounds up past that class; only the fallback scan of the own class can find the block.
  tlsf_free_list list{256};
  list.insert_region(0x100000, 64 * 256);
  list.insert_region(0x200000, 65 * 256);
  REQUIRE(list.largest_free_block() == 65 * 256);
  auto const p = list.allocate(65 * 256);
  REQUIRE(p == std::optional<std::uintptr_t>{0x200000});
  REQUIRE_FALSE(list.allocate(65 * 256).has_value());
  REQUIRE(list.allocate(64 * 256) == std::optional<std::uintptr_t>{0x100000});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list handles a wide top size class", "[detail]") {
  // Sizes 2^40 + k * 2^30 granules all fall in one class of width 2^35 granules.
  tlsf_free_list list{1};
  std::size_t const base = std::size_t{1} << 40U;
  std::vector<std::size_t> sizes{base + (std::size_t{3} << 30U),
                                 base + (std::size_t{7} << 30U),
                                 base + (std::size_t{5} << 30U)};
  std::uintptr_t at = std::uintptr_t{1} << 44U;
  for (std::size_t s : sizes) {
    list.insert_region(at, s);
    at += s + (std::size_t{1} << 30U);
  }
  REQUIRE(list.largest_free_block() == sizes[1]);
  auto const p = list.allocate(sizes[1]);  // only one block fits; rounding overshoots the class
  REQUIRE(p.has_value());
  REQUIRE(list.largest_free_block() == sizes[2]);
  REQUIRE(list.allocate(sizes[2] - 1).has_value());  // leaves a 1-byte tail
  REQUIRE(list.largest_free_block() == sizes[0]);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list handles sizes near the top of the address space", "[detail]") {
  tlsf_free_list list{1};
  list.insert_region(0, MAX);  // [0, 2^64 - 1): rounding the request up would overflow
  REQUIRE(list.largest_free_block() == MAX);
  auto const p = list.allocate(MAX);
  REQUIRE(p == std::optional<std::uintptr_t>{0});
  REQUIRE(list.largest_free_block() == 0);
  list.deallocate(0, MAX);
  REQUIRE(list.allocate(MAX - 1) == std::optional<std::uintptr_t>{0});
  REQUIRE(list.largest_free_block() == 1);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list reports misuse on deallocate and stays unchanged", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0xa0000, 0x10000);
  auto const p = list.allocate(0x400);
  auto const q = list.allocate(0x400);
  REQUIRE(p.has_value());
  REQUIRE(q.has_value());
  auto const before = blocks_of(list);

  SECTION("unknown pointer") {
    require_invalid_argument([&] { list.deallocate(0x5000, 0x400); },
                             {"unknown pointer", "0x5000", "1024"});
  }
  SECTION("interior pointer") {
    require_invalid_argument([&] { list.deallocate(*p + 0x100, 0x300); },
                             {"unknown pointer", hex(*p + 0x100)});
  }
  SECTION("wrong size") {
    require_invalid_argument([&] { list.deallocate(*q, 0x800); }, {hex(*q), "2048", "1024"});
  }
  SECTION("double free") {
    list.deallocate(*q, 0x400);  // q's block is now the start of the free tail
    auto const after_free = blocks_of(list);
    require_invalid_argument([&] { list.deallocate(*q, 0x400); }, {"double free", hex(*q)});
    REQUIRE(blocks_of(list) == after_free);
    return;
  }
  REQUIRE(blocks_of(list) == before);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list releases exactly the fully free regions", "[detail]") {
  tlsf_free_list list{256};
  auto const r1 = list.insert_region(0x30000, 0x1000);
  auto const r2 = list.insert_region(0x10000, 0x2000);
  auto const r3 = list.insert_region(0x20000, 0x1000);
  auto const p  = list.allocate(0x1000);  // exact fit in the first class that holds 0x1000
  REQUIRE(p.has_value());
  std::size_t const busy = *p == 0x30000 ? r1 : (*p == 0x20000 ? r3 : r2);
  for (auto r : {r1, r2, r3}) {
    REQUIRE(list.region_fully_free(r) == (r != busy));
  }
  std::vector<range> expected;
  list.for_each_region([&](std::size_t id, std::uintptr_t b, std::size_t s, bool fully_free) {
    REQUIRE(fully_free == (id != busy));
    if (fully_free) {
      expected.emplace_back(b, s);
    }
  });
  REQUIRE(list.take_free_regions() == expected);
  REQUIRE(list.num_regions() == 1);
  require_invalid_argument([&] { static_cast<void>(list.region_fully_free(r1 == busy ? r2 : r1)); },
                           {"region"});
  require_invalid_argument([] { static_cast<void>(tlsf_free_list{256}.region_fully_free(7)); },
                           {"7"});
  REQUIRE(list.free_bytes() + list.allocated_bytes() == list.total_bytes());
  list.deallocate(*p, 0x1000);
  REQUIRE(list.take_free_regions().size() == 1);
  REQUIRE(list.total_bytes() == 0);
  auto const again = list.insert_region(0x10000, 0x1000);  // ids and descriptors are reused
  REQUIRE(list.region_fully_free(again));
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list extend_region grows a free last block of the same tag", "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x1000);
  auto const a  = list.allocate(0x400);
  REQUIRE(a == std::optional<std::uintptr_t>{0x10000});
  REQUIRE(list.trailing_free_block(id) == trailing{{0xc00, 0}});

  list.extend_region(id, 0x1000);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{0x10000, 0x400, false, 0}, {0x10400, 0x1c00, true, 0}});
  REQUIRE(list.region_base(id) == 0x10000);
  REQUIRE(list.region_size(id) == 0x2000);
  REQUIRE(list.trailing_free_block(id) == trailing{{0x1c00, 0}});
  REQUIRE(list.num_free_blocks() == 1);
  REQUIRE(list.free_bytes() == 0x1c00);
  REQUIRE(list.free_bytes(0) == 0x1c00);
  REQUIRE(list.allocated_bytes() == 0x400);
  REQUIRE(list.total_bytes() == 0x2000);
  // The grown block moved to its new size class: it is found whole.
  REQUIRE(list.largest_free_block() == 0x1c00);
  REQUIRE(list.allocate(0x1c00) == std::optional<std::uintptr_t>{0x10400});
  REQUIRE(list.trailing_free_block(id) == std::nullopt);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list extend_region appends a block after an allocated last block",
          "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x1000);
  REQUIRE(list.allocate(0x1000) == std::optional<std::uintptr_t>{0x10000});
  REQUIRE(list.trailing_free_block(id) == std::nullopt);

  list.extend_region(id, 0x800, 2);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{0x10000, 0x1000, false, 0}, {0x11000, 0x800, true, 2}});
  REQUIRE(list.trailing_free_block(id) == trailing{{0x800, 2}});
  REQUIRE(list.free_bytes(2) == 0x800);
  REQUIRE(list.num_free_blocks(2) == 1);
  REQUIRE(list.total_bytes() == 0x1800);
  REQUIRE_FALSE(list.allocate(0x800, 0).has_value());  // tag 2's memory only
  // Freeing the front with tag 2 merges with the new block, which was the last: the region is
  // then one free block and goes back whole.
  list.deallocate(0x10000, 0x1000, 2);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(list.trailing_free_block(id) == trailing{{0x1800, 2}});
  REQUIRE(list.take_free_regions() == std::vector<range>{{0x10000, 0x1800}});
  REQUIRE(list.total_bytes() == 0);
}

TEST_CASE("tlsf_free_list extend_region does not merge with a free tail of another tag",
          "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x1000, 1);
  list.extend_region(id, 0x1000, 0);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{0x10000, 0x1000, true, 1}, {0x11000, 0x1000, true, 0}});
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE(list.trailing_free_block(id) == trailing{{0x1000, 0}});
  REQUIRE(list.region_fully_free(id));
  REQUIRE(list.take_free_regions().empty());  // fully free, but not one block
  REQUIRE(list.retag(0, 1) == 0x1000);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(list.trailing_free_block(id) == trailing{{0x2000, 1}});
  // Extending again with the (now) tail's tag grows that block.
  list.extend_region(id, 0x100, 1);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{0x10000, 0x2100, true, 1}});
  REQUIRE(list.take_free_regions() == std::vector<range>{{0x10000, 0x2100}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list extend_region rejects bad requests and stays unchanged", "[detail]") {
  tlsf_free_list list{256};
  auto const low                = list.insert_region(0xf000, 0x1000);   // ends where `mid` starts
  auto const mid                = list.insert_region(0x10000, 0x1000);  // 0x800 below `high`
  auto const high               = list.insert_region(0x11800, 0x800);
  std::uintptr_t const top_base = MAX - 0xfff;  // [top_base, +0x800) ends 0x800 below 2^64
  auto const top                = list.insert_region(top_base, 0x800);
  REQUIRE(list.allocate(0x100).has_value());
  auto const before = blocks_of(list);
  auto const total  = list.total_bytes();
  auto const tags   = list.num_tags();

  SECTION("unknown id") {
    require_invalid_argument([&] { list.extend_region(99, 0x100); }, {"unknown region id 99"});
  }
  SECTION("zero or unaligned size") {
    require_invalid_argument([&] { list.extend_region(mid, 0, 5); },
                             {"extend_region",
                              "region " + std::to_string(mid),
                              "0x10000",
                              "by 0 bytes",
                              "multiple of 256"});
    require_invalid_argument([&] { list.extend_region(mid, 300, 5); },
                             {"by 300 bytes", "multiple of 256"});
  }
  SECTION("wraps around the address space") {
    require_invalid_argument([&] { list.extend_region(top, 0x800); },
                             {hex(top_base), "by 2048 bytes", "wraps"});
  }
  SECTION("overlaps the next region") {
    require_invalid_argument([&] { list.extend_region(low, 0x100); },
                             {"region " + std::to_string(low), "overlaps", "0x10000"});
    require_invalid_argument([&] { list.extend_region(mid, 0x900, 3); },
                             {"by 2304 bytes", "overlaps", "0x11800"});
  }
  REQUIRE(blocks_of(list) == before);
  REQUIRE(list.total_bytes() == total);
  REQUIRE(list.num_tags() == tags);  // a rejected call creates no tag index
  REQUIRE_NOTHROW(list.validate());
  // Up to the next region, or to the top of the address space, is fine.
  list.extend_region(mid, 0x800);
  list.extend_region(top, 0x700);
  list.extend_region(high, 0x1000);  // nothing above it but `top`
  REQUIRE(list.region_size(mid) == 0x1800);
  REQUIRE(list.region_size(top) == 0xf00);
  REQUIRE(list.region_size(high) == 0x1800);
  REQUIRE(list.total_bytes() == total + 0x1f00);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list shrink_region shortens or removes the free last block", "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x4000);
  REQUIRE(list.allocate(0x1000) == std::optional<std::uintptr_t>{0x10000});

  list.shrink_region(id, 0x2000);  // inside the free block [0x11000, +0x3000): shortened
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{0x10000, 0x1000, false, 0}, {0x11000, 0x1000, true, 0}});
  REQUIRE(list.region_size(id) == 0x2000);
  REQUIRE(list.trailing_free_block(id) == trailing{{0x1000, 0}});
  REQUIRE(list.free_bytes() == 0x1000);
  REQUIRE(list.total_bytes() == 0x2000);
  REQUIRE(list.largest_free_block() == 0x1000);  // relinked in its new class
  REQUIRE(list.num_free_blocks() == 1);

  list.shrink_region(id, 0x1000);  // at the block's start: removed
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) == std::vector<block_view>{{0x10000, 0x1000, false, 0}});
  REQUIRE(list.trailing_free_block(id) == std::nullopt);
  REQUIRE(list.num_free_blocks() == 0);
  REQUIRE(list.free_bytes() == 0);
  REQUIRE(list.largest_free_block() == 0);
  REQUIRE(list.total_bytes() == 0x1000);
  REQUIRE(list.region_size(id) == 0x1000);
  // The removed block's address is free for a new block again.
  list.extend_region(id, 0x800, 1);
  REQUIRE(blocks_of(list) ==
          std::vector<block_view>{{0x10000, 0x1000, false, 0}, {0x11000, 0x800, true, 1}});
  list.deallocate(0x10000, 0x1000);
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(list.take_free_regions().empty());  // tags 0 and 1
}

TEST_CASE("tlsf_free_list shrink_region trims a free tail of any tag", "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x2000, 3);
  list.shrink_region(id, 0x100);  // a single free block is shortened, never removed
  REQUIRE(blocks_of(list) == std::vector<block_view>{{0x10000, 0x100, true, 3}});
  REQUIRE(list.free_bytes(3) == 0x100);
  // Removing a last block whose neighbour is free with another tag leaves that neighbour last.
  list.extend_region(id, 0x300, 1);
  list.shrink_region(id, 0x100);
  REQUIRE(blocks_of(list) == std::vector<block_view>{{0x10000, 0x100, true, 3}});
  REQUIRE(list.trailing_free_block(id) == trailing{{0x100, 3}});
  REQUIRE(list.free_bytes(1) == 0);
  REQUIRE(list.num_free_blocks(1) == 0);
  REQUIRE(list.take_free_regions() == std::vector<range>{{0x10000, 0x100}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list shrink_region rejects bad requests and stays unchanged", "[detail]") {
  tlsf_free_list list{256};
  auto const full = list.insert_region(0x20000, 0x1000);
  REQUIRE(list.allocate(0x1000) == std::optional<std::uintptr_t>{0x20000});
  auto const id = list.insert_region(0x10000, 0x3000);
  REQUIRE(list.allocate(0x2000) == std::optional<std::uintptr_t>{0x10000});
  REQUIRE(list.trailing_free_block(id) == trailing{{0x1000, 0}});  // [0x12000, +0x1000)
  auto const before = blocks_of(list);
  auto const total  = list.total_bytes();

  SECTION("unknown id") {
    require_invalid_argument([&] { list.shrink_region(42, 0x100); }, {"unknown region id 42"});
  }
  SECTION("new size zero, equal to or above the size") {
    for (std::size_t s : {std::size_t{0}, std::size_t{0x3000}, std::size_t{0x3100}}) {
      require_invalid_argument([&] { list.shrink_region(id, s); },
                               {"shrink_region",
                                "region " + std::to_string(id),
                                "0x10000",
                                "to " + std::to_string(s) + " bytes",
                                "below the size"});
    }
  }
  SECTION("unaligned new size") {
    require_invalid_argument([&] { list.shrink_region(id, 0x2f80); },
                             {"to 12160 bytes", "multiple of 256"});
  }
  SECTION("last block allocated") {
    require_invalid_argument([&] { list.shrink_region(full, 0x100); },
                             {"region " + std::to_string(full), "to 256 bytes", "is allocated"});
  }
  SECTION("cut below the free last block") {
    require_invalid_argument([&] { list.shrink_region(id, 0x1f00); },
                             {"to 7936 bytes", "below its free last block", "[0x12000, +4096)"});
  }
  REQUIRE(blocks_of(list) == before);
  REQUIRE(list.total_bytes() == total);
  REQUIRE_NOTHROW(list.validate());
  list.shrink_region(id, 0x2000);  // exactly at the free block: fine
  REQUIRE(list.region_size(id) == 0x2000);
  REQUIRE(list.trailing_free_block(id) == std::nullopt);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list region queries reject unknown ids", "[detail]") {
  tlsf_free_list list{256};
  auto const id = list.insert_region(0x10000, 0x1000);
  REQUIRE(list.region_base(id) == 0x10000);
  REQUIRE(list.region_size(id) == 0x1000);
  REQUIRE(list.take_free_regions().size() == 1);
  for (std::size_t bad : {id, std::size_t{5}}) {
    std::string const name = "unknown region id " + std::to_string(bad);
    require_invalid_argument([&] { static_cast<void>(list.region_base(bad)); }, {name});
    require_invalid_argument([&] { static_cast<void>(list.region_size(bad)); }, {name});
    require_invalid_argument([&] { static_cast<void>(list.trailing_free_block(bad)); }, {name});
  }
}
