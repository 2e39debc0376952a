/**
 * @file bitmap_stream_arena.hpp
 * @brief A stream arena (the per-stream bookkeeping of arena_memory_resource) kept in arrays:
 * superblocks in a vector sorted by base, and per superblock a run_bitmap of its 256-byte units.
 * Same interface and documented behaviour as arena::stream_arena (address-ordered first fit,
 * coalescing, entirely free superblocks cached up to a size, then returned), without the
 * pointer-chasing of a node-based free list. See bitmap_stream_arena.md.
 *
 * Plain host code: no CUDA call, no locking, addresses are opaque integers.
 */
#pragma once

#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>
#include <rmm/mr/detail/algorithms/run_bitmap.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail::arena {

/**
 * @brief One stream's arena: the superblocks it holds and which of their 256-byte units are free.
 *
 * Allocation takes the lowest-addressed superblock whose longest free run fits (a scan of one
 * array of run lengths), then the lowest fitting position inside it (run_bitmap's tree). That is
 * exactly the lowest-address first fit of stream_arena: free runs never span two superblocks, and
 * the lowest position where n free units start is the start of the lowest free block of at least
 * n units.
 *
 * Not thread-safe: the caller serialises every member.
 */
class bitmap_stream_arena {
 public:
  /// @brief An empty arena keeping up to @p cache_bytes bytes of entirely free superblocks.
  explicit bitmap_stream_arena(std::size_t cache_bytes = default_cache_bytes)
      : cache_bytes_{cache_bytes} {}

  /**
   * @brief First fit of @p bytes (a non-zero multiple of allocation_granularity) in the arena's
   * free memory. O(log S + log(superblock units)), S the number of superblocks.
   * @return The address, or nullopt if no free block is large enough (the caller then adds a
   * superblock and retries).
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<std::uintptr_t> allocate(std::size_t bytes) {
    if (bytes == 0 || (bytes % allocation_granularity) != 0) {
      throw std::invalid_argument("bitmap_stream_arena: allocate size " + std::to_string(bytes) +
                                  " is not a non-zero multiple of " +
                                  std::to_string(allocation_granularity));
    }
    std::size_t const n = bytes / allocation_granularity;
    std::size_t const i = first_fitting(n);
    if (i == npos) {
      return std::nullopt;
    }
    superblock& sb        = superblocks_[i];
    std::size_t const pos = sb.units.find_first_fit(n);
    sb.units.take(pos, n);
    set_longest(i, sb.units.longest());
    if (sb.allocated == 0) {
      --num_empty_;
      cached_bytes_ -= sb.size;
    }
    sb.allocated += bytes;
    allocated_bytes_ += bytes;
    return bases_[i] + pos * allocation_granularity;
  }

  /**
   * @brief Adds the superblock [base, base + size), entirely free.
   * @throws std::invalid_argument naming the range if it is misaligned or overlaps a superblock
   * of this arena. @throws std::bad_alloc (or std::length_error for a superblock too large to
   * index); in both cases the arena is unchanged.
   */
  void add_superblock(std::uintptr_t base, std::size_t size) {
    if (size == 0 || ((base | size) % allocation_granularity) != 0 ||
        size > std::numeric_limits<std::uintptr_t>::max() - base) {
      throw std::invalid_argument("bitmap_stream_arena: superblock [" + format_hex(base) + ", +" +
                                  std::to_string(size) + ") is misaligned or empty");
    }
    auto const next = std::lower_bound(bases_.begin(), bases_.end(), base);
    auto const at   = static_cast<std::size_t>(next - bases_.begin());
    if ((next != bases_.end() && *next < base + size) ||
        (at != 0 && bases_[at - 1] + superblocks_[at - 1].size > base)) {
      throw std::invalid_argument("bitmap_stream_arena: superblock [" + format_hex(base) + ", +" +
                                  std::to_string(size) + ") overlaps a superblock of the arena");
    }
    superblock sb{size, 0, run_bitmap{size / allocation_granularity}};
    // Every allocation first: the inserts below then cannot throw (moves are noexcept).
    bases_.reserve(bases_.size() + 1);
    superblocks_.reserve(superblocks_.size() + 1);
    max_tree_.reserve(tree_size(superblocks_.size() + 1));
    auto const d = static_cast<std::ptrdiff_t>(at);
    bases_.insert(bases_.begin() + d, base);
    superblocks_.insert(superblocks_.begin() + d, std::move(sb));
    rebuild_max_tree();
    held_bytes_ += size;
    cached_bytes_ += size;
    ++num_empty_;
  }

