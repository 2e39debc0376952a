/**
 * @file block_array_tests.cpp
 * @brief Tests of block_array (chunk_stream_arena's free blocks of one superblock) against a plain
 * reference model, a sorted std::vector of {place, size} searched linearly: randomised inserts,
 * erases and changes with fixed seeds, from empty to past several growths, with places and sizes
 * on both sides of 2^31 (the SSE2 searches compare biased values), checking every search at every
 * step; and the padding lanes that the vector searches read.
 */
#include <rmm/mr/detail/algorithms/block_array.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::arena::block_array;
using unit  = block_array::unit;
using model = std::vector<std::pair<unit, unit>>;  // {place, size}, sorted by place

std::size_t model_first_fit(model const& m, unit u) {
  std::size_t i = 0;
  while (i < m.size() && m[i].second < u) {
    ++i;
  }
  return i;
}

std::size_t model_first_at_or_after(model const& m, unit place) {
  std::size_t i = 0;
  while (i < m.size() && m[i].first < place) {
    ++i;
  }
  return i;
}

unit model_max(model const& m) {
  unit r = 0;
  for (auto const& b : m) {
    r = std::max(r, b.second);
  }
  return r;
}

// Every search of `a` agrees with the model's for the probes given, and the blocks are the same.
void check_same(block_array const& a, model const& m, std::vector<unit> const& probes) {
  REQUIRE(a.size() == m.size());
  REQUIRE(a.capacity() >= a.size());
  REQUIRE(a.capacity() % block_array::lanes_per_step == 0);
  REQUIRE(a.padded());
  for (std::size_t i = 0; i < m.size(); ++i) {
    REQUIRE(a.place(i) == m[i].first);
    REQUIRE(a.length(i) == m[i].second);
  }
  REQUIRE(a.max_length() == model_max(m));
  // max_length_replacing: each block given new sizes (0: erased), against the largest of the
  // other blocks (prefix and suffix maxima).
  std::vector<unit> before(m.size() + 1, 0), after(m.size() + 1, 0);
  for (std::size_t i = 0; i < m.size(); ++i) {
    before[i + 1]           = std::max(before[i], m[i].second);
    after[m.size() - 1 - i] = std::max(after[m.size() - i], m[m.size() - 1 - i].second);
  }
  for (std::size_t i = 0; i < m.size(); ++i) {
    unit const others = std::max(before[i], after[i + 1]);
    for (unit const v : {unit{0},
                         unit{1},
                         m[i].second,
                         model_max(m),
                         model_max(m) + 1,
                         unit{0xFFFFFFFFU},
                         probes[i % probes.size()]}) {
      REQUIRE(a.max_length_replacing(i, v) == std::max(others, v));
    }
  }
  for (unit const p : probes) {
    REQUIRE(a.first_at_or_after(p) == model_first_at_or_after(m, p));
    if (p != 0) {
      REQUIRE(a.first_fit(p) == model_first_fit(m, p));
    }
  }
}

