/**
 * @file arena.hpp
 * @brief Host bookkeeping of arena_memory_resource: the global arena (a fixed range carved into
 * superblocks) and the stream arenas (superblocks suballocated by address-ordered first fit).
 *
 * Plain host data structures: no CUDA call, no locking, addresses are opaque integers (the tests
 * use fake ones). The functions report what the CUDA layer must do ("this superblock is released",
 * "wait for these tickets"). See arena.md for the design, the complexities and the limits.
 */
#pragma once

#include <rmm/mr/detail/algorithms/address_ordered_free_list.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail::arena {

/// @brief Unit of every block size and address: requests are rounded up to it.
inline constexpr std::size_t allocation_granularity = 256;

/// @brief Standard superblock size: a stream arena takes memory from the global arena in pieces
/// of `max(superblock_size, round_up(request, superblock_size))` bytes.
inline constexpr std::size_t superblock_size = std::size_t{2} << 20U;

/// @brief Smallest accepted global arena: one standard superblock.
inline constexpr std::size_t minimum_arena_size = superblock_size;

/// @brief Default number of bytes of entirely free superblocks a stream arena keeps for reuse
/// (two standard superblocks); a superblock that would exceed it goes back to the global arena as
/// soon as it is free. arena_memory_resource raises it to 1/64 of the arena (see arena.md).
inline constexpr std::size_t default_cache_bytes = 2 * superblock_size;

/**
 * @brief Opaque handle of a release: the CUDA layer uses the id of the stream arena that returned
 * a superblock, whose event orders the release. 0 means "nothing to wait for".
 */
using ticket = std::uint32_t;

/// @brief The ticket that requires no ordering.
inline constexpr ticket no_ticket = 0;

/// @brief An address range.
struct range {
  std::uintptr_t base{};  ///< first byte
  std::size_t size{};     ///< length in bytes
  friend bool operator==(range const& a, range const& b) noexcept {
    return a.base == b.base && a.size == b.size;
  }
  friend bool operator!=(range const& a, range const& b) noexcept { return !(a == b); }
};

/// @brief A superblock handed out by the global arena, with the releases its user must order
/// after (sorted, unique, never no_ticket).
struct superblock_grant {
  std::uintptr_t base{};        ///< first byte
  std::size_t size{};           ///< length in bytes
  std::vector<ticket> tickets;  ///< releases of memory inside [base, base + size)
};

/// @brief @p n rounded up to a multiple of @p align (a power of two); nullopt on overflow.
[[nodiscard]] inline std::optional<std::size_t> round_up(std::size_t n,
                                                         std::size_t align) noexcept {
  if (n > std::numeric_limits<std::size_t>::max() - (align - 1)) {
    return std::nullopt;
  }
  return (n + align - 1) & ~(align - 1);
}

/**
 * @brief The global arena: one fixed range [base, base + size) handed out as superblocks.
 *
 * Free memory is kept coalesced in an address_ordered_free_list (lowest address first fit).
 * Every returned superblock carries a ticket; the tickets are remembered per returned piece of
 * free memory (`pieces_`, disjoint ranges inside the free memory, adjacent pieces with equal
 * ticket sets merged), so that a grant lists exactly the tickets of the memory it covers.
 *
 * Not thread-safe: the caller serialises every member.
 */
class global_arena {
 public:
  /**
   * @brief Manages [base, base + size), initially entirely free and ticket-free.
   * @throws std::invalid_argument naming the value if @p base or @p size is not a multiple of
   * allocation_granularity, @p size is below minimum_arena_size, or the range wraps around.
   */
  global_arena(std::uintptr_t base, std::size_t size) : base_{base}, size_{size} {
    if (size < minimum_arena_size || (size % allocation_granularity) != 0 ||
        (base % allocation_granularity) != 0 ||
        size > std::numeric_limits<std::uintptr_t>::max() - base) {
      throw std::invalid_argument(
          "global_arena: arena [" + format_hex(base) + ", +" + std::to_string(size) + ") must be " +
          std::to_string(allocation_granularity) + "-aligned, at least " +
          std::to_string(minimum_arena_size) + " bytes, and not wrap around");
    }
    free_.add_boundary(base);
    free_.add_boundary(base + size);
    free_.insert(base, size);
  }

