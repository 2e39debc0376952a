/**
 * @file run_bitmap_tests.cpp
 * @brief Tests of run_bitmap (the per-superblock structure of bitmap_stream_arena): lowest-fit
 * search across word (64-unit) and leaf (512-unit) boundaries, odd sizes, and randomised take /
 * give sequences checked after every step against a byte-per-unit model.
 */
#include <rmm/mr/detail/algorithms/run_bitmap.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::arena::run_bitmap;
using runs = std::vector<std::pair<std::size_t, std::size_t>>;

// One byte per unit, 1 = free; every query by a plain scan.
struct unit_model {
  explicit unit_model(std::size_t units) : free(units, 1) {}

  [[nodiscard]] std::optional<std::size_t> first_fit(std::size_t n) const {
    std::size_t run = 0;
    for (std::size_t i = 0; i < free.size(); ++i) {
      run = free[i] != 0 ? run + 1 : 0;
      if (run == n) {
        return i + 1 - n;
      }
    }
    return std::nullopt;
  }
  [[nodiscard]] runs free_runs() const {
    runs out;
    for (std::size_t i = 0; i < free.size();) {
      if (free[i] == 0) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < free.size() && free[j] != 0) {
        ++j;
      }
      out.emplace_back(i, j - i);
      i = j;
    }
    return out;
  }
  [[nodiscard]] std::size_t longest() const {
    std::size_t best = 0;
    for (auto const& r : free_runs()) {
      best = std::max(best, r.second);
    }
    return best;
  }
  [[nodiscard]] bool all(std::size_t pos, std::size_t n, std::uint8_t v) const {
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (free[i] != v) {
        return false;
      }
    }
    return true;
  }
  void set(std::size_t pos, std::size_t n, std::uint8_t v) {
    for (std::size_t i = pos; i < pos + n; ++i) {
      free[i] = v;
    }
  }

  std::vector<std::uint8_t> free;
};

runs runs_of(run_bitmap const& b) {
  runs out;
  b.for_each_run([&](std::size_t p, std::size_t l) { out.emplace_back(p, l); });
  return out;
}

void check_same(run_bitmap const& b, unit_model const& m) {
  b.validate("run_bitmap_test", 0);
  REQUIRE(runs_of(b) == m.free_runs());
  REQUIRE(b.longest() == m.longest());
  std::size_t free = 0;
  for (auto v : m.free) {
    free += v;
  }
  REQUIRE(b.free_units() == free);
}

}  // namespace

TEST_CASE("run_bitmap: a fresh bitmap is one free run, odd sizes included", "[arena][bitmap]") {
  for (std::size_t units : {std::size_t{1},
                            std::size_t{63},
                            std::size_t{64},
                            std::size_t{65},
                            std::size_t{511},
                            std::size_t{512},
                            std::size_t{513},
                            std::size_t{1536},
                            std::size_t{8192},
                            std::size_t{8192 + 3}}) {
    INFO("units " << units);
    run_bitmap b{units};
    b.validate("run_bitmap_test", 0);
    CHECK(b.units() == units);
    CHECK(b.free_units() == units);
    CHECK(b.longest() == units);
    CHECK(runs_of(b) == runs{{0, units}});
    CHECK(b.find_first_fit(units) == 0);
    b.take(0, units);
    CHECK(b.longest() == 0);
    CHECK(runs_of(b).empty());
    CHECK(b.none_free(0, units));
    b.validate("run_bitmap_test", 0);
    b.give(0, units);
    CHECK(b.all_free(0, units));
    CHECK(b.longest() == units);
    b.validate("run_bitmap_test", 0);
  }
  CHECK_THROWS_AS(run_bitmap{0}, std::length_error);
}

TEST_CASE("run_bitmap: lowest fit across word and leaf boundaries", "[arena][bitmap]") {
  run_bitmap b{4 * run_bitmap::leaf_units};  // 2048 units, 4 leaves, 32 words
  b.take(0, b.units());
  b.give(60, 10);      // crosses the word boundary at 64
  b.give(100, 5);      // inside word 1
  b.give(500, 30);     // crosses the leaf boundary at 512
  b.give(1000, 1048);  // [1000, 2048): crosses leaves 1|2|3, to the end
  CHECK(b.find_first_fit(1) == 60);
  CHECK(b.find_first_fit(5) == 60);
  CHECK(b.find_first_fit(10) == 60);
  CHECK(b.find_first_fit(11) == 500);
  CHECK(b.find_first_fit(30) == 500);
  CHECK(b.find_first_fit(31) == 1000);
  CHECK(b.find_first_fit(1048) == 1000);
  CHECK(b.longest() == 1048);
  b.take(60, 10);
  CHECK(b.find_first_fit(5) == 100);
  CHECK(b.find_first_fit(6) == 500);
  b.take(1000, 24);  // now [1024, 2048): starts on a word boundary, whole leaves 2 and 3
  CHECK(b.find_first_fit(31) == 1024);
  CHECK(b.find_first_fit(1024) == 1024);
  b.take(1024, 1024);
  CHECK(b.longest() == 30);
  b.validate("run_bitmap_test", 0);
  // A run made of whole words only, then one crossing a full word from both sides.
  b.give(128, 64);
  CHECK(b.find_first_fit(64) == 128);
  b.give(127, 1);
  b.give(192, 3);
  CHECK(b.find_first_fit(68) == 127);
  CHECK(runs_of(b) == runs{{100, 5}, {127, 68}, {500, 30}});
  b.validate("run_bitmap_test", 0);
}

TEST_CASE("run_bitmap: randomised take/give match a byte-per-unit model", "[arena][bitmap]") {
  for (std::uint32_t seed : {1U, 7U, 99U, 2024U}) {
    std::mt19937_64 rng{seed};
    auto pick = [&](std::size_t n) {
      return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng);
    };
    std::size_t const units = std::vector<std::size_t>{700, 4096, 8192, 20000}[seed % 4] + pick(3);
    INFO("seed " << seed << " units " << units);
    run_bitmap b{units};
    unit_model m{units};
    std::vector<std::pair<std::size_t, std::size_t>> taken;
    for (int step = 0; step < 3000; ++step) {
      if (pick(100) < 55) {
        std::size_t const n = pick(4) == 0 ? 1 + pick(units / 4) : 1 + pick(96);
        auto const expected = m.first_fit(n);
        REQUIRE((n <= b.longest()) == expected.has_value());
        if (!expected) {
          continue;
        }
        std::size_t const p = b.find_first_fit(n);
        REQUIRE(p == *expected);
        REQUIRE(b.all_free(p, n));
        b.take(p, n);
        m.set(p, n, 0);
        taken.emplace_back(p, n);
      } else if (!taken.empty()) {
        std::size_t const i = pick(taken.size());
        auto const [p, n]   = taken[i];
        taken[i]            = taken.back();
        taken.pop_back();
        REQUIRE(b.none_free(p, n));
        b.give(p, n);
        m.set(p, n, 1);
      }
      // A random range's all_free / none_free agree with the model.
      std::size_t const q = pick(units);
      std::size_t const k = 1 + pick(std::min<std::size_t>(units - q, 300));
      REQUIRE(b.all_free(q, k) == m.all(q, k, 1));
      REQUIRE(b.none_free(q, k) == m.all(q, k, 0));
      check_same(b, m);
    }
  }
}
