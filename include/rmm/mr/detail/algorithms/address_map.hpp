/**
 * @file address_map.hpp
 * @brief Open-addressing hash map from block addresses to 32-bit descriptor indices, for the
 * free lists' out-of-band bookkeeping.
 *
 * Why not std::unordered_map: every insert allocates a node and every lookup follows a bucket
 * pointer to it, two cache misses where this map has one. With 10^5 live blocks the free lists
 * spend most of their time in those misses.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Map from non-zero-able `std::uintptr_t` keys to `std::uint32_t` values: linear probing,
 * power-of-two capacity, load factor at most 1/2, deletion by backward shift (no tombstones), so
 * lookups stay short after any sequence of operations.
 *
 * Not thread-safe.
 */
class address_map {
 public:
  using value_type                 = std::uint32_t;
  static constexpr value_type npos = std::numeric_limits<value_type>::max();

  address_map() { slots_.resize(16); }

  /// @brief The value of @p key, or npos.
  [[nodiscard]] value_type find(std::uintptr_t key) const noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      slot const& s = slots_[i];
      if (!s.used) {
        return npos;
      }
      if (s.key == key) {
        return s.value;
      }
    }
  }

  /**
   * @brief Inserts @p key -> @p value; @p key must not be present.
   * @throws std::bad_alloc if growing fails; the map is then unchanged.
   */
  void emplace(std::uintptr_t key, value_type value) {
    if ((size_ + 1) * 2 > slots_.size()) {
      rehash(slots_.size() * 2);
    }
    place(key, value);
    ++size_;
  }

  /// @brief Removes @p key if present.
  void erase(std::uintptr_t key) noexcept {
    std::size_t i = home(key);
    while (slots_[i].used && slots_[i].key != key) {
      i = (i + 1) & mask();
    }
    if (!slots_[i].used) {
      return;
    }
    // Backward shift: move later entries of the probe run into the hole when their home
    // position allows, so that no probe run is ever broken.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      std::size_t const h = home(slots_[j].key);
      bool const movable  = ((j - h) & mask()) >= ((j - hole) & mask());
      if (movable) {
        slots_[hole] = slots_[j];
        hole         = j;
      }
    }
    slots_[hole] = slot{};
    --size_;
  }

  /// @brief Number of keys.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct slot {
    std::uintptr_t key{};
    value_type value{};
    bool used{false};
  };

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }

  [[nodiscard]] std::size_t home(std::uintptr_t key) const noexcept {
    // Fibonacci hashing of the key; addresses are multiples of the granularity, so the low bits
    // carry no information, and the multiply spreads the high ones.
    std::uint64_t const h = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(h >> 32U) & mask();
  }

  void place(std::uintptr_t key, value_type value) noexcept {
    std::size_t i = home(key);
    while (slots_[i].used) {
      i = (i + 1) & mask();
    }
    slots_[i] = slot{key, value, true};
  }

  void rehash(std::size_t capacity) {
    std::vector<slot> old(capacity);
    old.swap(slots_);
    for (slot const& s : old) {
      if (s.used) {
        place(s.key, s.value);
      }
    }
  }

  std::vector<slot> slots_;
  std::size_t size_{0};
};

}  // namespace rmm::mr::detail