  /**
   * @brief Size of the superblock that a request of @p bytes (a non-zero multiple of
   * allocation_granularity) takes: max(superblock_size, round_up(bytes, superblock_size)), or
   * nullopt on overflow.
   */
  [[nodiscard]] static std::optional<std::size_t> superblock_size_for(std::size_t bytes) noexcept {
    return round_up(std::max(bytes, superblock_size), superblock_size);
  }

  /**
   * @brief Carves a superblock able to hold a block of @p bytes (a non-zero multiple of
   * allocation_granularity): the lowest-addressed free range of superblock_size_for(bytes) bytes
   * or, if there is none, of exactly @p bytes bytes (so that the tail of the arena stays usable).
   * @return The grant, with the tickets of every release it overlaps, or nullopt if no free range
   * is large enough.
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<superblock_grant> acquire(std::size_t bytes) {
    if (bytes == 0 || (bytes % allocation_granularity) != 0) {
      throw std::invalid_argument("global_arena: acquire of " + std::to_string(bytes) +
                                  " bytes, not a non-zero multiple of " +
                                  std::to_string(allocation_granularity));
    }
    std::optional<std::uintptr_t> base;
    std::size_t size = 0;
    if (auto const standard = superblock_size_for(bytes); standard) {
      size = *standard;
      base = free_.allocate_first_fit(size);
    }
    if (!base) {
      size = bytes;
      base = free_.allocate_first_fit(size);
    }
    if (!base) {
      return std::nullopt;
    }
    superblock_grant grant{*base, size, {}};
    take_tickets(*base, size, grant.tickets);
    return grant;
  }

  /**
   * @brief Returns [base, base + size), released under @p t, to the free memory (coalescing).
   * @throws std::invalid_argument naming the range if it lies outside the arena, is misaligned or
   * overlaps free memory (a double release); the arena is then unchanged.
   */
  void release(std::uintptr_t base, std::size_t size, ticket t) {
    std::vector<ticket> const tickets =
        t == no_ticket ? std::vector<ticket>{} : std::vector<ticket>{t};
    release(base, size, tickets);
  }

  /// @brief As above with any set of tickets (e.g. to give a grant back unused).
  void release(std::uintptr_t base, std::size_t size, std::vector<ticket> tickets) {
    if (base < base_ || size > size_ || base - base_ > size_ - size) {
      throw std::invalid_argument("global_arena: release of [" + format_hex(base) + ", +" +
                                  std::to_string(size) + ") outside the arena [" +
                                  format_hex(base_) + ", +" + std::to_string(size_) + ")");
    }
    free_.insert(base, size);  // validates alignment and double releases first
    std::sort(tickets.begin(), tickets.end());
    tickets.erase(std::unique(tickets.begin(), tickets.end()), tickets.end());
    tickets.erase(std::remove(tickets.begin(), tickets.end(), no_ticket), tickets.end());
    if (!tickets.empty()) {
      add_piece(base, size, std::move(tickets));
    }
  }

  /// @brief Gives a grant back unused, with its tickets.
  void release(superblock_grant const& g) { release(g.base, g.size, g.tickets); }

  /**
   * @brief Forgets every ticket: for the caller that has just ordered after all of them (e.g.
   * after a device-wide synchronisation while no release could happen).
   */
  void clear_tickets() noexcept { pieces_.clear(); }

