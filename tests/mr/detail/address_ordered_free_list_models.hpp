/**
 * @file address_ordered_free_list_models.hpp
 * @brief The naive reference models of address_ordered_free_list (free ranges in an ordered map,
 * first fit by a linear scan; with regions for insert_within) and the randomised runs that check
 * the list against them step by step, shared by address_ordered_free_list_tests.cpp and
 * address_ordered_free_list_model_tests.cpp.
 */
#pragma once

#include "free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/address_ordered_free_list.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::test::aofl {

using rmm::mr::detail::address_ordered_free_list;
using range = std::pair<std::uintptr_t, std::size_t>;

inline constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

using rmm::test::hex;
using rmm::test::require_invalid_argument;

// What both naive models share: free ranges in an ordered map, first fit by a linear scan.
class free_ranges {
 public:
  [[nodiscard]] bool overlaps(std::uintptr_t p, std::size_t n) const {
    for (auto const& [b, s] : free_) {
      if (b < p + n && p < b + s) {
        return true;
      }
    }
    return false;
  }

  std::optional<std::uintptr_t> first_fit(std::size_t n) {
    for (auto const& [b, s] : free_) {
      if (s >= n) {
        std::uintptr_t const base = b;
        remove_range(base, n);
        return base;
      }
    }
    return std::nullopt;
  }

  void remove_range(std::uintptr_t p, std::size_t n) {
    auto it           = std::prev(free_.upper_bound(p));
    auto const [b, s] = *it;
    free_.erase(it);
    if (b < p) {
      free_.emplace(b, p - b);
    }
    if (p + n < b + s) {
      free_.emplace(p + n, b + s - (p + n));
    }
  }

  [[nodiscard]] std::vector<range> blocks() const { return {free_.begin(), free_.end()}; }

  [[nodiscard]] std::size_t bytes() const {
    std::size_t n = 0;
    for (auto const& [b, s] : free_) {
      n += s;
    }
    return n;
  }

  [[nodiscard]] std::size_t largest() const {
    std::size_t m = 0;
    for (auto const& [b, s] : free_) {
      m = std::max(m, s);
    }
    return m;
  }

 protected:
  std::map<std::uintptr_t, std::size_t> free_;
};

// Naive model: free ranges with boundaries that blocks never cross.
class reference_model : public free_ranges {
 public:
  // True if [p, p + n) may be inserted: touches no free byte and no boundary lies inside.
  [[nodiscard]] bool insertable(std::uintptr_t p, std::size_t n) const {
    if (overlaps(p, n)) {
      return false;
    }
    auto const inner = bounds_.upper_bound(p);
    return inner == bounds_.end() || inner->first >= p + n;
  }

  void insert(std::uintptr_t p, std::size_t n) {
    auto it = free_.emplace(p, n).first;
    if (auto next = std::next(it); next != free_.end() && joinable(*it, *next)) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      if (auto prev = std::prev(it); joinable(*prev, *it)) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  [[nodiscard]] bool contains(std::uintptr_t p, std::size_t n) const {
    for (auto const& [b, s] : free_) {
      if (b <= p && p + n <= b + s) {
        return n != 0;
      }
    }
    return false;
  }

  void add_boundary(std::uintptr_t a) {
    if (bounds_[a]++ != 0) {
      return;
    }
    for (auto const& [b, s] : free_) {
      if (b < a && a < b + s) {
        std::size_t const tail = b + s - a;
        free_[b]               = a - b;
        free_.emplace(a, tail);
        return;
      }
    }
  }

  void remove_boundary(std::uintptr_t a) {
    if (--bounds_.at(a) != 0) {
      return;
    }
    bounds_.erase(a);
    auto const hi = free_.find(a);
    if (hi == free_.end() || hi == free_.begin()) {
      return;
    }
    auto const lo = std::prev(hi);
    if (lo->first + lo->second == a) {
      lo->second += hi->second;
      free_.erase(hi);
    }
  }

  [[nodiscard]] std::map<std::uintptr_t, std::size_t> const& bounds() const { return bounds_; }

 private:
  template <typename P>
  bool joinable(P const& lo, P const& hi) const {
    return lo.first + lo.second == hi.first && bounds_.count(hi.first) == 0;
  }

  std::map<std::uintptr_t, std::size_t> bounds_;
};

inline void check_agrees(address_ordered_free_list const& list, reference_model const& model) {
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(list.blocks() == model.blocks());
  REQUIRE(list.free_bytes() == model.bytes());
  REQUIRE(list.largest_free_block() == model.largest());
  REQUIRE(list.size() == model.blocks().size());
  REQUIRE(list.num_boundaries() == model.bounds().size());
}

// What the random runs share: the list and its model, an arena of `granules` granules from base_,
// the random source, and the ranges the test holds. Every granule is either free (in the list) or
// held by the test; held ranges are what the test may insert.
template <typename Model>
class run_base {
 protected:
  run_base(std::size_t granularity, std::size_t granules, std::uint64_t seed)
      : list_{granularity, seed}, g_{granularity}, rng_{seed}, size_{granules * granularity} {
    held_.emplace(base_, size_);
  }

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  // A random granule-aligned sub-range of [b, b + s).
  range sub_range(std::uintptr_t b, std::size_t s) {
    std::size_t const units = s / g_;
    std::size_t const first = pick(units);
    std::size_t const len   = 1 + pick(std::min<std::size_t>(units - first, 1 + pick(64)));
    return {b + first * g_, len * g_};
  }

