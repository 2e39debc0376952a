/**
 * @file tlsf_free_list_marks_tests.cpp
 * @brief Tests of tlsf_free_list::mark_allocated and marked_size, with which the arena's global
 * arena tells the large blocks it hands to no stream from its superblocks.
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

TEST_CASE("tlsf_free_list marks an allocated block until it is freed", "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 64 * unit);
  auto const a = list.allocate(8 * unit);
  auto const b = list.allocate(4 * unit);
  REQUIRE(a == base);
  REQUIRE(b == base + 8 * unit);
  CHECK(list.marked_size(*a) == 0);  // unmarked by default
  list.mark_allocated(*a);
  CHECK(list.marked_size(*a) == 8 * unit);
  CHECK(list.marked_size(*b) == 0);                  // only the block marked
  CHECK(list.marked_size(*a + unit) == 0);           // inside a block, not its start
  CHECK(list.marked_size(base + 12 * unit) == 0);    // the free rest
  CHECK(list.marked_size(base + 1000 * unit) == 0);  // unknown address
  list.validate();
  // A wrong-size free is refused: the block stays allocated and marked.
  CHECK_THROWS_AS(list.deallocate(*a, 4 * unit), std::invalid_argument);
  CHECK(list.marked_size(*a) == 8 * unit);
  // Freed, the mark goes; the memory allocated again starts unmarked.
  list.deallocate(*a, 8 * unit);
  CHECK(list.marked_size(*a) == 0);
  list.validate();
  auto const c = list.allocate(8 * unit);
  REQUIRE(c == base);
  CHECK(list.marked_size(*c) == 0);
  list.deallocate(*c, 8 * unit);
  list.deallocate(*b, 4 * unit);
  CHECK(list.free_bytes() == 64 * unit);
  list.validate();
}

TEST_CASE("tlsf_free_list::mark_allocated rejects what is not an allocated block's start",
          "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 16 * unit);
  auto const a = list.allocate(4 * unit);
  REQUIRE(a == base);
  auto const fails_naming = [&](std::uintptr_t p) {
    try {
      list.mark_allocated(p);
    } catch (std::invalid_argument const& e) {
      return std::string{e.what()}.find("mark_allocated") != std::string::npos;
    }
    return false;
  };
  CHECK(fails_naming(base + 4 * unit));    // the free rest
  CHECK(fails_naming(base + unit));        // inside the block
  CHECK(fails_naming(base + 100 * unit));  // unknown
  CHECK(list.marked_size(*a) == 0);
  list.validate();
}

TEST_CASE("tlsf_free_list: blocks carved from a marked block's memory and joins", "[detail]") {
  tlsf_free_list list{unit};
  list.insert_region(base, 32 * unit);
  auto const a = list.allocate(8 * unit);
  auto const b = list.allocate(8 * unit);
  REQUIRE(a);
  REQUIRE(b);
  list.mark_allocated(*a);
  // join_allocated keeps the first block's mark, over both sizes.
  list.join_allocated(*a, *b);
  CHECK(list.marked_size(*a) == 16 * unit);
  list.deallocate(*a, 16 * unit);
  // allocate_range inside the memory that was marked: unmarked.
  list.allocate_range(base, base + 2 * unit, 4 * unit);
  CHECK(list.marked_size(base + 2 * unit) == 0);
  list.validate();
  list.deallocate(base + 2 * unit, 4 * unit);
  CHECK(list.free_bytes() == 32 * unit);
  list.validate();
}