  /// @brief First byte of the arena.
  [[nodiscard]] std::uintptr_t base() const noexcept { return base_; }
  /// @brief Size of the arena in bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// @brief Free bytes (not held by any stream arena).
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_.free_bytes(); }
  /// @brief Largest free range in bytes.
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    return free_.largest_free_block();
  }
  /// @brief Number of free ranges.
  [[nodiscard]] std::size_t num_free_ranges() const noexcept { return free_.size(); }
  /// @brief Number of remembered ticketed pieces (bounded by the number of free ranges times the
  /// releases merged into them).
  [[nodiscard]] std::size_t num_ticket_pieces() const noexcept { return pieces_.size(); }
  /// @brief The free ranges in address order. O(n).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_ranges() const {
    return free_.blocks();
  }
  /// @brief The tickets remembered for the free memory overlapping [base, base + size). O(k log n).
  [[nodiscard]] std::vector<ticket> tickets_in(std::uintptr_t base, std::size_t size) const {
    std::vector<ticket> out;
    for (auto it = first_piece(base); it != pieces_.end() && it->first < base + size; ++it) {
      out.insert(out.end(), it->second.tickets.begin(), it->second.tickets.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  /**
   * @brief Checks the free list and that every ticketed piece lies inside free memory, pieces are
   * disjoint and non-empty. O(n). For tests.
   * @throws std::logic_error describing the first violation.
   */
  void validate() const {
    free_.validate();
    std::uintptr_t prev_end = 0;
    for (auto const& [b, p] : pieces_) {
      expect(p.size != 0 && !p.tickets.empty(), "empty ticket piece", b);
      expect(b >= prev_end, "ticket pieces overlap", b);
      expect(free_.contains_range(b, p.size), "ticket piece outside free memory", b);
      expect(std::is_sorted(p.tickets.begin(), p.tickets.end()), "tickets unsorted", b);
      prev_end = b + p.size;
    }
  }

  /// @brief A multi-line description (size, free bytes, free ranges, up to @p max_ranges).
  [[nodiscard]] std::string describe(std::size_t max_ranges = 64) const {
    std::string out = "global arena [" + format_hex(base_) + ", +" + std::to_string(size_) +
                      "): free " + std::to_string(free_bytes()) + " bytes in " +
                      std::to_string(num_free_ranges()) + " ranges, largest " +
                      std::to_string(largest_free_block()) + "\n";
    std::size_t shown = 0;
    free_.for_each([&](std::uintptr_t b, std::size_t s) {
      if (shown++ < max_ranges) {
        out += "  free [" + format_hex(b) + ", +" + std::to_string(s) + ")\n";
      }
    });
    if (shown > max_ranges) {
      out += "  ... " + std::to_string(shown - max_ranges) + " more free ranges\n";
    }
    return out;
  }

 private:
  struct piece {
    std::size_t size{};
    std::vector<ticket> tickets;  // sorted, unique
  };
  using piece_map = std::map<std::uintptr_t, piece>;

  // First piece that may overlap [addr, ...): the one containing addr, or the next one.
  [[nodiscard]] piece_map::const_iterator first_piece(std::uintptr_t addr) const {
    auto it = pieces_.upper_bound(addr);
    if (it != pieces_.begin()) {
      auto const prev = std::prev(it);
      if (prev->first + prev->second.size > addr) {
        return prev;
      }
    }
    return it;
  }

  // Moves the tickets of every piece overlapping [base, base + size) into `out` (sorted, unique),
  // trimming pieces that stick out of the range.
  void take_tickets(std::uintptr_t base, std::size_t size, std::vector<ticket>& out) {
    std::uintptr_t const end = base + size;
    auto it                  = pieces_.upper_bound(base);
    if (it != pieces_.begin() && std::prev(it)->first + std::prev(it)->second.size > base) {
      --it;
    }
    while (it != pieces_.end() && it->first < end) {
      std::uintptr_t const pb = it->first;
      piece p                 = std::move(it->second);
      it                      = pieces_.erase(it);
      out.insert(out.end(), p.tickets.begin(), p.tickets.end());
      std::uintptr_t const pe = pb + p.size;
      if (pb < base) {
        pieces_.emplace(pb, piece{base - pb, p.tickets});
      }
      if (pe > end) {
        it = pieces_.emplace(end, piece{pe - end, std::move(p.tickets)}).first;
        break;
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  // Records a piece (the range is free and overlaps no piece), merging equal-ticket neighbours.
  void add_piece(std::uintptr_t base, std::size_t size, std::vector<ticket> tickets) {
    auto it = pieces_.emplace(base, piece{size, std::move(tickets)}).first;
    if (auto next = std::next(it); next != pieces_.end() && base + it->second.size == next->first &&
                                   next->second.tickets == it->second.tickets) {
      it->second.size += next->second.size;
      pieces_.erase(next);
    }
    if (it != pieces_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.size == base && prev->second.tickets == it->second.tickets) {
        prev->second.size += it->second.size;
        pieces_.erase(it);
      }
    }
  }

  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "global_arena", what, at);
  }

  std::uintptr_t base_;
  std::size_t size_;
  address_ordered_free_list free_{allocation_granularity};
  piece_map pieces_;
};

/**
 * @brief One stream's arena: the superblocks it holds and the free blocks inside them.
 *
 * Free blocks are kept in an address_ordered_free_list with a boundary at each superblock edge,
 * so blocks of different superblocks never merge and an entirely free superblock is exactly one
 * free block that can be taken out whole. Allocation is lowest-address first fit.
 *
 * Not thread-safe: the caller serialises every member.
 */
class stream_arena {
 public:
  /// @brief An empty arena keeping up to @p cache_bytes bytes of entirely free superblocks.
  explicit stream_arena(std::size_t cache_bytes = default_cache_bytes)
      : cache_bytes_{cache_bytes} {}

  /**
   * @brief First fit of @p bytes (a non-zero multiple of allocation_granularity) in the arena's
   * free blocks. O(log n) expected.
   * @return The address, or nullopt if no free block is large enough (the caller then adds a
   * superblock and retries).
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<std::uintptr_t> allocate(std::size_t bytes) {
    auto const ptr = free_.allocate_first_fit(bytes);
    if (ptr) {
      auto it = owning(*ptr);
      if (it->second.allocated == 0) {
        empty_.erase(it->first);
        cached_bytes_ -= it->second.size;
      }
      it->second.allocated += bytes;
      allocated_bytes_ += bytes;
    }
    return ptr;
  }

  /**
   * @brief Adds the superblock [base, base + size), entirely free.
   * @throws std::invalid_argument naming the range if it is misaligned or overlaps a superblock
   * of this arena. @throws std::bad_alloc; in both cases the arena is unchanged.
   */
  void add_superblock(std::uintptr_t base, std::size_t size) {
    if (size == 0 || ((base | size) % allocation_granularity) != 0 ||
        size > std::numeric_limits<std::uintptr_t>::max() - base) {
      throw std::invalid_argument("stream_arena: superblock [" + format_hex(base) + ", +" +
                                  std::to_string(size) + ") is misaligned or empty");
    }
    auto next = superblocks_.lower_bound(base);
    if ((next != superblocks_.end() && next->first < base + size) ||
        (next != superblocks_.begin() &&
         std::prev(next)->first + std::prev(next)->second.size > base)) {
      throw std::invalid_argument("stream_arena: superblock [" + format_hex(base) + ", +" +
                                  std::to_string(size) + ") overlaps a superblock of the arena");
    }
    auto const sb = superblocks_.emplace_hint(next, base, superblock{size, 0});
    try {
      empty_.insert(base);
      free_.add_boundary(base);
      try {
        free_.add_boundary(base + size);
        try {
          free_.insert(base, size);
        } catch (...) {
          free_.remove_boundary(base + size);
          throw;
        }
      } catch (...) {
        free_.remove_boundary(base);
        throw;
      }
    } catch (...) {
      empty_.erase(base);
      superblocks_.erase(sb);
      throw;
    }
    held_bytes_ += size;
    cached_bytes_ += size;
  }

  /// @brief True if @p ptr lies inside a superblock of this arena. O(log S).
  [[nodiscard]] bool owns(std::uintptr_t ptr) const noexcept {
    auto it = superblocks_.upper_bound(ptr);
    return it != superblocks_.begin() && ptr - std::prev(it)->first < std::prev(it)->second.size;
  }

  /**
   * @brief Frees the block [ptr, ptr + bytes) allocated from this arena (coalescing it).
   *
   * If its superblock becomes entirely free and @p allow_release is true, the superblock is taken
   * out of the arena and returned (the caller gives it back to the global arena) when keeping it
   * would make the entirely free superblocks exceed the cache size given at construction;
   * otherwise it is kept for reuse.
   * @return The released superblock, if any.
   * @throws std::invalid_argument naming the block if it is not inside one superblock of this
   * arena, is misaligned, or overlaps a free block (a double free); the arena is then unchanged.
   */
  std::optional<range> deallocate(std::uintptr_t ptr,
                                  std::size_t bytes,
                                  bool allow_release = true) {
    auto it = superblocks_.upper_bound(ptr);
    if (it == superblocks_.begin() || ptr - std::prev(it)->first >= std::prev(it)->second.size ||
        bytes > std::prev(it)->second.size - (ptr - std::prev(it)->first)) {
      throw std::invalid_argument("stream_arena: free of [" + format_hex(ptr) + ", +" +
                                  std::to_string(bytes) +
                                  ") that is not inside one superblock of this arena");
    }
    --it;
    superblock& sb = it->second;
    if (bytes > sb.allocated) {
      throw std::invalid_argument(
          "stream_arena: free of [" + format_hex(ptr) + ", +" + std::to_string(bytes) +
          ") exceeds the " + std::to_string(sb.allocated) + " bytes allocated in its superblock");
    }
    bool const now_empty = sb.allocated == bytes;
    bool const release   = now_empty && allow_release &&
                         sb.size > cache_bytes_ - std::min(cache_bytes_, cached_bytes_);
    bool const keep_empty = now_empty && !release;
    // First: the only other step that can throw is the insert below. Roll back only what this
    // call added (a 0-byte free in an entirely free superblock finds it already in the set).
    bool const added_empty = keep_empty && empty_.insert(it->first).second;
    try {
      free_.insert(ptr, bytes);
    } catch (...) {
      if (added_empty) {
        empty_.erase(it->first);
      }
      throw;
    }
    sb.allocated -= bytes;
    allocated_bytes_ -= bytes;
    if (keep_empty) {
      cached_bytes_ += sb.size;
    }
    if (!release) {
      return std::nullopt;
    }
    range const r{it->first, sb.size};
    remove_superblock(it);
    return r;
  }

  /// @brief Takes every entirely free superblock out of the arena and returns them (for the
  /// caller to give back to the global arena). O(k log n).
  std::vector<range> release_free_superblocks() {
    std::vector<range> out;
    out.reserve(empty_.size());
    while (!empty_.empty()) {
      auto const it = superblocks_.find(*empty_.begin());
      out.push_back(range{it->first, it->second.size});
      remove_superblock(it);
    }
    return out;
  }

  /// @brief Bytes in live blocks.
  [[nodiscard]] std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }
  /// @brief Bytes of the superblocks held.
  [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }
  /// @brief Free bytes inside the superblocks held.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_.free_bytes(); }
  /// @brief Largest free block inside the superblocks held.
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    return free_.largest_free_block();
  }
  /// @brief Number of superblocks held.
  [[nodiscard]] std::size_t num_superblocks() const noexcept { return superblocks_.size(); }
  /// @brief Number of entirely free superblocks held.
  [[nodiscard]] std::size_t num_free_superblocks() const noexcept { return empty_.size(); }
  /// @brief Bytes of the entirely free superblocks held.
  [[nodiscard]] std::size_t cached_bytes() const noexcept { return cached_bytes_; }
  /// @brief The superblocks as (base, size, allocated bytes) in address order. O(S).
  template <typename F>
  void for_each_superblock(F&& f) const {
    for (auto const& [b, s] : superblocks_) {
      f(b, s.size, s.allocated);
    }
  }
  /// @brief The free blocks in address order. O(n).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_blocks() const {
    return free_.blocks();
  }

  /**
   * @brief Checks the free list, that every free block lies in a superblock, that per-superblock
   * allocated bytes plus free bytes equal its size, and the free-superblock set. O(n + S log n).
   * @throws std::logic_error describing the first violation.
   */
  void validate() const {
    free_.validate();
    std::size_t held      = 0;
    std::size_t allocated = 0;
    std::size_t empty     = 0;
    std::size_t cached    = 0;
    std::map<std::uintptr_t, std::size_t> free_in;  // superblock base -> free bytes
    free_.for_each([&](std::uintptr_t b, std::size_t s) {
      auto it = superblocks_.upper_bound(b);
      expect(it != superblocks_.begin(), "free block outside every superblock", b);
      --it;
      expect(b + s <= it->first + it->second.size, "free block crosses a superblock edge", b);
      free_in[it->first] += s;
    });
    for (auto const& [b, sb] : superblocks_) {
      expect(free_.is_boundary(b) && free_.is_boundary(b + sb.size), "superblock edge missing", b);
      expect(free_in[b] + sb.allocated == sb.size, "superblock bytes unaccounted", b);
      bool const is_empty = sb.allocated == 0;
      expect(is_empty == (empty_.count(b) != 0), "free-superblock set is off", b);
      expect(!is_empty || free_.contains_range(b, sb.size), "free superblock not one block", b);
      held += sb.size;
      allocated += sb.allocated;
      empty += is_empty ? 1 : 0;
      cached += is_empty ? sb.size : 0;
    }
    expect(held == held_bytes_ && allocated == allocated_bytes_ && empty == empty_.size() &&
               cached == cached_bytes_,
           "counters are off",
           0);
  }

  /// @brief A multi-line description (superblocks and their use), for the out-of-memory dump.
  [[nodiscard]] std::string describe(std::size_t max_lines = 64) const {
    std::string out = "holds " + std::to_string(held_bytes_) + " bytes in " +
                      std::to_string(superblocks_.size()) + " superblocks, allocated " +
                      std::to_string(allocated_bytes_) + ", free " + std::to_string(free_bytes()) +
                      ", largest free block " + std::to_string(largest_free_block()) + "\n";
    std::size_t shown = 0;
    for (auto const& [b, sb] : superblocks_) {
      if (shown++ < max_lines) {
        out += "  superblock [" + format_hex(b) + ", +" + std::to_string(sb.size) +
               "): allocated " + std::to_string(sb.allocated) + "\n";
      }
    }
    if (shown > max_lines) {
      out += "  ... " + std::to_string(shown - max_lines) + " more superblocks\n";
    }
    return out;
  }

 private:
  struct superblock {
    std::size_t size{};
    std::size_t allocated{};
  };
  using superblock_map = std::map<std::uintptr_t, superblock>;

  superblock_map::iterator owning(std::uintptr_t ptr) {
    return std::prev(superblocks_.upper_bound(ptr));
  }

  // Takes an entirely free superblock out: its one free block first, then its edges (in this
  // order, so that dropping an edge cannot merge it with a neighbour's free block).
  void remove_superblock(superblock_map::iterator it) noexcept {
    std::uintptr_t const b = it->first;
    std::size_t const s    = it->second.size;
    free_.remove_range(b, s);  // cannot throw: the whole superblock is one free block
    free_.remove_boundary(b);
    free_.remove_boundary(b + s);
    if (empty_.erase(b) != 0) {
      cached_bytes_ -= s;
    }
    held_bytes_ -= s;
    superblocks_.erase(it);
  }

  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "stream_arena", what, at);
  }

  std::size_t cache_bytes_;
  address_ordered_free_list free_{allocation_granularity};
  superblock_map superblocks_;
  std::set<std::uintptr_t> empty_;  // bases of the entirely free superblocks
  std::size_t allocated_bytes_{};
  std::size_t held_bytes_{};
  std::size_t cached_bytes_{};  // bytes of the superblocks in empty_
};

}  // namespace rmm::mr::detail::arena