  // First fit of a random number of granules (up to `large` one time in eight, else up to
  // `small`), which the model must find too; the test holds it then.
  void allocate(std::size_t large, std::size_t small) {
    std::size_t const n = g_ * (pick(8) == 0 ? 1 + pick(large) : 1 + pick(small));
    auto const got      = list_.allocate_first_fit(n);
    REQUIRE(got == model_.first_fit(n));
    if (got) {
      hold(*got, n);
    }
  }

  // Removes a random sub-range of a random free block from the list; the test holds it then.
  void remove_some() {
    auto const blocks = model_.blocks();
    if (blocks.empty()) {
      return;
    }
    auto const [b, s] = blocks[pick(blocks.size())];
    auto const [p, n] = sub_range(b, s);
    list_.remove_range(p, n);
    model_.remove_range(p, n);
    hold(p, n);
  }

  void hold(std::uintptr_t p, std::size_t n) {
    auto it = held_.emplace(p, n).first;
    if (auto next = std::next(it); next != held_.end() && p + n == next->first) {
      it->second += next->second;
      held_.erase(next);
    }
    if (it != held_.begin()) {
      if (auto prev = std::prev(it); prev->first + prev->second == p) {
        prev->second += it->second;
        held_.erase(it);
      }
    }
  }

  void unhold(std::map<std::uintptr_t, std::size_t>::iterator it, std::uintptr_t p, std::size_t n) {
    auto const [b, s] = *it;
    held_.erase(it);
    if (b < p) {
      held_.emplace(b, p - b);
    }
    if (p + n < b + s) {
      held_.emplace(p + n, b + s - (p + n));
    }
  }

  address_ordered_free_list list_;
  Model model_;
  std::size_t g_;
  std::mt19937_64 rng_;
  std::uintptr_t base_{0x7f0000000000ULL};
  std::size_t size_;
  std::map<std::uintptr_t, std::size_t> held_;
};

// One random operation sequence over an arena of `granules` granules.
class random_run : run_base<reference_model> {
 public:
  random_run(std::size_t granularity, std::size_t granules, std::uint64_t seed)
      : run_base{granularity, granules, seed} {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      check_agrees(list_, model_);
    }
  }

 private:
  void step() {
    std::size_t const dice = pick(100);
    if (dice < 40) {
      insert_some();
    } else if (dice < 75) {
      allocate(512, 24);
    } else if (dice < 82) {
      remove_some();
    } else if (dice < 88) {
      toggle_boundary();
    } else if (dice < 94) {
      query();
    } else {
      misuse();
    }
  }

