/**
 * @file address_map.hpp
 * @brief Open-addressing hash map from block addresses to 32-bit descriptor indices, for the
 * free lists' out-of-band bookkeeping.
 *
 * Why not std::unordered_map: every insert allocates a node and every lookup follows a bucket
 * pointer to it, two cache misses where this map has one. With 10^5 live blocks the free lists
 * spend most of their time in those misses.
 *
 * Why two ways to erase (session z): a free that merges a neighbour erases its key, and the
 * arena's large frees do so on nearly every call. Erasing by backward shift walks the rest of the
 * probe run, rehashing each key in it, with a loop exit the branch predictor cannot learn: about
 * 87 instructions and 1.9 mispredicted branches per erase in the host model of the arena's
 * n = 100,000 / max 64 MiB row. A tombstone is one store, and took 7 % and 5 % off the arena's
 * n = 100,000 / max 64 and 4096 MiB rows on the H200. For the pool they did not pay: five of
 * its six n = 1,000 rows read 3-15 % slower with them (cachegrind counted the same instructions and
 * L1 misses; the cause was not found), and without the clearing step below, purging its map of 10^5
 * keys made its n = 100,000 / max 1 MiB row 1.7x slower in the host model. So the owner chooses:
 * the global arena's free list, whose blocks are superblocks and large blocks of at least 2 MiB
 * (a few thousand), erases by tombstone; the pool's keeps the backward shift.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Map from `std::uintptr_t` keys (any value, 0 included) to `std::uint32_t` values:
 * linear probing, power-of-two capacity, live keys and tombstones together at most half of the
 * slots, so that probe runs stay short after any sequence of operations.
 *
 * How erase makes room is chosen at construction (erase_mode):
 * - `shift`: backward shift, moving later keys of the probe run into the hole where their home
 *   allows; never a tombstone. The table doubles when keys would pass half of it.
 * - `tombstone`: the slot becomes a tombstone, or empty where no probe run can pass (the next slot
 *   is empty), clearing the tombstones just before it too. An insertion that would fill more than
 *   half of the slots first rebuilds the table: into twice the capacity if keys would be more than
 *   3/8 of it, else in place without the tombstones (no allocation). An eighth of the slots'
 *   insertions then pass before the next rebuild, so every operation is O(1) amortised.
 *
 * Not thread-safe.
 */
class address_map {
 public:
  using value_type                 = std::uint32_t;
  static constexpr value_type npos = std::numeric_limits<value_type>::max();

  /// @brief How erase makes room (see the class comment).
  enum class erase_mode : std::uint8_t { shift, tombstone };

  explicit address_map(erase_mode mode = erase_mode::shift) : mode_{mode} { slots_.resize(16); }

