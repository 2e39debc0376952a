/**
 * @file tlsf_size_classes.hpp
 * @brief The size-class arithmetic of the TLSF free list (tlsf_free_list.hpp): which two-level
 * class a size falls in, the bounds of a class, and the class a request is rounded up to. Pure
 * functions on sizes counted in granules ("units"); no state. See tlsf_free_list.md, "Size
 * classes".
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace rmm::mr::detail {

/**
 * @brief Size classes of a two-level segregated fit index over sizes in units (granules).
 *
 * First level 0 holds the exact small classes [0, 32) units; first level k >= 1 holds
 * [2^(k+4), 2^(k+5)) units, split into 32 classes of equal width 2^(k-1). Every function is
 * pure and thread-safe.
 */
struct tlsf_size_classes {
  // 32 linear subdivisions per power of two: a request is rounded up by at most 1/32 (~3%) to
  // reach a class whose blocks all fit, which bounds the "good fit" waste.
  static constexpr std::size_t sl_log2  = 5;
  static constexpr std::size_t sl_count = std::size_t{1} << sl_log2;
  // Sizes in granules are < 2^64: first level 0 holds the exact small classes [1, 32), first
  // level k >= 1 holds [2^(k+4), 2^(k+5)).
  static constexpr std::size_t fl_count = 64 - sl_log2 + 1;
  static_assert(sizeof(std::size_t) == 8 && sizeof(std::uintptr_t) == 8, "64-bit only");

  /// @brief A class: first level (row) and second level (column within the row).
  struct size_class {
    std::size_t fl;
    std::size_t sl;
  };

  /// @brief floor(log2(v)); @p v must be non-zero.
  static constexpr std::size_t log2_floor(std::uint64_t v) noexcept {
    return 63U - static_cast<std::size_t>(__builtin_clzll(v));
  }
  /// @brief Index of the lowest set bit; @p v must be non-zero.
  static constexpr std::size_t lowest_bit(std::uint64_t v) noexcept {
    return static_cast<std::size_t>(__builtin_ctzll(v));
  }

  /// @brief The class holding a block of @p units granules.
  // Always inlined: GCC otherwise split off the log2 branch as a `.part.0` clone and called it
  // about twice per operation of the pool's n = 1,000 rows (session at, real benchmark binary).
  [[gnu::always_inline]] static constexpr size_class class_of_units(std::size_t units) noexcept {
    if (units < sl_count) {
      return {0, units};
    }
    std::size_t const l = log2_floor(units);
    return {l - sl_log2 + 1, (units >> (l - sl_log2)) - sl_count};
  }
  /// @brief The smallest size (in units) in class @p c.
  static constexpr std::size_t class_lower_units(size_class c) noexcept {
    return c.fl == 0 ? c.sl : (sl_count + c.sl) << (c.fl - 1);
  }
  /// @brief How many sizes (in units) class @p c spans.
  static constexpr std::size_t class_width_units(size_class c) noexcept {
    return c.fl == 0 ? 1 : std::size_t{1} << (c.fl - 1);
  }

  /// @brief The lowest class all of whose blocks hold @p units: the request rounded up to a class
  /// boundary. Empty when that rounding would overflow (only the own class can then fit).
  static constexpr std::optional<size_class> good_fit_class(std::size_t units) noexcept {
    if (units < sl_count) {
      return class_of_units(units);
    }
    std::size_t const slack = (std::size_t{1} << (log2_floor(units) - sl_log2)) - 1;
    if (units > std::numeric_limits<std::size_t>::max() - slack) {
      return std::nullopt;
    }
    return class_of_units(units + slack);
  }
};

}  // namespace rmm::mr::detail
