/**
 * @file address_ordered_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of address_ordered_free_list
 * operations over a small arena, runs them against the list and a naive reference model, and
 * aborts on any disagreement, failed validate() or unexpected exception.
 *
 * Input: byte 0 picks the granularity; then each operation is an opcode byte and its operands.
 * A missing byte reads as zero, so every input is a valid program. Every granule of the arena is
 * either free (in the list) or held by the driver; only held ranges are inserted, except in the
 * misuse operation, which must be rejected.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/address_ordered_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;

using rmm::mr::detail::address_ordered_free_list;
using range_map = std::map<std::uintptr_t, std::size_t>;
using ranges    = std::vector<std::pair<std::uintptr_t, std::size_t>>;

// Adds [p, p + n) to a map of disjoint ranges, merging with touching ranges unless `stop` says
// a boundary separates them.
template <typename Stop>
void add_range(range_map& m, std::uintptr_t p, std::size_t n, Stop stop) {
  auto it = m.emplace(p, n).first;
  if (auto next = std::next(it); next != m.end() && p + n == next->first && !stop(next->first)) {
    it->second += next->second;
    m.erase(next);
  }
  if (it != m.begin()) {
    if (auto prev = std::prev(it); prev->first + prev->second == p && !stop(p)) {
      prev->second += it->second;
      m.erase(it);
    }
  }
}

// Removes [p, p + n) from the range that contains it.
void cut_range(range_map& m, std::uintptr_t p, std::size_t n) {
  auto it           = std::prev(m.upper_bound(p));
  auto const [b, s] = *it;
  m.erase(it);
  if (b < p) {
    m.emplace(b, p - b);
  }
  if (p + n < b + s) {
    m.emplace(p + n, b + s - (p + n));
  }
}

class driver {
 public:
  explicit driver(std::size_t g) : g_{g}, list_{g} { held_.emplace(base_, granules_ * g_); }

  void step(reader& in) {
    switch (in.byte() % 8U) {
      case 0:
      case 1:
        insert(in);
        break;
      case 2:
      case 3:
        allocate(in);
        break;
      case 4:
        remove(in);
        break;
      case 5:
        boundary(in);
        break;
      case 6:
        query(in);
        break;
      default:
        misuse(in);
        break;
    }
    check();
  }

 private:
  [[nodiscard]] bool is_bound(std::uintptr_t a) const { return bounds_.count(a) != 0; }

  std::pair<std::uintptr_t, std::size_t> pick_in(range_map const& m, reader& in) {
    auto const it           = rmm::fuzz::pick(m, in);
    std::size_t const units = it->second / g_;
    std::size_t const first = in.byte() % units;
    std::size_t const len   = 1 + in.byte() % (units - first);
    return {it->first + first * g_, len * g_};
  }

  std::uintptr_t any_address(reader& in) { return base_ + g_ * (in.u16() % (granules_ + 1)); }

  [[nodiscard]] bool crosses_boundary(std::uintptr_t p, std::size_t n) const {
    auto const inner = bounds_.upper_bound(p);
    return inner != bounds_.end() && inner->first < p + n;
  }

  void insert(reader& in) {
    if (held_.empty()) {
      return;
    }
    auto const [p, n] = pick_in(held_, in);
    if (crosses_boundary(p, n)) {
      expect_invalid([&, p = p, n = n] { list_.insert(p, n); });
      return;
    }
    list_.insert(p, n);
    add_range(free_, p, n, [this](std::uintptr_t a) { return is_bound(a); });
    cut_range(held_, p, n);
  }

  void allocate(reader& in) {
    std::size_t const n = g_ * (1 + in.skewed(granules_));
    std::optional<std::uintptr_t> expected;
    for (auto const& [b, s] : free_) {
      if (s >= n) {
        expected = b;
        break;
      }
    }
    FUZZ_CHECK(list_.allocate_first_fit(n) == expected);
    if (!expected) {
      return;
    }
    cut_range(free_, *expected, n);
    add_range(held_, *expected, n, [](std::uintptr_t) { return false; });
  }

  void remove(reader& in) {
    if (free_.empty()) {
      return;
    }
    auto const [p, n] = pick_in(free_, in);
    FUZZ_CHECK(list_.contains_range(p, n));
    list_.remove_range(p, n);
    cut_range(free_, p, n);
    add_range(held_, p, n, [](std::uintptr_t) { return false; });
  }

  void boundary(reader& in) {
    std::uintptr_t const a = any_address(in);
    if (in.byte() % 2U == 0) {
      list_.add_boundary(a);
      if (bounds_[a]++ != 0) {
        return;
      }
      auto it = free_.upper_bound(a);
      if (it == free_.begin()) {
        return;
      }
      --it;
      if (it->first < a && a < it->first + it->second) {
        std::size_t const tail = it->first + it->second - a;
        it->second             = a - it->first;
        free_.emplace(a, tail);
      }
    } else if (!is_bound(a)) {
      expect_invalid([&] { list_.remove_boundary(a); });
    } else {
      list_.remove_boundary(a);
      if (--bounds_[a] != 0) {
        return;
      }
      bounds_.erase(a);
      auto hi = free_.find(a);
      if (hi == free_.end() || hi == free_.begin()) {
        return;
      }
      auto lo = std::prev(hi);
      if (lo->first + lo->second == a) {
        lo->second += hi->second;
        free_.erase(hi);
      }
    }
  }

  void query(reader& in) {
    std::uintptr_t const p = any_address(in);
    std::size_t const n    = g_ * (in.byte() % 64U);
    bool expected          = false;
    for (auto const& [b, s] : free_) {
      expected = expected || (n != 0 && b <= p && p + n <= b + s);
    }
    FUZZ_CHECK(list_.contains_range(p, n) == expected);
    FUZZ_CHECK(list_.is_boundary(p) == is_bound(p));
  }

  void misuse(reader& in) {
    std::uint8_t const kind = in.byte() % 3U;
    if (kind == 0 && !free_.empty()) {  // overlaps a free block: a double free
      auto const [p, n]      = pick_in(free_, in);
      std::uintptr_t const q = p - g_ * (in.byte() % 2U);
      expect_invalid([&, n = n, p = p] { list_.insert(q, n + (p - q)); });
    } else if (kind == 1) {  // not entirely free
      std::uintptr_t const p = any_address(in);
      std::size_t const n    = g_ * (1 + in.byte() % 64U);
      if (list_.contains_range(p, n)) {
        return;
      }
      expect_invalid([&] { list_.remove_range(p, n); });
    } else if (g_ > 1) {  // unaligned
      std::uintptr_t const p = any_address(in) + 1;
      expect_invalid([&] { list_.insert(p, g_); });
      expect_invalid([&] { static_cast<void>(list_.allocate_first_fit(g_ + 1)); });
    }
  }

  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    FUZZ_CHECK(list_.blocks() == ranges(free_.begin(), free_.end()));
    std::size_t bytes = 0, largest = 0;
    for (auto const& [b, s] : free_) {
      bytes += s;
      largest = std::max(largest, s);
    }
    FUZZ_CHECK(list_.free_bytes() == bytes);
    FUZZ_CHECK(list_.largest_free_block() == largest);
    FUZZ_CHECK(list_.size() == free_.size());
    FUZZ_CHECK(list_.num_boundaries() == bounds_.size());
  }

  static constexpr std::size_t granules_ = 512;
  std::size_t g_;
  address_ordered_free_list list_;
  std::uintptr_t base_{0x100000};
  range_map free_;  // the model: coalesced free ranges
  range_map held_;  // the rest of the arena
  std::map<std::uintptr_t, std::size_t> bounds_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  static constexpr std::size_t granularities[] = {1, 16, 256, 4096};
  driver d{granularities[in.byte() % 4U]};
  rmm::fuzz::abort_on_exception([&] { rmm::fuzz::run_steps(d, in, 4096); });
  return 0;
}
