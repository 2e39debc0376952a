/**
 * @file arena.hpp
 * @brief Host bookkeeping of arena_memory_resource: the global arena (a fixed range carved into
 * superblocks) and the constants shared with the stream arena (chunk_stream_arena.hpp).
 *
 * Plain host data structures: no CUDA call, no locking, addresses are opaque integers (the tests
 * use fake ones). The functions report what the CUDA layer must do ("this superblock is released",
 * "wait for these tickets"). See arena.md for the design, the complexities and the limits.
 */
#pragma once

#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
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

/// @brief Requests of at least this many bytes that the stream arena's free blocks cannot hold
/// take exactly their (granularity-rounded) size from the global arena, held by no stream arena
/// and returned to the global arena as soon as they are freed (arena.md, "Large requests").
inline constexpr std::size_t large_request_min = superblock_size;

/// @brief Smallest accepted global arena: one standard superblock.
inline constexpr std::size_t minimum_arena_size = superblock_size;

/// @brief Default number of bytes of entirely free superblocks a stream arena keeps for reuse
/// (two standard superblocks); a superblock that would exceed it goes back to the global arena as
/// soon as it is free. arena_memory_resource raises it to an equal share of the arena, at least
/// 1/64 of it (see arena.md).
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
 * Free memory is kept coalesced in a tlsf_free_list (two-level segregated good fit, O(1); each
 * grant is taken from the front of the free range chosen).
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
    free_.insert_region(base, size);
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
   * allocation_granularity): superblock_size_for(bytes) bytes or, if no free range holds that
   * many, exactly @p bytes (so that the tail of the arena stays usable), from the front of a free
   * range chosen by two-level segregated good fit (tlsf_free_list).
   * @return The grant, with the tickets of every release it overlaps, or nullopt if no free range
   * is large enough.
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<superblock_grant> acquire(std::size_t bytes) {
    check_request("acquire", bytes);
    std::optional<std::uintptr_t> base;
    std::size_t size = 0;
    if (auto const standard = superblock_size_for(bytes); standard) {
      size = *standard;
      base = free_.allocate(size);
    }
    if (!base) {
      size = bytes;
      base = free_.allocate(size);
    }
    if (!base) {
      return std::nullopt;
    }
    return grant_at(*base, size);
  }

  /**
   * @brief Carves exactly @p bytes (a non-zero multiple of allocation_granularity), chosen as
   * acquire() chooses, and records it as a *large block*: the memory of a large request, held by
   * no stream arena until it is freed, then released or kept by the freeing stream's arena
   * (keep_large; arena.md, "Large requests"). `large_size_at` finds it until then.
   * @return The grant, with the tickets of every release it overlaps, or nullopt if no free range
   * is large enough.
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<superblock_grant> acquire_exact(std::size_t bytes) {
    check_request("acquire_exact", bytes);
    auto const base = free_.allocate_marked(bytes);
    if (!base) {
      return std::nullopt;
    }
    return grant_at(*base, bytes);
  }

  /**
   * @brief acquire_exact() for the only stream arena there has ever been: its base alone, with
   * the tickets of the memory it covers dropped (each is that arena's own, or none: its stream
   * orders it). One lookup of the free list, no grant built: the large single-thread rows.
   * @throws std::invalid_argument as acquire_exact().
   */
  std::optional<std::uintptr_t> acquire_exact_untracked(std::size_t bytes) {
    check_request("acquire_exact", bytes);
    auto const base = free_.allocate_marked(bytes);
    if (base && !pieces_.empty()) {
      std::vector<ticket> dropped;
      take_tickets(*base, bytes, dropped);
    }
    return base;
  }

  /**
   * @brief Releases the large block (acquire_exact) at @p p with no ticket, if it is @p bytes
   * long: release(p, bytes, no_ticket) after large_size_at(p) in one lookup.
   * @return @p bytes if released; 0 if no large block starts at @p p; the block's size if it is
   * not @p bytes. In the last two cases nothing changes.
   */
  std::size_t release_large(std::uintptr_t p, std::size_t bytes) noexcept {
    return free_.deallocate_marked(p, bytes);
  }

  /// @brief Turns the large block at @p p into an ordinary grant (a superblock that a stream arena
  /// keeps); nothing if no large block starts there. O(1).
  void keep_large(std::uintptr_t p) noexcept { static_cast<void>(free_.unmark(p)); }

  /// @brief The size of the large block (acquire_exact) that starts at @p p and is not yet
  /// released, or 0 if none starts there (a superblock, free memory, outside the arena). O(1).
  [[nodiscard]] std::size_t large_size_at(std::uintptr_t p) const noexcept {
    return free_.marked_size(p);
  }

  /**
   * @brief Returns [base, base + size), released under @p t, to the free memory (coalescing). A
   * large block (acquire_exact) stops being one.
   * @throws std::invalid_argument naming the range if it lies outside the arena, is misaligned or
   * overlaps free memory (a double release); the arena is then unchanged.
   */
  void release(std::uintptr_t base, std::size_t size, ticket t) {
    if (t != no_ticket) {
      release(base, size, std::vector<ticket>{t});
      return;
    }
    check_release(base, size);
    static_cast<void>(free_.deallocate(base, size));  // no ticket: no piece to record
  }

  /// @brief As above with any set of tickets (e.g. to give a grant back unused).
  void release(std::uintptr_t base, std::size_t size, std::vector<ticket> tickets) {
    check_release(base, size);
    // Checks that it is a granted range, not free (double free); clears a large block's mark.
    static_cast<void>(free_.deallocate(base, size));
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
  [[nodiscard]] std::size_t num_free_ranges() const noexcept { return free_.num_free_blocks(); }
  /// @brief Number of large blocks (acquire_exact) not yet released or kept. O(n): a walk over
  /// the free list's blocks, for describe() and tests (the free list's marks are the only record).
  [[nodiscard]] std::size_t num_large_blocks() const { return large_figures().first; }
  /// @brief Their bytes. O(n), as num_large_blocks.
  [[nodiscard]] std::size_t large_bytes() const { return large_figures().second; }
  /// @brief Number of remembered ticketed pieces (bounded by the number of free ranges times the
  /// releases merged into them).
  [[nodiscard]] std::size_t num_ticket_pieces() const noexcept { return pieces_.size(); }
  /// @brief The free ranges in address order. O(n).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_ranges() const {
    std::vector<std::pair<std::uintptr_t, std::size_t>> out;
    free_.for_each_block([&](std::uintptr_t b, std::size_t s, bool is_free, auto, auto) {
      if (is_free) {
        out.emplace_back(b, s);
      }
    });
    return out;
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
    auto const free         = free_ranges();
    std::uintptr_t prev_end = 0;
    for (auto const& [b, p] : pieces_) {
      expect(p.size != 0 && !p.tickets.empty(), "empty ticket piece", b);
      expect(b >= prev_end, "ticket pieces overlap", b);
      expect(inside_free(free, b, p.size), "ticket piece outside free memory", b);
      expect(std::is_sorted(p.tickets.begin(), p.tickets.end()), "tickets unsorted", b);
      prev_end = b + p.size;
    }
  }

  /// @brief A multi-line description (size, free bytes, free ranges, up to @p max_ranges).
  [[nodiscard]] std::string describe(std::size_t max_ranges = 64) const {
    auto const large = large_figures();
    std::string out  = "global arena [" + format_hex(base_) + ", +" + std::to_string(size_) +
                      "): free " + std::to_string(free_bytes()) + " bytes in " +
                      std::to_string(num_free_ranges()) + " ranges, largest " +
                      std::to_string(largest_free_block()) + "; " + std::to_string(large.first) +
                      " large blocks, " + std::to_string(large.second) + " bytes\n";
    std::size_t shown = 0;
    for (auto const& [b, s] : free_ranges()) {
      if (shown++ < max_ranges) {
        out += "  free [" + format_hex(b) + ", +" + std::to_string(s) + ")\n";
      }
    }
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

  // The grant of [base, base + size), just carved, with the tickets of the memory it covers.
  superblock_grant grant_at(std::uintptr_t base, std::size_t size) {
    superblock_grant grant{base, size, {}};
    take_tickets(base, size, grant.tickets);
    return grant;
  }

  // Moves the tickets of every piece overlapping [base, base + size) into `out` (sorted, unique),
  // trimming pieces that stick out of the range.
  void take_tickets(std::uintptr_t base, std::size_t size, std::vector<ticket>& out) {
    if (pieces_.empty()) {  // nothing returned with a ticket (one stream arena, or all cleared)
      return;
    }
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

  // (count, bytes) of the large blocks: the free list's marked grants. O(n).
  [[nodiscard]] std::pair<std::size_t, std::size_t> large_figures() const {
    std::pair<std::size_t, std::size_t> out{0, 0};
    free_.for_each_block([&](std::uintptr_t b, std::size_t s, bool is_free, auto, auto) {
      if (!is_free && free_.marked_size(b) == s) {
        ++out.first;
        out.second += s;
      }
    });
    return out;
  }

  // The checks are on every grant and release: the messages are built out of line.
  static void check_request(char const* what, std::size_t bytes) {
    if (bytes == 0 || (bytes % allocation_granularity) != 0) {
      throw_bad_request(what, bytes);
    }
  }
  [[noreturn]] static void throw_bad_request(char const* what, std::size_t bytes) {
    throw std::invalid_argument(std::string{"global_arena: "} + what + " of " +
                                std::to_string(bytes) + " bytes, not a non-zero multiple of " +
                                std::to_string(allocation_granularity));
  }
  void check_release(std::uintptr_t base, std::size_t size) const {
    if (base < base_ || size > size_ || base - base_ > size_ - size) {
      throw_outside(base, size);
    }
  }
  [[noreturn]] void throw_outside(std::uintptr_t base, std::size_t size) const {
    throw std::invalid_argument("global_arena: release of [" + format_hex(base) + ", +" +
                                std::to_string(size) + ") outside the arena [" + format_hex(base_) +
                                ", +" + std::to_string(size_) + ")");
  }

  // True if [b, b + n) lies inside one of `free` (address-sorted ranges).
  static bool inside_free(std::vector<std::pair<std::uintptr_t, std::size_t>> const& free,
                          std::uintptr_t b,
                          std::size_t n) {
    auto it = std::upper_bound(free.begin(), free.end(), std::make_pair(b, ~std::size_t{0}));
    return it != free.begin() && b + n <= std::prev(it)->first + std::prev(it)->second;
  }

  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "global_arena", what, at);
  }

  std::uintptr_t base_;
  std::size_t size_;
  // Large blocks are its marked grants. Its map erases by tombstone: every large free erases a
  // key (address_map.hpp says why, and why the pool's does not). It keys allocated
  // blocks only: nothing here looks up a free block by address, and a large pair then inserts and
  // erases one key instead of one insert and one or two erases (tlsf_free_list.md).
  tlsf_free_list free_{allocation_granularity,
                       address_map::erase_mode::tombstone,
                       tlsf_free_list::keyed_blocks::allocated};
  piece_map pieces_;
};

}  // namespace rmm::mr::detail::arena
