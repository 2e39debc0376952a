/**
 * @file run_bitmap.hpp
 * @brief A bitmap of equal units (1 = free) with a summary tree that finds the lowest run of n
 * free units in O(log units) without touching more than one cache line of the bitmap. It backs
 * bitmap_stream_arena (one per superblock); see bitmap_stream_arena.md.
 *
 * Plain host code: no CUDA, no locks, positions are unit indices.
 */
#pragma once

#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::mr::detail::arena {

/**
 * @brief The free units of one superblock: one bit per unit, and a complete binary tree over
 * leaves of 8 words (512 units, 64 bytes of bits) in which every node stores the
 * free run at its start (prefix), at its end (suffix) and the longest one inside it (best).
 *
 * The tree answers "lowest position where n free units start" exactly by the classic descent
 * (left child if its best fits, else the run crossing the middle if it fits, else the right
 * child), then a scan of one leaf's 8 words. Updates recompute the leaves a range touches and
 * their ancestors. Coalescing is implicit: adjacent free bits form one run.
 *
 * Not thread-safe: the caller serialises every member.
 */
class run_bitmap {
 public:
  /// @brief Words of bits per tree leaf: 8 words are 64 bytes, a cache line.
  static constexpr std::size_t leaf_words = 8;
  /// @brief Units per tree leaf.
  static constexpr std::size_t leaf_units = leaf_words * 64;

  /// @brief A bitmap of no units. Like a moved-from one, it may only be assigned to or destroyed.
  run_bitmap() = default;

  /**
   * @brief @p units units, all free.
   * @throws std::length_error if @p units is zero or too large to index; std::bad_alloc if the
   * bits or the tree cannot be allocated.
   */
  explicit run_bitmap(std::size_t units) : units_{units}, free_units_{units} {
    if (units == 0 || units > max_units) {
      throw std::length_error("run_bitmap: " + std::to_string(units) +
                              " units is zero or more than " + std::to_string(max_units));
    }
    std::size_t const leaves = (units + leaf_units - 1) / leaf_units;
    while (pow2_ < leaves) {
      pow2_ *= 2;
    }
    bits_.assign(leaves * leaf_words, 0);
    words_.assign(leaves * leaf_words, word_info{});
    tree_.assign(2 * pow2_, summary{});
    set_bits(0, units);
    update_words(0, units, true);
    refresh(0, units, true);
  }

  /// @brief Number of units.
  [[nodiscard]] std::size_t units() const noexcept { return units_; }
  /// @brief Number of free units. O(1).
  [[nodiscard]] std::size_t free_units() const noexcept { return free_units_; }
  /// @brief Length of the longest run of free units (0 if none). O(1).
  [[nodiscard]] std::size_t longest() const noexcept {
    return tree_.empty() ? 0 : static_cast<std::size_t>(tree_[1].best);
  }

  /**
   * @brief The lowest position p such that units [p, p + n) are all free.
   * Precondition: 1 <= n <= longest(). O(log units) plus one leaf (8 words).
   */
  [[nodiscard]] std::size_t find_first_fit(std::size_t n) const noexcept {
    std::size_t v   = 1;
    std::size_t off = 0;
    std::size_t len = pow2_ * leaf_units;
    while (v < pow2_) {
      summary const& l = tree_[2 * v];
      len /= 2;
      if (l.best >= n) {
        v = 2 * v;
      } else if (l.suffix + tree_[2 * v + 1].prefix >= n) {
        return off + len - static_cast<std::size_t>(l.suffix);
      } else {
        v = 2 * v + 1;
        off += len;
      }
    }
    return leaf_first_fit(off / 64, n);
  }

  /// @brief True if units [pos, pos + n) are all free. Precondition: pos + n <= units(). O(n/64).
  [[nodiscard]] bool all_free(std::size_t pos, std::size_t n) const noexcept {
    return scan_all_free(pos, n);
  }

  /// @brief True if no unit of [pos, pos + n) is free. Precondition: pos + n <= units(). O(n/64).
  [[nodiscard]] bool none_free(std::size_t pos, std::size_t n) const noexcept {
    return scan_none_free(pos, n);
  }

  /// @brief Marks [pos, pos + n) taken. Precondition: all_free(pos, n), n >= 1. O(n/64 + log).
  void take(std::size_t pos, std::size_t n) noexcept {
    clear_bits(pos, n);
    update_words(pos, n, false);
    free_units_ -= n;
    refresh(pos, n, false);
  }