  /// @brief True if @p ptr lies inside a superblock of this arena. O(log S).
  [[nodiscard]] bool owns(std::uintptr_t ptr) const noexcept { return owner(ptr) != npos; }

  /**
   * @brief Frees the block [ptr, ptr + bytes) allocated from this arena (coalescing it).
   *
   * If its superblock becomes entirely free and @p allow_release is true, the superblock is taken
   * out of the arena and returned (the caller gives it back to the global arena) when keeping it
   * would make the entirely free superblocks exceed the cache size given at construction;
   * otherwise it is kept for reuse. O(log S + bytes / 16 KiB + log(superblock units)).
   * @return The released superblock, if any.
   * @throws std::invalid_argument naming the block if it is not inside one superblock of this
   * arena, is misaligned or empty, or overlaps free memory (a double free); the arena is then
   * unchanged.
   */
  std::optional<range> deallocate(std::uintptr_t ptr,
                                  std::size_t bytes,
                                  bool allow_release = true) {
    std::size_t const i = owner(ptr);
    if (i == npos || bytes > superblocks_[i].size - (ptr - bases_[i])) {
      throw_block(ptr, bytes, "that is not inside one superblock of this arena");
    }
    superblock& sb = superblocks_[i];
    if (bytes > sb.allocated) {
      throw_block(
          ptr,
          bytes,
          "exceeds the " + std::to_string(sb.allocated) + " bytes allocated in its superblock");
    }
    if (bytes == 0 || (bytes % allocation_granularity) != 0) {
      throw_block(ptr,
                  bytes,
                  "size " + std::to_string(bytes) + " is not a non-zero multiple of " +
                      std::to_string(allocation_granularity));
    }
    if ((ptr % allocation_granularity) != 0) {
      throw_block(ptr,
                  bytes,
                  "address " + format_hex(ptr) + " is not aligned to " +
                      std::to_string(allocation_granularity));
    }
    std::size_t const pos = (ptr - bases_[i]) / allocation_granularity;
    std::size_t const n   = bytes / allocation_granularity;
    if (!sb.units.none_free(pos, n)) {
      throw_block(ptr, bytes, "overlaps a free block (double free?)");
    }
    // The same rule as stream_arena, decided on the cache as it is before this free.
    bool const now_empty = sb.allocated == bytes;
    bool const release   = now_empty && allow_release &&
                         sb.size > cache_bytes_ - std::min(cache_bytes_, cached_bytes_);
    sb.units.give(pos, n);
    set_longest(i, sb.units.longest());
    sb.allocated -= bytes;
    allocated_bytes_ -= bytes;
    if (now_empty) {
      ++num_empty_;
      cached_bytes_ += sb.size;
    }
    if (!release) {
      return std::nullopt;
    }
    range const r{bases_[i], sb.size};
    remove_superblock(i);
    return r;
  }

  /// @brief Takes every entirely free superblock out of the arena and returns them in address
  /// order (for the caller to give back to the global arena). O(S).
  std::vector<range> release_free_superblocks() {
    std::vector<range> out;
    out.reserve(num_empty_);  // the only step that can throw
    std::size_t kept = 0;
    for (std::size_t i = 0; i < superblocks_.size(); ++i) {
      if (superblocks_[i].allocated == 0) {
        out.push_back(range{bases_[i], superblocks_[i].size});
        held_bytes_ -= superblocks_[i].size;
        continue;
      }
      if (kept != i) {
        bases_[kept]       = bases_[i];
        superblocks_[kept] = std::move(superblocks_[i]);
      }
      ++kept;
    }
    bases_.resize(kept);
    superblocks_.erase(superblocks_.begin() + static_cast<std::ptrdiff_t>(kept),
                       superblocks_.end());
    rebuild_max_tree();
    num_empty_    = 0;
    cached_bytes_ = 0;
    return out;
  }