// Probes: every place and size in the model, one below and above each, and the extremes.
std::vector<unit> probes_of(model const& m) {
  std::vector<unit> out{0, 1, 0x7FFFFFFFU, 0x80000000U, 0x80000001U, 0xFFFFFFFEU, 0xFFFFFFFFU};
  for (auto const& [p, s] : m) {
    for (unit const v : {p, s}) {
      out.push_back(v);
      out.push_back(v - 1);
      out.push_back(v + 1);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("block_array: an empty array finds nothing", "[arena][block_array]") {
  block_array a;
  CHECK(a.empty());
  CHECK(a.capacity() == 0);
  CHECK(a.max_length() == 0);
  CHECK(a.first_fit(1) == 0);
  CHECK(a.first_at_or_after(0) == 0);
  CHECK(a.first_at_or_after(0xFFFFFFFFU) == 0);
  a.reserve(1);
  CHECK(a.capacity() == block_array::lanes_per_step);
  CHECK(a.first_fit(1) == 0);                    // the padding's size 0 never fits
  CHECK(a.first_at_or_after(0xFFFFFFFFU) == 0);  // nor does its place count as below
}

TEST_CASE("block_array: the searches see values above 2^31 in unsigned order",
          "[arena][block_array]") {
  block_array a;
  a.reserve(3);
  a.insert(0, 0x10U, 0x7FFFFFF0U);
  a.insert(1, 0x80000000U, 0x80000000U);
  a.insert(2, 0xFFFFFF00U, 0xFFU);
  CHECK(a.max_length() == 0x80000000U);
  CHECK(a.first_fit(0x7FFFFFF1U) == 1);
  CHECK(a.first_fit(0x80000001U) == 3);  // none
  CHECK(a.first_fit(0x100U) == 0);
  CHECK(a.first_at_or_after(0x80000000U) == 1);
  CHECK(a.first_at_or_after(0x80000001U) == 2);
  CHECK(a.first_at_or_after(0xFFFFFFFFU) == 3);
  a.erase(1);
  CHECK(a.max_length() == 0x7FFFFFF0U);
  CHECK(a.first_at_or_after(0x80000000U) == 1);
  a.set(1, 0xFFFFFF00U, 0xFFFFFFFFU - 0xFFFFFF00U);
  CHECK(a.max_length() == 0x7FFFFFF0U);
  a.clear();
  CHECK(a.empty());
  CHECK(a.capacity() == block_array::lanes_per_step);  // kept
  CHECK(a.max_length() == 0);
  CHECK(a.first_at_or_after(0xFFFFFFFEU) == 0);
}

TEST_CASE("block_array: the searches cross every step of 16 blocks", "[arena][block_array]") {
  static_assert(block_array::lanes_per_step == 16);
  for (std::size_t const n : {15U, 16U, 17U, 31U, 32U, 33U, 48U}) {
    block_array a;
    a.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {  // sizes 1, except the last block's, 1000 + n
      auto const place = static_cast<unit>(10 * i);
      a.insert(i, place, i + 1 == n ? static_cast<unit>(1000 + n) : 1U);
    }
    CAPTURE(n);
    CHECK(a.padded());
    CHECK(a.first_fit(2) == n - 1);  // only the last block, in the last step
    CHECK(a.first_fit(static_cast<unit>(1001 + n)) == n);
    CHECK(a.max_length() == 1000 + n);
    CHECK(a.first_at_or_after(static_cast<unit>(10 * (n - 1))) == n - 1);
    CHECK(a.first_at_or_after(static_cast<unit>(10 * (n - 1) + 1)) == n);
    a.erase(n - 1);  // the maximum leaves: the padding takes its lane
    CHECK(a.padded());
    CHECK(a.max_length() == 1);
    CHECK(a.first_fit(2) == n - 1);
  }
}

// An array of n blocks at places 0, 2, 4, ... with sizes 1, 2, 3, ... and its model, in storage of
// exactly `cap` lanes (a multiple of 16, at least n).
std::pair<block_array, model> filled(std::size_t n, std::size_t cap) {
  block_array a;
  model m;
  a.reserve(cap);
  REQUIRE(a.capacity() == cap);
  for (std::size_t i = 0; i < n; ++i) {
    a.insert(i, static_cast<unit>(2 * i), static_cast<unit>(i + 1));
    m.emplace_back(static_cast<unit>(2 * i), static_cast<unit>(i + 1));
  }
  return {std::move(a), std::move(m)};
}

TEST_CASE("block_array: insert and erase at every index, up to a full array",
          "[arena][block_array]") {
  // Full arrays (n == capacity), one lane short of full, and counts on both sides of a step of
  // 16: after every move the blocks match the model and every lane past the last is padding.
  for (std::size_t const cap : {16U, 32U, 64U}) {
    for (std::size_t const n : {cap - 17, cap - 16, cap - 15, cap - 2, cap - 1, cap}) {
      if (n > cap || n == 0) {
        continue;  // cap - 17 wrapped for cap 16
      }
      CAPTURE(cap, n);
      for (std::size_t i = 0; i < n; ++i) {  // erase block i of n
        auto [a, m] = filled(n, cap);
        a.erase(i);
        m.erase(m.begin() + static_cast<std::ptrdiff_t>(i));
        check_same(a, m, probes_of(m));
      }
      if (n == cap) {
        continue;
      }
      for (std::size_t i = 0; i <= n; ++i) {  // a block before index i of n (odd place: between)
        auto [a, m]      = filled(n, cap);
        auto const place = static_cast<unit>(i == 0 ? 0 : 2 * i - 1);
        if (i == 0) {
          a.set(0, 1, 1);  // block 0 moves up, so that place 0 is free before it
          m[0] = {1, 1};
        }
        a.insert(i, place, 1000);
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(i), {place, 1000});
        check_same(a, m, probes_of(m));
      }
    }
  }
}

TEST_CASE("block_array: randomised changes match the reference model", "[arena][block_array]") {
  for (std::uint32_t seed : {1U, 2U, 3U, 4U}) {
    std::mt19937 rng{seed};
    // Places and sizes from a small range or the whole 32 bits (seeds 3 and 4).
    bool const wide = seed > 2;
    auto draw = [&] { return static_cast<unit>(wide ? rng() : (rng() % 4096U) + 0x7FFFF800U); };
    block_array a;
    model m;
    for (int step = 0; step < 4000; ++step) {
      auto const op = rng() % 100U;
      // Grows to about 200 blocks and back.
      bool const grow = (step / 1000) % 2 == 0;
      if (m.empty() || op < (grow ? 55U : 35U)) {
        unit const place = draw();
        auto const at    = model_first_at_or_after(m, place);
        if (at < m.size() && m[at].first == place) {
          continue;  // places stay distinct: the arena's blocks are disjoint
        }
        unit const size = draw();
        a.reserve(a.size() + 1);
        a.insert(at, place, size);
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), {place, size});
      } else if (op < 75U) {
        auto const i = rng() % m.size();
        a.erase(i);
        m.erase(m.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op < 97U) {  // the size changes (a carve or a merge); the place may move up
        auto const i     = rng() % m.size();
        unit const limit = i + 1 < m.size() ? m[i + 1].first : 0xFFFFFFFFU;
        unit const place = m[i].first + (limit - m[i].first > 1 ? rng() % 2U : 0U);
        unit const size  = draw();
        a.set(i, place, size);
        m[i] = {place, size};
      } else if (op < 98U) {
        a.clear();
        m.clear();
      } else {
        auto const want = a.size() + 1 + rng() % 40U;
        a.reserve(want);
        REQUIRE(a.capacity() >= want);
      }
      check_same(a, m, probes_of(m));
    }
  }
}

TEST_CASE("block_array: assign_one and moves keep the blocks", "[arena][block_array]") {
  block_array a;
  a.assign_one(5, 7);
  CHECK(a.size() == 1);
  CHECK(a.place(0) == 5);
  CHECK(a.length(0) == 7);
  for (unit i = 1; i < 9; ++i) {
    a.reserve(a.size() + 1);
    a.insert(a.size(), 100 * i, i);
  }
  block_array b{std::move(a)};
  CHECK(a.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  CHECK(a.capacity() == 0);
  CHECK(b.size() == 9);
  CHECK(b.capacity() == 16);
  CHECK(b.max_length() == 8);
  CHECK(b.first_fit(8) == 8);
  a = std::move(b);
  CHECK(a.size() == 9);
  CHECK(a.first_at_or_after(801) == 9);
  a.assign_one(0, 1);  // capacity kept
  CHECK(a.size() == 1);
  CHECK(a.capacity() == 16);
  CHECK(a.max_length() == 1);
  CHECK(a.first_at_or_after(1) == 1);
}

TEST_CASE("block_array: release frees the storage and the array serves again",
          "[arena][block_array]") {
  block_array a;
  for (unit i = 0; i < 300; ++i) {
    a.reserve(a.size() + 1);
    a.insert(a.size(), 2 * i, i + 1);
  }
  CHECK(a.capacity() == 512);
  a.release();
  CHECK(a.size() == 0);
  CHECK(a.capacity() == 0);
  CHECK(a.padded());
  CHECK(a.first_fit(1) == 0);
  CHECK(a.max_length() == 0);
  CHECK(a.first_at_or_after(0) == 0);
  a.release();  // again: nothing to free
  CHECK(a.capacity() == 0);
  a.assign_one(9, 4);
  CHECK(a.capacity() == block_array::lanes_per_step);
  CHECK(a.padded());
  CHECK(a.first_fit(4) == 0);
  CHECK(a.first_fit(5) == 1);
  CHECK(a.max_length() == 4);
  CHECK(a.first_at_or_after(10) == 1);
}
