/**
 * @file address_ordered_free_list_model_tests.cpp
 * @brief Randomised operation sequences of rmm::mr::detail::address_ordered_free_list (plain and
 * insert_within) checked step by step against the naive reference models, and a treap made deep
 * on purpose.
 */
#include "address_ordered_free_list_models.hpp"

#include <catch2/catch.hpp>

using namespace rmm::test::aofl;  // NOLINT(google-build-using-namespace)

TEST_CASE("address_ordered_free_list agrees with a reference model on random sequences",
          "[detail]") {
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 0xfeedULL}) {
    SECTION("granularity 256, seed " + std::to_string(seed)) {
      random_run{256, 1024, seed}.run(8000);
    }
  }
  SECTION("granularity 1, small arena") { random_run{1, 64, 9}.run(8000); }
}

TEST_CASE("address_ordered_free_list insert_within merges inside its region only", "[detail]") {
  address_ordered_free_list list{16};
  auto const edge = [](std::uintptr_t a) { return a == 0x200 || a == 0x100 || a == 0x300; };
  list.insert_within(0x180, 0x80, 0x100, 0x200);  // ends at hi
  list.insert_within(0x200, 0x40, 0x200, 0x300);  // starts at lo: the block before stays apart
  REQUIRE(list.blocks() == std::vector<range>{{0x180, 0x80}, {0x200, 0x40}});
  REQUIRE_NOTHROW(list.validate(edge));
  REQUIRE_THROWS_AS(list.validate(), std::logic_error);  // they meet, and 0x200 is no boundary
  list.insert_within(0x260, 0x20, 0x200, 0x300);         // neither neighbour
  list.insert_within(0x240, 0x20, 0x200, 0x300);         // joins both
  REQUIRE(list.blocks() == std::vector<range>{{0x180, 0x80}, {0x200, 0x80}});
  list.insert_within(0x160, 0x20, 0x100, 0x200);  // joins the next block
  list.insert_within(0x280, 0x20, 0x200, 0x300);  // joins the previous block
  REQUIRE(list.blocks() == std::vector<range>{{0x160, 0xa0}, {0x200, 0xa0}});
  REQUIRE(list.free_bytes() == 0x140);
  REQUIRE(list.largest_free_block() == 0xa0);
  // The region decides, not the neighbours: the same address pair merges with a wider region.
  list.insert_within(0x2a0, 0x20, 0x2a0, 0x400);
  REQUIRE(list.size() == 3);
  list.insert_within(0x140, 0x20, 0x0, 0x400);
  REQUIRE(list.blocks() == std::vector<range>{{0x140, 0xc0}, {0x200, 0xa0}, {0x2a0, 0x20}});
  require_invalid_argument([&] { list.insert_within(0xf0, 0x20, 0x100, 0x200); },
                           {"0xf0", "outside its region [0x100, 0x200)"});
  require_invalid_argument([&] { list.insert_within(0x1f0, 0x20, 0x100, 0x200); },
                           {"0x1f0", "outside its region"});
  require_invalid_argument([&] { list.insert_within(0x130, 0x20, 0x100, 0x200); },
                           {"0x130", "overlaps"});
  require_invalid_argument([&] { list.insert_within(0x108, 0x10, 0x100, 0x200); }, {"0x108"});
  REQUIRE(list.size() == 3);
  REQUIRE_NOTHROW(list.validate([](std::uintptr_t a) { return a == 0x200 || a == 0x2a0; }));
}

TEST_CASE("address_ordered_free_list insert_within agrees with a region model", "[detail]") {
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 0xbeefULL}) {
    SECTION("granularity 256, seed " + std::to_string(seed)) {
      region_run{256, 2048, seed}.run(6000);
    }
  }
  SECTION("granularity 1, small arena") { region_run{1, 96, 11}.run(6000); }
}

TEST_CASE("address_ordered_free_list insert_within past 96 levels of the tree", "[detail]") {
  // Addresses in decreasing order of the nodes' priorities make the treap a chain, n deep: an
  // insert near its far end descends past insert_within's 96-entry path and takes the fallback
  // (floor/ceil lookups, then the ordinary join).
  constexpr std::size_t n    = 200;
  constexpr std::uint64_t sd = 0x5eedULL;
  constexpr std::size_t g    = 16;
  constexpr std::uintptr_t b = 0x100000;
  auto const prio            = node_priorities(sd, n);
  std::vector<std::size_t> rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      rank[i] += (prio[j] > prio[i] || (prio[j] == prio[i] && j < i)) ? 1U : 0U;
    }
  }
  address_ordered_free_list list{g, sd};
  region_model model;
  auto const slot = [&](std::size_t r) { return b + r * 4 * g; };  // g free, then a 3g gap
  for (std::size_t i = 0; i < n; ++i) {
    list.insert_within(slot(rank[i]), g, b, b + n * 4 * g);
    model.insert_within(slot(rank[i]), g, b, b + n * 4 * g);
  }
  auto const is_edge = [&](std::uintptr_t a) { return a == slot(171) + g; };
  auto const insert  = [&](std::uintptr_t p, std::size_t s, std::uintptr_t lo, std::uintptr_t hi) {
    list.insert_within(p, s, lo, hi);
    model.insert_within(p, s, lo, hi);
    REQUIRE(list.blocks() == model.blocks());
    REQUIRE(list.free_bytes() == model.bytes());
    REQUIRE(list.largest_free_block() == model.largest());
    REQUIRE_NOTHROW(list.validate(is_edge));
  };
  std::uintptr_t const lo = b;
  std::uintptr_t const hi = b + n * 4 * g;
  for (std::size_t r : {std::size_t{20}, std::size_t{150}, std::size_t{198}}) {  // 20: on the path
    insert(slot(r) + g, g, lo, hi);      // joins the block before
    insert(slot(r + 1) - g, g, lo, hi);  // joins the block after
    insert(slot(r) + 2 * g, g, lo, hi);  // joins both
    REQUIRE(list.contains_range(slot(r), 5 * g));
  }
  insert(slot(170) + 2 * g, g, lo, hi);         // neither: a new node deep in the chain
  insert(slot(171) + g, g, slot(171) + g, hi);  // starts at lo: stays apart from slot 171
  REQUIRE(list.blocks() == model.blocks());
  REQUIRE_FALSE(list.contains_range(slot(171), 2 * g));
  require_invalid_argument([&] { list.insert_within(slot(190), g, lo, hi); },
                           {hex(slot(190)), "overlaps"});
  REQUIRE(list.size() == n - 3 + 2);
  for (std::size_t r = 0; r < n; ++r) {  // the lowest blocks go first, as the model says
    auto const got = list.allocate_first_fit(g);
    REQUIRE(got == model.first_fit(g));
  }
  REQUIRE(list.blocks() == model.blocks());
  REQUIRE_NOTHROW(list.validate(is_edge));
}