  void insert_some() {
    if (held_.empty()) {
      return;
    }
    auto it           = std::next(held_.begin(), static_cast<std::ptrdiff_t>(pick(held_.size())));
    auto const [p, n] = sub_range(it->first, it->second);
    if (!model_.insertable(p, n)) {  // crosses a boundary
      require_invalid_argument([&, p = p, n = n] { list_.insert(p, n); }, {hex(p), "boundary"});
      return;
    }
    list_.insert(p, n);
    model_.insert(p, n);
    unhold(it, p, n);
  }

  void toggle_boundary() {
    auto const& bounds = model_.bounds();
    if (!bounds.empty() && pick(2) == 0) {
      auto const a =
          std::next(bounds.begin(), static_cast<std::ptrdiff_t>(pick(bounds.size())))->first;
      list_.remove_boundary(a);
      model_.remove_boundary(a);
    } else {
      std::uintptr_t const a = base_ + g_ * pick(size_ / g_ + 1);
      list_.add_boundary(a);
      model_.add_boundary(a);
    }
  }

  void query() {
    auto const [p, n] = sub_range(base_, size_);
    REQUIRE(list_.contains_range(p, n) == model_.contains(p, n));
    std::uintptr_t const a = base_ + g_ * pick(size_ / g_ + 1);
    REQUIRE(list_.is_boundary(a) == (model_.bounds().count(a) != 0));
  }

  void misuse() {
    auto const blocks      = model_.blocks();
    std::size_t const kind = pick(3);
    if (kind == 0 && !blocks.empty()) {  // double free: overlaps a free block
      auto const [b, s]      = blocks[pick(blocks.size())];
      auto const [p, n]      = sub_range(b, s);
      std::uintptr_t const q = p >= base_ + g_ ? p - g_ : p;
      require_invalid_argument([&, q = q, n = n] { list_.insert(q, n + g_); }, {hex(q)});
    } else if (kind == 1) {  // remove a range that is not entirely free
      auto const [p, n] = sub_range(base_, size_);
      if (model_.contains(p, n)) {
        return;
      }
      require_invalid_argument([&, p = p, n = n] { list_.remove_range(p, n); }, {hex(p)});
    } else {
      std::uintptr_t const a = base_ + g_ * pick(size_ / g_ + 1);
      if (model_.bounds().count(a) != 0) {
        return;
      }
      require_invalid_argument([&] { list_.remove_boundary(a); }, {hex(a)});
    }
  }
};

// --- insert_within -------------------------------------------------------------------------------

