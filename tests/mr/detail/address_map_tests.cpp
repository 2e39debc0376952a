/**
 * @file address_map_tests.cpp
 * @brief rmm::mr::detail::address_map against std::unordered_map over random operation
 * sequences (fixed seeds), including keys that collide in the low bits like block addresses.
 */
#include <rmm/mr/detail/algorithms/address_map.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using rmm::mr::detail::address_map;

void run(std::uint64_t seed, std::uintptr_t stride, int steps) {
  address_map map;
  std::unordered_map<std::uintptr_t, std::uint32_t> model;
  std::vector<std::uintptr_t> keys;
  std::mt19937_64 rng{seed};
  for (int i = 0; i < steps; ++i) {
    auto const dice = rng() % 100;
    if (dice < 55 || keys.empty()) {
      std::uintptr_t const key = 0x7f0000000000ULL + (rng() % 200000) * stride;
      if (model.count(key) == 0) {
        auto const value = static_cast<std::uint32_t>(rng() % 1000000);
        map.emplace(key, value);
        model.emplace(key, value);
        keys.push_back(key);
      }
    } else if (dice < 90) {
      auto const k             = rng() % keys.size();
      std::uintptr_t const key = keys[k];
      keys[k]                  = keys.back();
      keys.pop_back();
      map.erase(key);
      model.erase(key);
    } else {
      map.erase(0x1234);  // absent: no effect
    }
    REQUIRE(map.size() == model.size());
    if (i % 64 == 0) {
      for (auto const& [key, value] : model) {
        REQUIRE(map.find(key) == value);
      }
      REQUIRE(map.find(0x10) == address_map::npos);
    }
  }
  for (auto const& [key, value] : model) {
    REQUIRE(map.find(key) == value);
  }
}

}  // namespace

TEST_CASE("address_map agrees with std::unordered_map on random sequences", "[detail]") {
  for (std::uint64_t seed : {1U, 2U, 3U}) {
    SECTION("stride 256, seed " + std::to_string(seed)) { run(seed, 256, 20000); }
  }
  SECTION("stride 1 MiB") { run(4, std::uintptr_t{1} << 20, 20000); }
  SECTION("stride 1") { run(5, 1, 20000); }
}
