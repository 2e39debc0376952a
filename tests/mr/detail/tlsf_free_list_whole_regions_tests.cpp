/**
 * @file tlsf_free_list_whole_regions_tests.cpp
 * @brief Where tlsf_free_list links a free block that is a whole region: after the partial blocks
 * of its size class and among the class's whole regions in address order, so that a workload
 * that frees everything gets the same blocks back whatever the order of its last frees.
 */
#include "tlsf_free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using rmm::mr::detail::tlsf_free_list;
constexpr std::size_t g         = 256;
constexpr std::uintptr_t base   = 0x100000;
constexpr std::size_t region_sz = 64 * g;  // one size class for every region below

// Regions of region_sz bytes, 2 * region_sz apart (never adjacent), inserted in `order`.
tlsf_free_list make_list(std::vector<std::size_t> const& order, tlsf_free_list::keyed_blocks k) {
  tlsf_free_list list{g, rmm::mr::detail::address_map::erase_mode::shift, k};
  for (std::size_t const i : order) {
    list.insert_region(base + i * 2 * region_sz, region_sz, 1);
  }
  return list;
}

std::uintptr_t region_base(std::size_t i) { return base + i * 2 * region_sz; }

}  // namespace

TEST_CASE("tlsf_free_list hands out whole regions of one class in address order", "[detail]") {
  auto const keyed =
      GENERATE(tlsf_free_list::keyed_blocks::all, tlsf_free_list::keyed_blocks::allocated);
  auto list = make_list({2, 0, 3, 1}, keyed);  // inserted out of order
  std::vector<std::uintptr_t> got;
  for (int i = 0; i < 4; ++i) {
    auto const p = list.allocate(region_sz, 1);
    REQUIRE(p);
    got.push_back(*p);
  }
  CHECK(got == std::vector<std::uintptr_t>{
                   region_base(0), region_base(1), region_base(2), region_base(3)});
  // Freed in reverse (a LIFO list would then hand them out as 0, 1, 2, 3 again only by luck of
  // this order): freed in any order, they come back in address order.
  for (std::uintptr_t const p : {got[1], got[3], got[0], got[2]}) {
    list.deallocate(p, region_sz, 1);
  }
  list.validate();
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(list.allocate(region_sz, 1) == region_base(i));
  }
  list.validate();
}

TEST_CASE("tlsf_free_list prefers a partial block to a whole region of the same class",
          "[detail]") {
  auto const keyed =
      GENERATE(tlsf_free_list::keyed_blocks::all, tlsf_free_list::keyed_blocks::allocated);
  tlsf_free_list list{g, rmm::mr::detail::address_map::erase_mode::shift, keyed};
  // A region of region_sz + 4 units; its first 4 units allocated leave a partial free block of
  // region_sz bytes, in the class of the whole region inserted after it.
  list.insert_region(base, region_sz + 4 * g, 1);
  auto const front = list.allocate(4 * g, 1);
  REQUIRE(front == base);
  list.insert_region(base + 4 * region_sz, region_sz, 1);
  // The partial block, although the whole region was linked last (a LIFO list's head).
  CHECK(list.allocate(region_sz, 1) == base + 4 * g);
  CHECK(list.allocate(region_sz, 1) == base + 4 * region_sz);
  list.validate();
}

TEST_CASE("tlsf_free_list links many whole regions of one class correctly", "[detail]") {
  // More than the ordering walk passes (16): those beyond it are still linked, just not ordered.
  constexpr std::size_t count = 40;
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) {
    order[i] = count - 1 - i;  // descending: each insertion walks as far as it may
  }
  auto list = make_list(order, tlsf_free_list::keyed_blocks::allocated);
  list.validate();
  std::vector<std::uintptr_t> got;
  while (auto const p = list.allocate(region_sz, 1)) {
    got.push_back(*p);
  }
  REQUIRE(got.size() == count);
  std::sort(got.begin(), got.end());
  CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());  // each region once
  for (std::uintptr_t const p : got) {
    list.deallocate(p, region_sz, 1);
  }
  list.validate();
  CHECK(list.num_free_blocks(1) == count);
}

TEST_CASE("tlsf_free_list gives a repeated workload the same addresses whatever the free order",
          "[detail]") {
  // Eight regions (of up to four sizes), a random workload, everything freed in two different
  // random orders: the same workload then gets the same addresses from both lists.
  auto const keyed =
      GENERATE(tlsf_free_list::keyed_blocks::all, tlsf_free_list::keyed_blocks::allocated);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng{seed};
    tlsf_free_list a{g, rmm::mr::detail::address_map::erase_mode::shift, keyed};
    tlsf_free_list b{g, rmm::mr::detail::address_map::erase_mode::shift, keyed};
    for (std::size_t i = 0; i < 8; ++i) {
      std::size_t const size = region_sz << (rng() % 4);
      a.insert_region(base + i * 16 * region_sz, size, 1);
      b.insert_region(base + i * 16 * region_sz, size, 1);
    }
    std::vector<std::size_t> sizes(200);
    for (auto& s : sizes) {
      s = (1 + rng() % 64) * g;
    }
    auto run = [&](tlsf_free_list& list, std::mt19937_64& order_rng) {
      std::vector<std::uintptr_t> addrs;
      std::vector<std::pair<std::uintptr_t, std::size_t>> live;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (auto const p = list.allocate(sizes[i], 1)) {
          addrs.push_back(*p);
          live.emplace_back(*p, sizes[i]);
        }
        if (i % 3 == 2 && !live.empty()) {  // a deterministic free within the run
          list.deallocate(live.front().first, live.front().second, 1);
          live.erase(live.begin());
        }
      }
      std::shuffle(live.begin(), live.end(), order_rng);  // the last frees: in a random order
      for (auto const& [p, s] : live) {
        list.deallocate(p, s, 1);
      }
      list.validate();
      return addrs;
    };
    std::mt19937_64 order_a{seed * 7919};
    std::mt19937_64 order_b{seed * 104729};
    CHECK(run(a, order_a) == run(b, order_b));  // first run: same state, same addresses
    CAPTURE(seed);
    CHECK(run(a, order_a) == run(b, order_b));  // second run: the frees' orders differed
  }
}