  /// @brief Marks [pos, pos + n) free. Precondition: none_free(pos, n), n >= 1. O(n/64 + log).
  void give(std::size_t pos, std::size_t n) noexcept {
    set_bits(pos, n);
    update_words(pos, n, true);
    free_units_ += n;
    refresh(pos, n, true);
  }

  /// @brief Calls f(pos, length) for every maximal run of free units, in increasing position.
  /// O(units / 64 + runs).
  template <typename F>
  void for_each_run(F&& f) const {
    std::size_t start = npos;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      std::uint64_t const x = bits_[w];
      if (x == 0 || x == ~std::uint64_t{0}) {
        if ((x == 0) == (start != npos)) {  // a run ends (x == 0) or starts (x all ones) here
          if (x == 0) {
            f(start, w * 64 - start);
            start = npos;
          } else {
            start = w * 64;
          }
        }
        continue;
      }
      std::size_t bit = 0;
      while (bit < 64) {
        std::uint64_t const y = (start == npos ? x : ~x) >> bit;
        if (y == 0) {
          break;
        }
        bit += ctz(y);
        if (start == npos) {
          start = w * 64 + bit;
        } else {
          f(start, w * 64 + bit - start);
          start = npos;
        }
      }
    }
    if (start != npos) {
      f(start, bits_.size() * 64 - start);
    }
  }

  /**
   * @brief Checks that bits past units() are clear, the free count, and every tree node against
   * a recomputation from the bits. O(units / 64).
   * @throws std::logic_error("<who>::validate: ...") naming @p at (the superblock) on violation.
   */
  void validate(char const* who, std::uintptr_t at) const {
    if (tree_.empty()) {
      expect_invariant(units_ == 0 && bits_.empty(), who, "empty bitmap with units", at);
      return;
    }
    std::size_t count = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      count += static_cast<std::size_t>(__builtin_popcountll(bits_[w]));
      std::size_t const lo = w * 64;
      if (lo + 64 > units_) {
        std::uint64_t const valid = lo >= units_ ? 0 : mask(0, units_ - lo);
        expect_invariant((bits_[w] & ~valid) == 0, who, "bits set past the end", at);
      }
    }
    expect_invariant(count == free_units_, who, "free unit count is off", at);
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      expect_invariant(words_[w] == info_of(bits_[w]), who, "word summary is off", at);
    }
    for (std::size_t j = 0; j < pow2_; ++j) {
      summary const expected = j * leaf_words < bits_.size() ? leaf_summary(j) : summary{};
      expect_invariant(tree_[pow2_ + j] == expected, who, "leaf summary is off", at);
    }
    std::uint64_t len = leaf_units;
    for (std::size_t lo = pow2_ / 2; lo >= 1; lo /= 2, len *= 2) {
      for (std::size_t v = lo; v < 2 * lo; ++v) {
        expect_invariant(
            tree_[v] == combine(tree_[2 * v], tree_[2 * v + 1], len), who, "tree node is off", at);
      }
    }
  }

 private:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  // Keeps pow2_ * leaf_units and every sum of two summaries far from overflow.
  static constexpr std::size_t max_units = std::size_t{1} << 56U;

  struct summary {
    std::uint64_t prefix{};  // free units at the start of the node's span
    std::uint64_t suffix{};  // free units at its end
    std::uint64_t best{};    // longest free run inside it
    friend bool operator==(summary const& a, summary const& b) noexcept {
      return a.prefix == b.prefix && a.suffix == b.suffix && a.best == b.best;
    }
  };

  // Free runs of one word of bits: at its start, at its end, the longest (each 0..64).
  struct word_info {
    std::uint8_t prefix{};
    std::uint8_t suffix{};
    std::uint8_t best{};
    friend bool operator==(word_info const& a, word_info const& b) noexcept {
      return a.prefix == b.prefix && a.suffix == b.suffix && a.best == b.best;
    }
  };

  static std::size_t ctz(std::uint64_t x) noexcept {
    return static_cast<std::size_t>(__builtin_ctzll(x));
  }
  static std::size_t clz(std::uint64_t x) noexcept {
    return static_cast<std::size_t>(__builtin_clzll(x));
  }
  // Trailing / leading one bits of x, which is not all ones.
  static std::uint64_t trailing_ones(std::uint64_t x) noexcept { return ctz(~x); }
  static std::uint64_t leading_ones(std::uint64_t x) noexcept { return clz(~x); }

  // Bits [a, a + n) of a word, 0 <= a < 64, 1 <= n <= 64 - a.
  static std::uint64_t mask(std::size_t a, std::size_t n) noexcept {
    std::uint64_t const ones = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
    return ones << a;
  }

  // Longest run of one bits in x, which is not all ones.
  static std::uint64_t longest_ones(std::uint64_t x) noexcept {
    std::uint64_t best = 0;
    while (x != 0) {
      x >>= ctz(x);
      std::uint64_t const r = trailing_ones(x);  // x's top bit is clear after a shift, or was
      best                  = std::max(best, r);
      x >>= r;
    }
    return best;
  }

  // Bit i of the result is set iff bits [i, i + n) of x are all ones (1 <= n < 64).
  static std::uint64_t run_starts(std::uint64_t x, std::size_t n) noexcept {
    std::size_t k = 1;
    while (k < n && x != 0) {
      std::size_t const s = std::min(k, n - k);
      x &= x >> s;
      k += s;
    }
    return x;
  }

  // Masks of the first and last words of [pos, pos + n) (n >= 1) and their indices; when the
  // range lies in one word, first == last and both masks are that word's.
  struct word_span {
    std::size_t first;
    std::size_t last;
    std::uint64_t first_mask;
    std::uint64_t last_mask;
  };
  static word_span span_of(std::size_t pos, std::size_t n) noexcept {
    std::size_t const end = pos + n;
    word_span w{pos / 64,
                (end - 1) / 64,
                ~std::uint64_t{0} << (pos % 64),
                ~std::uint64_t{0} >> ((64 - end % 64) % 64)};
    if (w.first == w.last) {
      w.first_mask &= w.last_mask;
      w.last_mask = w.first_mask;
    }
    return w;
  }

  // True if the bits of [pos, pos + n) are all `ones` (free) or all zeros. The middle words go
  // through a plain reduction the compiler vectorises.
  [[nodiscard]] bool uniform(std::size_t pos, std::size_t n, bool ones) const noexcept {
    word_span const w       = span_of(pos, n);
    std::uint64_t const inv = ones ? ~std::uint64_t{0} : 0;  // flips ones into zeros
    std::uint64_t acc =
        ((bits_[w.first] ^ inv) & w.first_mask) | ((bits_[w.last] ^ inv) & w.last_mask);
    for (std::size_t i = w.first + 1; i < w.last; ++i) {
      acc |= bits_[i] ^ inv;
    }
    return acc == 0;
  }
  [[nodiscard]] bool scan_all_free(std::size_t pos, std::size_t n) const noexcept {
    return uniform(pos, n, true);
  }
  [[nodiscard]] bool scan_none_free(std::size_t pos, std::size_t n) const noexcept {
    return uniform(pos, n, false);
  }

  void set_bits(std::size_t pos, std::size_t n) noexcept {
    word_span const w = span_of(pos, n);
    bits_[w.first] |= w.first_mask;
    bits_[w.last] |= w.last_mask;
    if (w.last > w.first + 1) {
      std::fill(bits_.begin() + static_cast<std::ptrdiff_t>(w.first + 1),
                bits_.begin() + static_cast<std::ptrdiff_t>(w.last),
                ~std::uint64_t{0});
    }
  }

  void clear_bits(std::size_t pos, std::size_t n) noexcept {
    word_span const w = span_of(pos, n);
    bits_[w.first] &= ~w.first_mask;
    bits_[w.last] &= ~w.last_mask;
    if (w.last > w.first + 1) {
      std::fill(bits_.begin() + static_cast<std::ptrdiff_t>(w.first + 1),
                bits_.begin() + static_cast<std::ptrdiff_t>(w.last),
                std::uint64_t{0});
    }
  }

  // Lowest start of n free units inside the leaf whose first word is w0 (one exists there), by
  // the word summaries; the bits are read only in the word where a short run lies.
  [[nodiscard]] std::size_t leaf_first_fit(std::size_t w0, std::size_t n) const noexcept {
    std::size_t run = 0;  // free units just before word w, inside the leaf
    for (std::size_t w = w0; w < w0 + leaf_words; ++w) {
      word_info const wi = words_[w];
      if (run + wi.prefix >= n) {
        return w * 64 - run;
      }
      if (wi.best >= n) {  // n < 64 here: the word is not entirely free
        return w * 64 + ctz(run_starts(bits_[w], n));
      }
      run = wi.prefix == 64 ? run + 64 : wi.suffix;
    }
    return npos;  // unreachable when the precondition holds
  }

  // Summary of one word: O(1) but for the longest inner run, a loop over the word's runs.
  static word_info info_of(std::uint64_t x) noexcept {
    if (x == ~std::uint64_t{0}) {
      return word_info{64, 64, 64};
    }
    std::uint64_t const lo = trailing_ones(x);
    std::uint64_t const hi = leading_ones(x);
    std::uint64_t best     = std::max(lo, hi);
    // A run strictly inside the word has at most 62 - lo - hi units (a zero bounds each side).
    if (lo + hi + 2 + best < 64) {
      best = std::max(best, longest_ones(x));
    }
    return word_info{static_cast<std::uint8_t>(lo),
                     static_cast<std::uint8_t>(hi),
                     static_cast<std::uint8_t>(best)};
  }

  // Recomputes the word summaries of [pos, pos + n) after its bits became all free or all taken:
  // the two end words from their bits, the words between are known.
  void update_words(std::size_t pos, std::size_t n, bool now_free) noexcept {
    word_span const w = span_of(pos, n);
    words_[w.first]   = info_of(bits_[w.first]);
    words_[w.last]    = info_of(bits_[w.last]);
    if (w.last > w.first + 1) {
      std::fill(words_.begin() + static_cast<std::ptrdiff_t>(w.first + 1),
                words_.begin() + static_cast<std::ptrdiff_t>(w.last),
                now_free ? word_info{64, 64, 64} : word_info{});
    }
  }

  // Summary of leaf j from its 8 word summaries.
  [[nodiscard]] summary leaf_summary(std::size_t j) const noexcept {
    summary s{};
    bool seen_zero    = false;
    std::uint64_t run = 0;  // free units ending at the current word's start
    for (std::size_t w = j * leaf_words; w < (j + 1) * leaf_words; ++w) {
      word_info const wi = words_[w];
      if (wi.prefix == 64) {
        run += 64;
        continue;
      }
      if (!seen_zero) {
        s.prefix  = run + wi.prefix;
        seen_zero = true;
      }
      s.best = std::max({s.best, run + wi.prefix, std::uint64_t{wi.best}});
      run    = wi.suffix;
    }
    if (!seen_zero) {
      return summary{leaf_units, leaf_units, leaf_units};
    }
    s.suffix = run;
    s.best   = std::max(s.best, run);
    return s;
  }

  // Summary of a node whose children each span `half` units.
  static summary combine(summary const& l, summary const& r, std::uint64_t half) noexcept {
    return summary{l.prefix == half ? half + r.prefix : l.prefix,
                   r.suffix == half ? half + l.suffix : r.suffix,
                   std::max({l.best, r.best, l.suffix + r.prefix})};
  }

  // Recomputes the leaves over [pos, pos + n) (those it covers whole are known from `now_free`)
  // and their ancestors, level by level over the touched range.
  void refresh(std::size_t pos, std::size_t n, bool now_free) noexcept {
    std::size_t const la = pos / leaf_units;
    std::size_t const lb = (pos + n - 1) / leaf_units;
    for (std::size_t j = la; j <= lb; ++j) {
      bool const whole = j * leaf_units >= pos && (j + 1) * leaf_units <= pos + n;
      tree_[pow2_ + j] = !whole     ? leaf_summary(j)
                         : now_free ? summary{leaf_units, leaf_units, leaf_units}
                                    : summary{};
    }
    std::uint64_t half = leaf_units;
    for (std::size_t lo = (pow2_ + la) / 2, hi = (pow2_ + lb) / 2; lo >= 1;
         lo /= 2, hi /= 2, half *= 2) {
      for (std::size_t v = lo; v <= hi; ++v) {
        tree_[v] = combine(tree_[2 * v], tree_[2 * v + 1], half);
      }
    }
  }

  std::size_t units_{};
  std::size_t free_units_{};
  std::size_t pow2_{1};              // leaves in the tree, a power of two
  std::vector<std::uint64_t> bits_;  // leaves * leaf_words words; 1 = free
  std::vector<word_info> words_;     // one per word of bits_
  std::vector<summary> tree_;        // 1-based heap: node v has children 2v, 2v + 1
};

}  // namespace rmm::mr::detail::arena