  /// @brief Bytes in live blocks.
  [[nodiscard]] std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }
  /// @brief Bytes of the superblocks held.
  [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }
  /// @brief Free bytes inside the superblocks held.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return held_bytes_ - allocated_bytes_; }
  /// @brief Largest free block inside the superblocks held. O(1).
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    return max_tree_.empty() ? 0 : max_tree_[1] * allocation_granularity;
  }
  /// @brief Number of superblocks held.
  [[nodiscard]] std::size_t num_superblocks() const noexcept { return superblocks_.size(); }
  /// @brief Number of entirely free superblocks held.
  [[nodiscard]] std::size_t num_free_superblocks() const noexcept { return num_empty_; }
  /// @brief Bytes of the entirely free superblocks held.
  [[nodiscard]] std::size_t cached_bytes() const noexcept { return cached_bytes_; }
  /// @brief The superblocks as (base, size, allocated bytes) in address order. O(S).
  template <typename F>
  void for_each_superblock(F&& f) const {
    for (std::size_t i = 0; i < superblocks_.size(); ++i) {
      f(bases_[i], superblocks_[i].size, superblocks_[i].allocated);
    }
  }
  /// @brief The free blocks in address order (never spanning two superblocks). O(held / 16 KiB +
  /// blocks).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_blocks() const {
    std::vector<std::pair<std::uintptr_t, std::size_t>> out;
    for (std::size_t i = 0; i < superblocks_.size(); ++i) {
      std::uintptr_t const b = bases_[i];
      superblocks_[i].units.for_each_run([&](std::size_t pos, std::size_t len) {
        out.emplace_back(b + pos * allocation_granularity, len * allocation_granularity);
      });
    }
    return out;
  }

  /**
   * @brief Checks that superblocks are sorted and disjoint, every bitmap and its tree, that per
   * superblock allocated bytes plus free bytes equal its size, the cached run lengths, and the
   * counters. O(held / 16 KiB).
   * @throws std::logic_error describing the first violation.
   */
  void validate() const {
    expect(
        bases_.size() == superblocks_.size() && max_tree_.size() == tree_size(superblocks_.size()),
        "arrays differ in length",
        0);
    std::size_t const leaves = max_tree_.size() / 2;
    for (std::size_t v = 1; v < leaves; ++v) {
      expect(max_tree_[v] == std::max(max_tree_[2 * v], max_tree_[2 * v + 1]),
             "superblock max-tree is off",
             v);
    }
    for (std::size_t i = superblocks_.size(); i < leaves; ++i) {
      expect(max_tree_[leaves + i] == 0, "superblock max-tree padding is off", i);
    }
    std::size_t held      = 0;
    std::size_t allocated = 0;
    std::size_t empty     = 0;
    std::size_t cached    = 0;
    for (std::size_t i = 0; i < superblocks_.size(); ++i) {
      superblock const& sb   = superblocks_[i];
      std::uintptr_t const b = bases_[i];
      expect(i == 0 || bases_[i - 1] + superblocks_[i - 1].size <= b, "superblocks overlap", b);
      expect(sb.size != 0 && ((b | sb.size) % allocation_granularity) == 0 &&
                 sb.units.units() == sb.size / allocation_granularity,
             "superblock misaligned or mis-sized",
             b);
      sb.units.validate("bitmap_stream_arena", b);
      expect(max_tree_[leaves + i] == sb.units.longest(), "cached longest run is off", b);
      expect(sb.units.free_units() * allocation_granularity + sb.allocated == sb.size,
             "superblock bytes unaccounted",
             b);
      bool const is_empty = sb.allocated == 0;
      expect(
          !is_empty || sb.units.longest() == sb.units.units(), "free superblock not one block", b);
      held += sb.size;
      allocated += sb.allocated;
      empty += is_empty ? 1 : 0;
      cached += is_empty ? sb.size : 0;
    }
    expect(held == held_bytes_ && allocated == allocated_bytes_ && empty == num_empty_ &&
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
    for (std::size_t i = 0; i < superblocks_.size() && i < max_lines; ++i) {
      out += "  superblock [" + format_hex(bases_[i]) + ", +" +
             std::to_string(superblocks_[i].size) + "): allocated " +
             std::to_string(superblocks_[i].allocated) + "\n";
    }
    if (superblocks_.size() > max_lines) {
      out += "  ... " + std::to_string(superblocks_.size() - max_lines) + " more superblocks\n";
    }
    return out;
  }

 private:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  struct superblock {
    std::size_t size{};       // bytes
    std::size_t allocated{};  // bytes in live blocks
    run_bitmap units;         // one bit per allocation_granularity bytes, 1 = free
  };

  // Index of the superblock containing ptr, or npos.
  [[nodiscard]] std::size_t owner(std::uintptr_t ptr) const noexcept {
    auto const it = std::upper_bound(bases_.begin(), bases_.end(), ptr);
    if (it == bases_.begin()) {
      return npos;
    }
    auto const i = static_cast<std::size_t>(it - bases_.begin()) - 1;
    return ptr - bases_[i] < superblocks_[i].size ? i : npos;
  }

  // Nodes of the max-tree over s superblocks (index 0 unused): 2 * bit_ceil(s), 0 if s is 0.
  static std::size_t tree_size(std::size_t s) noexcept {
    std::size_t p = 1;
    while (p < s) {
      p *= 2;
    }
    return s == 0 ? 0 : 2 * p;
  }

  // Index of the lowest-addressed superblock whose longest free run is at least n units, or
  // npos: the leftmost leaf of the max-tree that is >= n, by descent.
  [[nodiscard]] std::size_t first_fitting(std::size_t n) const noexcept {
    if (max_tree_.empty() || max_tree_[1] < n) {
      return npos;
    }
    std::size_t const leaves = max_tree_.size() / 2;
    std::size_t v            = 1;
    while (v < leaves) {
      v = max_tree_[2 * v] >= n ? 2 * v : 2 * v + 1;
    }
    return v - leaves;
  }

  void set_longest(std::size_t i, std::size_t units) noexcept {
    std::size_t v = max_tree_.size() / 2 + i;
    max_tree_[v]  = units;
    for (v /= 2; v >= 1; v /= 2) {
      std::size_t const m = std::max(max_tree_[2 * v], max_tree_[2 * v + 1]);
      if (max_tree_[v] == m) {
        break;  // the ancestors above cannot change either
      }
      max_tree_[v] = m;
    }
  }

  // Recomputes the max-tree after superblocks moved. Never allocates: add_superblock reserved
  // the capacity, and the tree only shrinks otherwise.
  void rebuild_max_tree() noexcept {
    max_tree_.assign(tree_size(superblocks_.size()), 0);
    std::size_t const leaves = max_tree_.size() / 2;
    for (std::size_t i = 0; i < superblocks_.size(); ++i) {
      max_tree_[leaves + i] = superblocks_[i].units.longest();
    }
    for (std::size_t v = leaves; v-- > 1;) {  // leaves - 1 down to 1; none if leaves <= 1
      max_tree_[v] = std::max(max_tree_[2 * v], max_tree_[2 * v + 1]);
    }
  }

  // Takes the entirely free superblock i out (no allocation: vector erase moves, noexcept).
  void remove_superblock(std::size_t i) noexcept {
    std::size_t const s = superblocks_[i].size;
    auto const d        = static_cast<std::ptrdiff_t>(i);
    bases_.erase(bases_.begin() + d);
    superblocks_.erase(superblocks_.begin() + d);
    rebuild_max_tree();
    held_bytes_ -= s;
    --num_empty_;
    cached_bytes_ -= s;
  }

  [[noreturn]] static void throw_block(std::uintptr_t ptr,
                                       std::size_t bytes,
                                       std::string const& why) {
    throw std::invalid_argument("bitmap_stream_arena: free of [" + format_hex(ptr) + ", +" +
                                std::to_string(bytes) + ") " + why);
  }

  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "bitmap_stream_arena", what, at);
  }

  std::size_t cache_bytes_;
  // Sorted by base, parallel. bases_ is what deallocate's binary search reads, kept apart from
  // the bitmaps so that the search stays in a few cache lines.
  std::vector<std::uintptr_t> bases_;
  std::vector<superblock> superblocks_;
  // Max-tree over the superblocks' longest free runs (units): 1-based heap, leaves at
  // [L, 2L) in address order (2L = tree_size(S)), padding leaves 0; empty without superblocks.
  // Finds the lowest-addressed superblock that fits in O(log S).
  std::vector<std::size_t> max_tree_;
  std::size_t num_empty_{};  // superblocks with no live block
  std::size_t allocated_bytes_{};
  std::size_t held_bytes_{};
  std::size_t cached_bytes_{};  // bytes of the entirely free superblocks
};

}  // namespace rmm::mr::detail::arena
