/**
 * @file tlsf_free_list_retag_block_tests.cpp
 * @brief Tests of tlsf_free_list::retag_block, with which a stream that took a block from
 * another stream's free list also takes the rest of that free block.
 */
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

namespace {

using rmm::mr::detail::tlsf_free_list;
constexpr std::uintptr_t base = 0x10000;

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
