/**
 * @file tlsf_free_list_marks_tests.cpp
 * @brief Tests of tlsf_free_list::allocate_marked, marked_size and deallocate_marked, with which
 * the arena's global arena tells the large blocks it hands to no stream from its superblocks.
 */
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace {

using rmm::mr::detail::tlsf_free_list;
constexpr std::uintptr_t base = 0x10000;
constexpr std::size_t unit    = 256;

}  // namespace

TEST_CASE("tlsf_free_list marks a block allocated marked until it is freed", "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 64 * unit);
  auto const a = list.allocate_marked(8 * unit);
  auto const b = list.allocate(4 * unit);
  REQUIRE(a == base);  // the same choice as allocate: the front of the free block
  REQUIRE(b == base + 8 * unit);
  CHECK(list.marked_size(*a) == 8 * unit);
  CHECK(list.marked_size(*b) == 0);                  // allocate: unmarked
  CHECK(list.marked_size(*a + unit) == 0);           // inside a block, not its start
  CHECK(list.marked_size(base + 12 * unit) == 0);    // the free rest
  CHECK(list.marked_size(base + 1000 * unit) == 0);  // unknown address
  CHECK_FALSE(list.allocate_marked(100 * unit));     // no fit: nothing marked or taken
  CHECK(list.free_bytes() == 52 * unit);
  CHECK_THROWS_AS(list.allocate_marked(unit + 1), std::invalid_argument);
  list.validate();
  // A wrong-size free is refused: the block stays allocated and marked.
  CHECK_THROWS_AS(list.deallocate(*a, 4 * unit), std::invalid_argument);
  CHECK(list.marked_size(*a) == 8 * unit);
  // deallocate reports the mark, which goes; the memory allocated again starts unmarked.
  CHECK(list.deallocate(*a, 8 * unit));
  CHECK(list.marked_size(*a) == 0);
  list.validate();
  auto const c = list.allocate(8 * unit);
  REQUIRE(c == base);
  CHECK(list.marked_size(*c) == 0);
  // unmark clears a mark, reports the size, and does nothing where none is set.
  auto const d = list.allocate_marked(4 * unit, 0);
  REQUIRE(d);
  CHECK(list.unmark(*d) == 4 * unit);
  CHECK(list.marked_size(*d) == 0);
  CHECK(list.unmark(*d) == 0);
  CHECK(list.unmark(base + 1000 * unit) == 0);
  CHECK_FALSE(list.deallocate(*d, 4 * unit));
  CHECK_FALSE(list.deallocate(*c, 8 * unit));
  CHECK_FALSE(list.deallocate(*b, 4 * unit));
  CHECK(list.free_bytes() == 64 * unit);
  list.validate();
}

TEST_CASE("tlsf_free_list: marks through joins and carved ranges", "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 32 * unit);
  auto const a = list.allocate_marked(8 * unit);
  auto const b = list.allocate(8 * unit);
  REQUIRE(a);
  REQUIRE(b);
  // join_allocated keeps the first block's mark, over both sizes.
  list.join_allocated(*a, *b);
  CHECK(list.marked_size(*a) == 16 * unit);
  CHECK(list.deallocate(*a, 16 * unit));
  // allocate_range inside the memory that was marked: unmarked.
  list.allocate_range(base, base + 2 * unit, 4 * unit);
  CHECK(list.marked_size(base + 2 * unit) == 0);
  list.validate();
  CHECK_FALSE(list.deallocate(base + 2 * unit, 4 * unit));
  CHECK(list.free_bytes() == 32 * unit);
  list.validate();
}

TEST_CASE("tlsf_free_list: deallocate_marked frees a marked block of the given size only",
          "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 32 * unit);
  auto const a = list.allocate_marked(8 * unit);
  auto const b = list.allocate(4 * unit);
  auto const c = list.allocate_marked(4 * unit);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  // Nothing changes where no marked block starts, or for another size (which it reports).
  CHECK(list.deallocate_marked(*b, 4 * unit) == 0);                 // allocated, unmarked
  CHECK(list.deallocate_marked(*a + unit, 7 * unit) == 0);          // inside a block
  CHECK(list.deallocate_marked(base + 16 * unit, 16 * unit) == 0);  // the free rest
  CHECK(list.deallocate_marked(base + 1000 * unit, unit) == 0);     // unknown address
  CHECK(list.deallocate_marked(*a, 4 * unit) == 8 * unit);          // the wrong size
  CHECK(list.marked_size(*a) == 8 * unit);
  CHECK(list.free_bytes() == 16 * unit);
  list.validate();
  // The right size frees it, unmarked, merged with its free neighbours as deallocate merges.
  CHECK(list.deallocate_marked(*c, 4 * unit) == 4 * unit);
  CHECK(list.marked_size(*c) == 0);
  CHECK(list.free_bytes() == 20 * unit);
  CHECK(list.largest_free_block() == 20 * unit);     // c and the rest: one block
  CHECK(list.deallocate_marked(*c, 4 * unit) == 0);  // twice: no longer marked, nothing changes
  CHECK(list.deallocate_marked(*a, 8 * unit) == 8 * unit);
  CHECK(list.deallocate(*b, 4 * unit) == false);
  CHECK(list.free_bytes() == 32 * unit);
  CHECK(list.largest_free_block() == 32 * unit);
  list.validate();
}
