/**
 * @file address_ordered_free_list_tests.cpp
 * @brief Tests of rmm::mr::detail::address_ordered_free_list: edge cases and misuse errors. The
 * randomised sequences against the reference models: address_ordered_free_list_model_tests.cpp.
 */
#include "address_ordered_free_list_models.hpp"

#include <catch2/catch.hpp>

using namespace rmm::test::aofl;  // NOLINT(google-build-using-namespace)

TEST_CASE("address_ordered_free_list rejects a bad granularity", "[detail]") {
  require_invalid_argument([] { address_ordered_free_list l{0}; }, {"0"});
  require_invalid_argument([] { address_ordered_free_list l{48}; }, {"48"});
  REQUIRE(address_ordered_free_list{}.granularity() == 1);
}

TEST_CASE("address_ordered_free_list starts empty", "[detail]") {
  address_ordered_free_list list{256};
  REQUIRE(list.empty());
  REQUIRE(list.free_bytes() == 0);
  REQUIRE(list.largest_free_block() == 0);
  REQUIRE_FALSE(list.allocate_first_fit(256).has_value());
  REQUIRE_FALSE(list.contains_range(0, 256));
  REQUIRE(list.blocks().empty());
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list validates its arguments", "[detail]") {
  address_ordered_free_list list{256};
  list.insert(0x1000, 0x1000);
  require_invalid_argument([&] { list.insert(0x8000, 0); }, {"size 0"});
  require_invalid_argument([&] { list.insert(0x8000, 100); }, {"size 100"});
  require_invalid_argument([&] { list.insert(0x8010, 256); }, {"0x8010"});
  require_invalid_argument([&] { list.insert(MAX - 255, 256); }, {"wraps"});
  require_invalid_argument([&] { static_cast<void>(list.allocate_first_fit(0)); }, {"size 0"});
  require_invalid_argument([&] { static_cast<void>(list.allocate_first_fit(3)); }, {"size 3"});
  require_invalid_argument([&] { list.add_boundary(0x1001); }, {"0x1001"});
  require_invalid_argument([&] { list.remove_boundary(0x1000); }, {"0x1000", "not a boundary"});
  // Double frees: overlapping the free block in any way.
  for (auto const& [p, n] : std::vector<range>{
           {0x1000, 0x1000}, {0x1800, 0x100}, {0x800, 0x900}, {0x1f00, 0x200}, {0x0, 0x4000}}) {
    require_invalid_argument([&, p = p, n = n] { list.insert(p, n); }, {hex(p), "overlaps"});
  }
  require_invalid_argument([&] { list.remove_range(0x1f00, 0x200); }, {"0x1f00", "not entirely"});
  require_invalid_argument([&] { list.remove_range(0x3000, 0x100); }, {"0x3000"});
  REQUIRE(list.blocks() == std::vector<range>{{0x1000, 0x1000}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list coalesces on insert", "[detail]") {
  address_ordered_free_list list{16};
  list.insert(0x100, 0x10);
  list.insert(0x130, 0x10);
  REQUIRE(list.size() == 2);
  list.insert(0x110, 0x10);  // joins the previous block
  REQUIRE(list.blocks() == std::vector<range>{{0x100, 0x20}, {0x130, 0x10}});
  list.insert(0x140, 0x10);  // joins the block before it
  list.insert(0xf0, 0x10);   // joins the next block
  REQUIRE(list.blocks() == std::vector<range>{{0xf0, 0x30}, {0x130, 0x20}});
  list.insert(0x120, 0x10);  // joins both
  REQUIRE(list.blocks() == std::vector<range>{{0xf0, 0x60}});
  REQUIRE(list.free_bytes() == 0x60);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list allocates the lowest-addressed fit", "[detail]") {
  address_ordered_free_list list{1};
  list.insert(0x1000, 0x100);
  list.insert(0x2000, 0x1000);
  list.insert(0x4000, 0x200);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE(list.allocate_first_fit(0x200) == std::optional<std::uintptr_t>{0x2000});  // not 0x4000
  REQUIRE(list.allocate_first_fit(0x100) == std::optional<std::uintptr_t>{0x1000});  // exact
  REQUIRE(list.blocks() == std::vector<range>{{0x2200, 0xe00}, {0x4000, 0x200}});
  REQUIRE_FALSE(list.allocate_first_fit(0xe01).has_value());
  REQUIRE(list.allocate_first_fit(0xe00) == std::optional<std::uintptr_t>{0x2200});
  REQUIRE(list.largest_free_block() == 0x200);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list never merges across a boundary", "[detail]") {
  address_ordered_free_list list{16};
  list.add_boundary(0x200);
  list.insert(0x100, 0x100);
  list.insert(0x200, 0x100);
  REQUIRE(list.size() == 2);
  REQUIRE_FALSE(list.allocate_first_fit(0x200).has_value());
  require_invalid_argument([&] { list.insert(0x1f0, 0x20); }, {"0x1f0"});

  SECTION("removing the boundary merges the blocks") {
    list.remove_boundary(0x200);
    REQUIRE(list.blocks() == std::vector<range>{{0x100, 0x200}});
  }
  SECTION("boundaries are reference counted") {
    list.add_boundary(0x200);
    list.remove_boundary(0x200);
    REQUIRE(list.is_boundary(0x200));
    REQUIRE(list.size() == 2);
    list.remove_boundary(0x200);
    REQUIRE_FALSE(list.is_boundary(0x200));
    REQUIRE(list.size() == 1);
  }
  SECTION("adding a boundary splits the block that spans it") {
    list.add_boundary(0x180);
    REQUIRE(list.blocks() == std::vector<range>{{0x100, 0x80}, {0x180, 0x80}, {0x200, 0x100}});
    REQUIRE(list.largest_free_block() == 0x100);
  }
  SECTION("an insert may not cross a boundary") {
    list.add_boundary(0x400);
    require_invalid_argument([&] { list.insert(0x3f0, 0x20); }, {"0x3f0", "boundary at 0x400"});
    REQUIRE_NOTHROW(list.insert(0x300, 0x100));  // ends at it: fine
    REQUIRE_NOTHROW(list.insert(0x400, 0x100));  // starts at it: fine
    REQUIRE(list.size() == 3);
  }
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list removes ranges", "[detail]") {
  address_ordered_free_list list{16};
  list.insert(0x1000, 0x100);
  REQUIRE(list.contains_range(0x1000, 0x100));
  REQUIRE(list.contains_range(0x1040, 0x40));
  REQUIRE_FALSE(list.contains_range(0x1040, 0xd0));
  REQUIRE_FALSE(list.contains_range(0x1000, 0));
  list.remove_range(0x1040, 0x40);  // middle
  REQUIRE(list.blocks() == std::vector<range>{{0x1000, 0x40}, {0x1080, 0x80}});
  list.remove_range(0x1000, 0x10);  // front
  list.remove_range(0x10f0, 0x10);  // back
  REQUIRE(list.blocks() == std::vector<range>{{0x1010, 0x30}, {0x1080, 0x70}});
  list.remove_range(0x1010, 0x30);  // whole
  REQUIRE(list.blocks() == std::vector<range>{{0x1080, 0x70}});
  REQUIRE(list.free_bytes() == 0x70);
  list.insert(0x1000, 0x80);  // gives back the rest: one block again
  list.insert(0x10f0, 0x10);
  REQUIRE(list.blocks() == std::vector<range>{{0x1000, 0x100}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list handles the ends of the address space", "[detail]") {
  address_ordered_free_list list{1};
  list.insert(0, 16);
  list.insert(MAX - 16, 16);  // ends at 2^64 - 1, the last representable end
  list.add_boundary(0);
  list.add_boundary(8);
  REQUIRE(list.blocks() == std::vector<range>{{0, 8}, {8, 8}, {MAX - 16, 16}});
  REQUIRE(list.allocate_first_fit(16) == std::optional<std::uintptr_t>{MAX - 16});
  list.remove_boundary(8);
  list.remove_boundary(0);
  REQUIRE(list.blocks() == std::vector<range>{{0, 16}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list clears and iterates in address order", "[detail]") {
  address_ordered_free_list list{1};
  for (std::uintptr_t p : {0x500U, 0x100U, 0x300U}) {
    list.insert(p, 0x10);
  }
  std::vector<std::uintptr_t> seen;
  list.for_each([&](std::uintptr_t p, std::size_t s) {
    REQUIRE(s == 0x10);
    seen.push_back(p);
  });
  REQUIRE(seen == std::vector<std::uintptr_t>{0x100, 0x300, 0x500});
  list.add_boundary(0x310);
  list.clear();
  REQUIRE(list.empty());
  REQUIRE(list.num_boundaries() == 0);
  REQUIRE(list.largest_free_block() == 0);
  list.insert(0x100, 0x10);
  REQUIRE(list.size() == 1);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("address_ordered_free_list stays fast with many blocks in address order", "[detail]") {
  // Ascending inserts degenerate an unbalanced tree into a list; the treap must not.
  constexpr std::size_t n = 100000;
  address_ordered_free_list list{16};
  for (std::size_t i = 0; i < n; ++i) {
    list.insert(0x10000 + i * 0x100, 0x10 + 0x10 * (i % 8));  // gaps: nothing merges
  }
  REQUIRE(list.size() == n);
  REQUIRE(list.largest_free_block() == 0x80);
  for (std::size_t i = 0; i < n / 8; ++i) {  // each takes the lowest remaining 0x80 block
    REQUIRE(list.allocate_first_fit(0x80) == std::optional<std::uintptr_t>{0x10700 + i * 0x800});
  }
  REQUIRE(list.largest_free_block() == 0x70);
  REQUIRE_NOTHROW(list.validate());
}
