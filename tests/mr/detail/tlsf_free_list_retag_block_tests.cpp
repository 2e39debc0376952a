/**
 * @file tlsf_free_list_retag_block_tests.cpp
 * @brief Tests of tlsf_free_list::retag_block and retag_after, with which a stream that took a
 * block from another stream's free list also takes the rest of that free block (the pool uses
 * retag_after: O(1) under either keying).
 */
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

namespace {

using rmm::mr::detail::tlsf_free_list;
constexpr std::uintptr_t base = 0x10000;

// A list of 256-byte units under the given keying (retag_after must work under both).
tlsf_free_list make_list(tlsf_free_list::keyed_blocks keyed) {
  return tlsf_free_list{256, rmm::mr::detail::address_map::erase_mode::shift, keyed};
}

}  // namespace

TEST_CASE("tlsf_free_list::retag_block moves one free block and merges it", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(base, 64 * 256, 1);
  auto const a = list.allocate(8 * 256, 1);  // [0, 8): the rest [8, 64) stays free with tag 1
  REQUIRE(a == base);
  CHECK(list.retag_block(base + 8 * 256, 1, 2) == 56 * 256);
  CHECK(list.free_bytes(1) == 0);
  CHECK(list.free_bytes(2) == 56 * 256);
  CHECK(list.largest_free_block(2) == 56 * 256);
  list.validate();
  // Freed with tag 2 it merges with the moved block into one.
  list.deallocate(*a, 8 * 256, 2);
  CHECK(list.num_free_blocks(2) == 1);
  CHECK(list.largest_free_block(2) == 64 * 256);
  list.validate();
}

TEST_CASE(
    "tlsf_free_list::retag_block changes nothing unless a free block of the tag starts "
    "there",
    "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(base, 16 * 256, 1);
  auto const a = list.allocate(4 * 256, 1);
  REQUIRE(a);
  CHECK(list.retag_block(*a, 1, 2) == 0);              // allocated
  CHECK(list.retag_block(base + 5 * 256, 1, 2) == 0);  // inside a block
  CHECK(list.retag_block(base + 4 * 256, 3, 2) == 0);  // another tag
  CHECK(list.retag_block(base + 4 * 256, 1, 1) == 0);  // to itself
  CHECK(list.free_bytes(1) == 12 * 256);
  CHECK(list.free_bytes(2) == 0);
  list.validate();
}

TEST_CASE("tlsf_free_list::retag_after moves the rest of the block an allocation came from",
          "[detail]") {
  auto list = make_list(
      GENERATE(tlsf_free_list::keyed_blocks::all, tlsf_free_list::keyed_blocks::allocated));
  list.insert_region(base, 64 * 256, 1);
  auto const a = list.allocate(8 * 256, 1);  // [0, 8): the rest [8, 64) stays free with tag 1
  REQUIRE(a == base);
  CHECK(list.retag_after(*a, 1, 2) == 56 * 256);
  CHECK(list.free_bytes(1) == 0);
  CHECK(list.free_bytes(2) == 56 * 256);
  list.validate();
  // The moved block is tag 2's like any other: freed with tag 2, the allocation merges with it.
  list.deallocate(*a, 8 * 256, 2);
  CHECK(list.num_free_blocks(2) == 1);
  CHECK(list.largest_free_block(2) == 64 * 256);
  list.validate();
}

TEST_CASE("tlsf_free_list::retag_after changes nothing unless a free block of the tag follows",
          "[detail]") {
  auto list = make_list(
      GENERATE(tlsf_free_list::keyed_blocks::all, tlsf_free_list::keyed_blocks::allocated));
  list.insert_region(base, 16 * 256, 1);
  auto const a = list.allocate(4 * 256, 1);
  auto const b = list.allocate(4 * 256, 1);
  auto const c = list.allocate(8 * 256, 1);  // the region's last block
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  REQUIRE(*c + 8 * 256 == base + 16 * 256);
  list.insert_region(base + 16 * 256, 16 * 256, 1);     // adjacent, but another region
  CHECK(list.retag_after(*a, 1, 2) == 0);               // followed by an allocated block
  CHECK(list.retag_after(*c, 1, 2) == 0);               // ends its region: not the next region's
  CHECK(list.retag_after(*a + 256, 1, 2) == 0);         // inside a block
  CHECK(list.retag_after(base + 16 * 256, 1, 2) == 0);  // a free block, not an allocated one
  list.deallocate(*b, 4 * 256, 3);
  CHECK(list.retag_after(*a, 1, 2) == 0);  // the block after is tag 3's
  CHECK(list.retag_after(*a, 3, 3) == 0);  // to itself
  CHECK(list.free_bytes(1) == 16 * 256);
  CHECK(list.free_bytes(2) == 0);
  CHECK(list.free_bytes(3) == 4 * 256);
  list.validate();
  CHECK(list.retag_after(*a, 3, 2) == 4 * 256);
  CHECK(list.free_bytes(3) == 0);
  CHECK(list.free_bytes(2) == 4 * 256);
  list.validate();
}
