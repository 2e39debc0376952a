/**
 * @file address_map_tests.cpp
 * @brief rmm::mr::detail::address_map against std::unordered_map over random operation
 * sequences (fixed seeds), in both erase modes, including keys that collide in the low bits like
 * block addresses; and the tombstone mode's rebuild policy: in-place purges, no growth under
 * steady churn.
 */
#include <rmm/mr/detail/algorithms/address_map.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using rmm::mr::detail::address_map;
using mode = address_map::erase_mode;

struct checked_map {
  explicit checked_map(mode m) : map{m} {}
  address_map map;
  std::unordered_map<std::uintptr_t, std::uint32_t> model;
  std::vector<std::uintptr_t> keys;

  void insert(std::uintptr_t key, std::uint32_t value) {
    if (model.count(key) == 0) {
      map.emplace(key, value);
      model.emplace(key, value);
      keys.push_back(key);
    }
  }
  void erase_at(std::size_t k) {
    std::uintptr_t const key = keys[k];
    keys[k]                  = keys.back();
    keys.pop_back();
    map.erase(key);
    model.erase(key);
    REQUIRE(map.find(key) == address_map::npos);
  }
  void check_all() const {
    REQUIRE(map.size() == model.size());
    for (auto const& [key, value] : model) {
      REQUIRE(map.find(key) == value);
    }
    REQUIRE_NOTHROW(map.validate());
  }
};

void run(mode m, std::uint64_t seed, std::uintptr_t stride, int steps) {
  checked_map c{m};
  std::mt19937_64 rng{seed};
  for (int i = 0; i < steps; ++i) {
    auto const dice = rng() % 100;
    if (dice < 55 || c.keys.empty()) {
      c.insert(0x7f0000000000ULL + (rng() % 200000) * stride,
               static_cast<std::uint32_t>(rng() % 1000000));
    } else if (dice < 90) {
      c.erase_at(rng() % c.keys.size());
    } else {
      c.map.erase(0x1234);  // absent: no effect
    }
    REQUIRE(c.map.size() == c.model.size());
    if (i % 64 == 0) {
      c.check_all();
      REQUIRE(c.map.find(0x10) == address_map::npos);
    }
  }
  c.check_all();
}

// Keeps about `live` keys while inserting and erasing at random for `steps` steps: the churn
// that leaves tombstones behind and makes emplace purge them in place. Returns the purges seen.
std::size_t churn(mode m, std::uint64_t seed, std::size_t live, int steps) {
  checked_map c{m};
  std::mt19937_64 rng{seed};
  auto const key = [&] { return 0x100000ULL + (rng() % 1000000) * 256; };
  while (c.keys.size() < live) {
    c.insert(key(), static_cast<std::uint32_t>(rng() % 1000));
  }
  std::size_t const capacity = c.map.capacity();
  std::size_t purges         = 0;
  for (int i = 0; i < steps; ++i) {
    if (c.keys.size() > live || (c.keys.size() == live && rng() % 2 == 0)) {
      c.erase_at(rng() % c.keys.size());
    } else {
      std::size_t const before = c.map.tombstones();
      std::size_t const slots  = c.map.capacity();
      c.insert(key(), static_cast<std::uint32_t>(rng() % 1000));
      // A purge comes when keys and tombstones would pass half of the slots, so with at least an
      // eighth of them tombstones; an insertion that reuses one removes only that one.
      purges += static_cast<std::size_t>(before * 8 >= slots && c.map.tombstones() == 0 &&
                                         c.map.capacity() == slots);
    }
    REQUIRE((c.map.size() + c.map.tombstones()) * 2 <= c.map.capacity());
    if (i % 997 == 0) {
      c.check_all();
    }
  }
  c.check_all();
  CHECK(c.map.capacity() <= 2 * capacity);  // purging, not growing, made room
  return purges;
}

}  // namespace

TEST_CASE("address_map agrees with std::unordered_map on random sequences", "[detail]") {
  for (mode const m : {mode::shift, mode::tombstone}) {
    std::string const name = m == mode::shift ? "shift" : "tombstone";
    for (std::uint64_t seed : {1U, 2U, 3U}) {
      SECTION(name + ", stride 256, seed " + std::to_string(seed)) { run(m, seed, 256, 20000); }
    }
    SECTION(name + ", stride 1 MiB") { run(m, 4, std::uintptr_t{1} << 20, 20000); }
    SECTION(name + ", stride 1") { run(m, 5, 1, 20000); }
  }
}

TEST_CASE("address_map in tombstone mode purges in place under steady churn", "[detail]") {
  // Live keys stay at most 3/8 of the slots after a purge: 6 of 32, 180 of 512, 3000 of 8192.
  SECTION("6 keys") { CHECK(churn(mode::tombstone, 11, 6, 20000) > 0); }
  SECTION("180 keys") { CHECK(churn(mode::tombstone, 12, 180, 50000) > 0); }
  SECTION("3000 keys") { CHECK(churn(mode::tombstone, 13, 3000, 60000) > 0); }
}

TEST_CASE("address_map in shift mode leaves no tombstone", "[detail]") {
  CHECK(churn(mode::shift, 14, 180, 20000) == 0);
}

TEST_CASE("address_map keeps key 0 and the largest value", "[detail]") {
  for (mode const m : {mode::shift, mode::tombstone}) {
    address_map map{m};
    map.emplace(0, address_map::npos - 1);
    map.emplace(256, 0);
    REQUIRE(map.find(0) == address_map::npos - 1);
    REQUIRE(map.find(256) == 0);
    map.erase(0);
    REQUIRE(map.find(0) == address_map::npos);
    REQUIRE(map.find(256) == 0);
    REQUIRE_NOTHROW(map.validate());
  }
}

TEST_CASE("address_map erases every key of full probe runs in any order", "[detail]") {
  // Fill the initial slots to half and erase in random orders: in tombstone mode an erase in the
  // middle of a run leaves a tombstone that later lookups must step over; in shift mode it moves
  // keys back.
  std::mt19937_64 rng{21};
  for (mode const m : {mode::shift, mode::tombstone}) {
    for (int round = 0; round < 50; ++round) {
      checked_map c{m};
      std::size_t const slots = c.map.capacity();  // 16
      while (c.map.size() + 1 < slots / 2 && c.map.capacity() == slots) {
        c.insert(rng() % 4096 * 256, static_cast<std::uint32_t>(c.keys.size()));
      }
      while (!c.keys.empty()) {
        c.erase_at(rng() % c.keys.size());
        c.check_all();
      }
      REQUIRE(c.map.size() == 0);
      REQUIRE(c.map.find(0) == address_map::npos);
    }
  }
}