  /// @brief The value of @p key, or npos. O(1) expected.
  [[nodiscard]] value_type find(std::uintptr_t key) const noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      slot const& s = slots_[i];
      if (s.state == empty) {
        return npos;
      }
      if (s.key == key && s.state == used) {
        return s.value;
      }
    }
  }

  /**
   * @brief Inserts @p key -> @p value; @p key must not be present. O(1) amortised.
   * @throws std::bad_alloc if growing fails; the map is then unchanged.
   */
  void emplace(std::uintptr_t key, value_type value) {
    if ((size_ + tombstones_ + 1) * 2 > slots_.size()) {
      if (mode_ == erase_mode::shift || (size_ + 1) * 8 > slots_.size() * 3) {
        rehash(slots_.size() * 2);
      } else {
        purge();
      }
    }
    std::size_t const i = free_slot_from(home(key), npos_slot);
    tombstones_ -= static_cast<std::size_t>(slots_[i].state == tombstone);
    slots_[i] = slot{key, value, used};
    ++size_;
  }

  /// @brief What slot_of returns for an absent key.
  static constexpr std::size_t npos_slot = std::numeric_limits<std::size_t>::max();

  /// @brief The slot that holds @p key, or npos_slot: for a caller that reads the value and may
  /// then erase the key (erase_at) without probing again. O(1) expected.
  [[nodiscard]] std::size_t slot_of(std::uintptr_t key) const noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      slot const& s = slots_[i];
      if (s.state == empty) {
        return npos_slot;
      }
      if (s.key == key && s.state == used) {
        return i;
      }
    }
  }

  /// @brief The value in slot @p i, which slot_of returned (not npos_slot) with no change since.
  [[nodiscard]] value_type value_at(std::size_t i) const noexcept { return slots_[i].value; }

  /// @brief Removes @p key if present. O(1) expected; never allocates.
  void erase(std::uintptr_t key) noexcept {
    if (std::size_t const i = slot_of(key); i != npos_slot) {
      erase_at(i);
    }
  }

  /**
   * @brief Removes the key in slot @p i, which slot_of returned (not npos_slot) with no change
   * since: erase() without its probe. Never allocates. Always inlined: a tlsf_free_list keying
   * allocated blocks only calls it on every free (7 instructions per call saved in the pool).
   */
  [[gnu::always_inline]] void erase_at(std::size_t i) noexcept {
    --size_;
    if (mode_ == erase_mode::tombstone) {
      bury(i);
      return;
    }
    // Backward shift: move later entries of the probe run into the hole when their home
    // position allows, so that no probe run is ever broken.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask(); slots_[j].state == used; j = (j + 1) & mask()) {
      std::size_t const h = home(slots_[j].key);
      bool const movable  = ((j - h) & mask()) >= ((j - hole) & mask());
      if (movable) {
        slots_[hole] = slots_[j];
        hole         = j;
      }
    }
    slots_[hole] = slot{};
  }

  /// @brief Number of keys.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// @brief Number of slots (a power of two); for tests.
  [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }

  /// @brief Number of tombstones (always 0 in `shift` mode); for tests.
  [[nodiscard]] std::size_t tombstones() const noexcept { return tombstones_; }

  /**
   * @brief Checks the invariants: the counts match the slots, keys and tombstones fill at most
   * half of them (none are tombstones in `shift` mode), and every key is reachable from its home
   * (no empty slot in between) and appears once. O(capacity + size * probe length); for tests and
   * fuzzers.
   * @throws std::logic_error naming the first violated invariant.
   */
  void validate() const {
    std::size_t live = 0;
    std::size_t dead = 0;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      slot const& s = slots_[i];
      dead += static_cast<std::size_t>(s.state == tombstone);
      if (s.state != used) {
        continue;
      }
      ++live;
      for (std::size_t j = home(s.key); j != i; j = (j + 1) & mask()) {
        if (slots_[j].state == empty || (slots_[j].state == used && slots_[j].key == s.key)) {
          throw std::logic_error("address_map: the key in slot " + std::to_string(i) +
                                 " is cut off from its home or stored twice");
        }
      }
    }
    if (live != size_ || dead != tombstones_ || (size_ + tombstones_) * 2 > slots_.size() ||
        (mode_ == erase_mode::shift && dead != 0)) {
      throw std::logic_error("address_map: " + std::to_string(live) + " keys and " +
                             std::to_string(dead) + " tombstones in " +
                             std::to_string(slots_.size()) + " slots, counted " +
                             std::to_string(size_) + " and " + std::to_string(tombstones_));
    }
  }

 private:
  static constexpr std::uint8_t empty     = 0;  // never used since the last rebuild
  static constexpr std::uint8_t used      = 1;
  static constexpr std::uint8_t tombstone = 2;  // erased: probe runs continue past it

  struct slot {
    std::uintptr_t key{};
    value_type value{};
    std::uint8_t state{empty};
  };

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }

  [[nodiscard]] std::size_t home(std::uintptr_t key) const noexcept {
    // Fibonacci hashing of the key; addresses are multiples of the granularity, so the low bits
    // carry no information, and the multiply spreads the high ones.
    std::uint64_t const h = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(h >> 32U) & mask();
  }

  // The first slot from `from` on that holds no key (empty or a tombstone), or `stop` if that
  // comes first.
  [[nodiscard]] std::size_t free_slot_from(std::size_t from, std::size_t stop) const noexcept {
    std::size_t i = from;
    while (i != stop && slots_[i].state == used) {
      i = (i + 1) & mask();
    }
    return i;
  }

  // `tombstone` mode's erase of the key in slot i. No probe run passes a slot whose successor is
  // empty: it may become empty itself, and so may the tombstones just before it. Selects, not
  // branches: whether the successor is empty is a coin toss at this load, and a tombstone before
  // it is rare.
  void bury(std::size_t i) noexcept {
    bool const last = slots_[(i + 1) & mask()].state == empty;
    slots_[i].state = last ? empty : tombstone;
    tombstones_ += static_cast<std::size_t>(!last);
    for (std::size_t j = (i - 1) & mask(); (slots_[j].state == tombstone) & last;
         j             = (j - 1) & mask()) {
      slots_[j].state = empty;
      --tombstones_;
    }
  }

  // Rebuilds at `capacity` slots (more than now) without tombstones; strong guarantee (allocates
  // first).
  void rehash(std::size_t capacity) {
    std::vector<slot> old(capacity);
    old.swap(slots_);
    for (slot const& s : old) {
      if (s.state == used) {
        slots_[free_slot_from(home(s.key), npos_slot)] = s;
      }
    }
    tombstones_ = 0;
  }

  // Removes every tombstone in place, without allocating: a rebuild into a new vector faults its
  // pages in each time. Every tombstone becomes empty; then each key, in probe order from a slot
  // that was empty before (no probe run crosses it), moves to the first free slot from its home if
  // that comes before its place. The keys before it are placed already and their runs end before
  // it, so each key lands where an insertion in that order would have put it.
  void purge() noexcept {
    std::size_t start = 0;
    while (slots_[start].state != empty) {  // exists: at most half of the slots are taken
      ++start;
    }
    for (slot& s : slots_) {
      s.state = s.state == tombstone ? empty : s.state;
    }
    for (std::size_t k = 1; k <= mask(); ++k) {
      std::size_t const i = (start + k) & mask();
      if (slots_[i].state == used) {
        std::size_t const j = free_slot_from(home(slots_[i].key), i);
        if (j != i) {
          slots_[j]       = slots_[i];
          slots_[i].state = empty;
        }
      }
    }
    tombstones_ = 0;
  }

  std::vector<slot> slots_;
  std::size_t size_{0};
  std::size_t tombstones_{0};
  erase_mode mode_;
};

}  // namespace rmm::mr::detail