// Naive model of a list filled through insert_within only: an inserted range merges with a free
// neighbour it touches unless they meet at the region edge lo or hi given with it.
class region_model : public free_ranges {
 public:
  void insert_within(std::uintptr_t p, std::size_t n, std::uintptr_t lo, std::uintptr_t hi) {
    auto it = free_.emplace(p, n).first;
    if (auto next = std::next(it); next != free_.end() && p + n == next->first && p + n != hi) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      if (auto prev = std::prev(it); prev->first + prev->second == p && p != lo) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  // True if two free blocks meet (uncoalesced) somewhere.
  [[nodiscard]] bool any_touching() const {
    for (auto it = free_.begin(); it != free_.end() && std::next(it) != free_.end(); ++it) {
      if (it->first + it->second == std::next(it)->first) {
        return true;
      }
    }
    return false;
  }
};

// Random operations over an arena cut into regions of random sizes: every insert goes through
// insert_within with the edges of its region. Each step compares the list with the model, checks
// that no block crosses an edge, that validate(is_edge) accepts the list and that the plain
// validate() rejects it exactly when two blocks meet (necessarily at an edge).
class region_run : run_base<region_model> {
 public:
  region_run(std::size_t granularity, std::size_t granules, std::uint64_t seed)
      : run_base{granularity, granules, seed} {
    for (std::uintptr_t e = base_; e < base_ + size_;) {
      edges_.insert(e);
      e += g_ * (1 + pick(pick(4) == 0 ? 256 : 16));
    }
    edges_.insert(base_ + size_);
  }

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      check();
    }
    REQUIRE(merged_ > 0);
    REQUIRE(kept_apart_ > 0);
  }

 private:
  void step() {
    std::size_t const dice = pick(100);
    if (dice < 50) {
      insert_some();
    } else if (dice < 82) {
      allocate(128, 12);
    } else if (dice < 92) {
      remove_some();
    } else {
      misuse();
    }
  }

  // The region [lo, hi) holding address a.
  [[nodiscard]] std::pair<std::uintptr_t, std::uintptr_t> region_of(std::uintptr_t a) const {
    auto const hi = edges_.upper_bound(a);
    return {*std::prev(hi), *hi};
  }

  void insert_some() {
    if (held_.empty()) {
      return;
    }
    auto it       = std::next(held_.begin(), static_cast<std::ptrdiff_t>(pick(held_.size())));
    auto [p, n]   = sub_range(it->first, it->second);
    auto [lo, hi] = region_of(p);
    n             = std::min<std::size_t>(n, hi - p);  // stays inside its region
    bool at_edge  = false;  // a free block meets it at lo or hi: they must stay apart
    for (auto const& [b, s] : model_.blocks()) {
      at_edge = at_edge || (b + s == p && p == lo) || (b == p + n && p + n == hi);
    }
    std::size_t const before = model_.blocks().size();
    list_.insert_within(p, n, lo, hi);
    model_.insert_within(p, n, lo, hi);
    merged_ += model_.blocks().size() <= before ? 1U : 0U;
    kept_apart_ += at_edge ? 1U : 0U;
    unhold(it, p, n);
  }

  // Misuse leaves the list unchanged (check() compares it with the unchanged model).
  void misuse() {
    auto const blocks = model_.blocks();
    if (pick(2) == 0 && !blocks.empty()) {  // a double free, inside its region
      auto const [b, s]   = blocks[pick(blocks.size())];
      auto const [p, n]   = sub_range(b, s);
      auto const [lo, hi] = region_of(p);
      require_invalid_argument(
          [&, p = p, n = n, lo = lo, hi = hi] { list_.insert_within(p, n, lo, hi); },
          {hex(p), "overlaps"});
      return;
    }
    // A range sticking out of the region given: one granule before lo or past hi.
    auto const e = std::next(edges_.begin(), static_cast<std::ptrdiff_t>(pick(edges_.size() - 1)));
    std::uintptr_t const lo = *e;
    std::uintptr_t const hi = *std::next(e);
    if (pick(2) == 0 && lo != base_) {
      require_invalid_argument([&] { list_.insert_within(lo - g_, 2 * g_, lo, hi); },
                               {hex(lo - g_), "outside its region"});
    } else if (hi != base_ + size_) {
      require_invalid_argument([&] { list_.insert_within(hi - g_, 2 * g_, lo, hi); },
                               {hex(hi - g_), "outside its region"});
    }
  }

  void check() {
    auto const blocks = list_.blocks();
    REQUIRE(blocks == model_.blocks());
    REQUIRE(list_.free_bytes() == model_.bytes());
    REQUIRE(list_.largest_free_block() == model_.largest());
    REQUIRE(list_.size() == blocks.size());
    for (auto const& [b, s] : blocks) {  // never across an edge
      auto const [lo, hi] = region_of(b);
      REQUIRE(b + s <= hi);
    }
    REQUIRE_NOTHROW(list_.validate([&](std::uintptr_t a) { return edges_.count(a) != 0; }));
    if (model_.any_touching()) {
      REQUIRE_THROWS_AS(list_.validate(), std::logic_error);
    } else {
      REQUIRE_NOTHROW(list_.validate());
    }
  }

  std::set<std::uintptr_t> edges_;  // region edges, base_ and base_ + size_ included
  std::size_t merged_{};            // inserts that joined a neighbour
  std::size_t kept_apart_{};        // inserts that added a block
};

// The node priorities address_ordered_free_list draws for a seed, one per new node (a copy of
// its splitmix64 step): knowing them, a test can choose addresses that make the treap a chain.
inline std::vector<std::uint32_t> node_priorities(std::uint64_t seed, std::size_t n) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z               = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z               = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    out.push_back(static_cast<std::uint32_t>((z ^ (z >> 31U)) >> 32U));
  }
  return out;
}

}  // namespace rmm::test::aofl
