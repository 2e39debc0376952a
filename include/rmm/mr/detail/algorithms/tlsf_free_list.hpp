/**
 * @file tlsf_free_list.hpp
 * @brief A coalescing free list of address ranges organised as a two-level segregated fit (TLSF)
 * index. It backs the coalescing pool resource.
 *
 * The ranges are GPU memory, which host code must never touch, so all bookkeeping is out of
 * band: block descriptors live in a host vector and an address -> descriptor hash map finds them
 * on deallocation. See tlsf_free_list.md for the design, complexities and limits.
 *
 * Split by concern: size-class arithmetic in tlsf_size_classes.hpp; region lifecycle (insert,
 * extend, shrink, take) in tlsf_free_list_regions.hpp; argument and invariant checks in
 * tlsf_free_list_checks.hpp; moving free blocks between tags and the largest free block in
 * tlsf_free_list_tags.hpp. The last three define members out of line; included at the end.
 */
#pragma once

#include <rmm/mr/detail/algorithms/address_map.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>
#include <rmm/mr/detail/algorithms/tlsf_size_classes.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Coalescing free list over address ranges ("regions"): O(1) allocation search (plus a
 * scan of one size class, only when nothing larger is free), O(1) deallocation with coalescing,
 * and an exact `largest_free_block()`.
 *
 * Memory enters as regions (`insert_region`, typically one upstream allocation each). Blocks are
 * carved from free blocks and merged back with their free address neighbours of the same region
 * only: two regions that happen to be adjacent in the address space are never merged, because
 * each must be returned upstream exactly as it was obtained. A region can grow and shrink in place
 * at its end (`extend_region`, `shrink_region`), for an upstream that is a growable virtual range.
 *
 * All sizes and addresses are multiples of the granularity given at construction.
 *
 * Not thread-safe: every member, const or not, must be serialised by the caller.
 */
class tlsf_free_list {
 public:
  /// @brief Identifies a region. Ids of regions removed by `take_free_regions()` may be reused.
  using region_id = std::size_t;
  /**
   * @brief Owner tag of a free block (a stream, for the stream-ordered pool). Free blocks are
   * indexed per tag; `allocate(size, t)` only takes blocks of tag t, and a freed block merges only
   * with free neighbours of its own tag. Tags are small dense integers; tag 0 always exists.
   */
  using tag_t = std::uint32_t;

  /// @brief Which blocks the address map holds (tlsf_free_list.md, "Descriptors").
  enum class keyed_blocks : std::uint8_t {
    /// Every block, free or allocated: every look-up by address is O(1).
    all,
    /// Allocated blocks only: a split or merge of free blocks touches no key, and a look-up of a
    /// free block by address (retag_block, allocate_range, a double free's message) walks its
    /// region's blocks instead, O(blocks in the region).
    allocated,
  };

  /**
   * @brief Creates an empty free list.
   * @param granularity Unit of every address and size handled; a power of two (e.g. 256).
   * @param erase How the block-address map erases (address_map::erase_mode): `tombstone` suits a
   * list of up to a few thousand blocks whose frees merge on most calls (the arena's global
   * arena); the default, `shift`, suits every size.
   * @param keyed Which blocks the address map holds: `allocated` suits a list whose owner never
   * looks up free blocks by address (the arena's global arena); the default, `all`, suits every
   * use.
   * @throws std::invalid_argument if @p granularity is not a power of two.
   */
  explicit tlsf_free_list(std::size_t granularity,
                          address_map::erase_mode erase = address_map::erase_mode::shift,
                          keyed_blocks keyed            = keyed_blocks::all)
      : granularity_{granularity}, key_free_{keyed == keyed_blocks::all}, by_address_{erase} {
    if (granularity == 0 || (granularity & (granularity - 1)) != 0) {
      throw std::invalid_argument("tlsf_free_list: granularity " + std::to_string(granularity) +
                                  " is not a power of two");
    }
    shift_ = sc::log2_floor(granularity);
    index_.emplace_back();
  }

  /**
   * @brief Adds the range [base, base + size) as one free block of tag @p tag in a new region.
   * @return The id of the new region.
   * @throws std::invalid_argument if @p size is zero, @p base or @p size is not a multiple of the
   * granularity, the range wraps around the address space, or it overlaps a known region.
   * @throws std::bad_alloc (or std::length_error) if bookkeeping cannot grow; the list is then
   * unchanged.
   */
  region_id insert_region(std::uintptr_t base, std::size_t size, tag_t tag = 0);

  /**
   * @brief Carves a block of exactly @p size bytes from a free block and returns its address.
   *
   * Guarantee: if `largest_free_block() >= size`, this returns a block. The block is taken from
   * the start of the chosen free block; the rest stays free.
   *
   * @param size Multiple of the granularity, non-zero (callers round up first).
   * @param tag Only free blocks of this tag are considered (see tag_t).
   * @return The block's address, or std::nullopt if no free block of @p tag has at least
   * @p size bytes.
   * @throws std::invalid_argument if @p size is zero or not a multiple of the granularity.
   * @throws std::bad_alloc if bookkeeping cannot grow; the list is then unchanged.
   */
  std::optional<std::uintptr_t> allocate(std::size_t size, tag_t tag = 0) {
    return as_optional(allocate_block("allocate", size, tag, false));
  }

  /**
   * @brief As `allocate`, and marks the block: a flag for the caller's own use (the arena marks
   * the blocks it hands to no stream), read back by `marked_size`, cleared when the block is
   * freed (`deallocate` reports it). Blocks from `allocate` and `allocate_range` are unmarked;
   * `join_allocated` keeps the first block's mark. Same cost and guarantees as `allocate`.
   */
  std::optional<std::uintptr_t> allocate_marked(std::size_t size, tag_t tag = 0) {
    return as_optional(allocate_block("allocate_marked", size, tag, true));
  }

  /**
   * @brief Returns the block at @p ptr, which must have been returned by `allocate(size)` and
   * not yet deallocated, as a free block of @p tag, and merges it with its free neighbours of the
   * same tag in the same region.
   * @throws std::invalid_argument naming @p ptr and @p size if @p ptr is not the start of a block,
   * the block is already free (double free), or @p size differs from its size. The list is then
   * unchanged.
   * @throws std::bad_alloc only when @p tag is new and its index cannot be created (then
   * unchanged). Never for an existing tag.
   * @return Whether the block was marked (`allocate_marked`).
   */
  [[gnu::always_inline]] bool deallocate(std::uintptr_t ptr, std::size_t size, tag_t tag = 0) {
    std::size_t const slot = lookup_allocated(ptr, size);
    index_t const idx      = by_address_.value_at(slot);
    ensure_tag(tag);
    bool const was = blocks_[idx].marked;
    free_allocated(idx, tag, slot);
    return was;
  }

  /**
   * @brief `deallocate(ptr, size)` of a marked block (`allocate_marked`) as one lookup: for a
   * caller that would otherwise ask `marked_size` first. O(1) besides the merge.
   * @return @p size if the marked block at @p ptr had that size and is now free; 0 if no marked
   * block starts at @p ptr; the block's size if it differs from @p size. In the last two cases
   * nothing changes.
   */
  std::size_t deallocate_marked(std::uintptr_t ptr, std::size_t size) noexcept {
    std::size_t const slot = by_address_.slot_of(ptr);  // one probe for the look-up and erase
    index_t const idx      = slot == address_map::npos_slot ? nil : by_address_.value_at(slot);
    if (idx == nil || !blocks_[idx].marked || blocks_[idx].size != size) {
      return idx == nil || !blocks_[idx].marked ? 0 : blocks_[idx].size;
    }
    free_allocated(idx, 0, slot);  // marked: allocated, so tag 0's index exists (tags are dense)
    return size;
  }

  /// @brief Clears the mark of the allocated block at @p ptr; returns its size if it was
  /// marked, else 0 (nothing changes). O(1).
  std::size_t unmark(std::uintptr_t ptr) noexcept {
    index_t const idx = marked_index(ptr);
    if (idx == address_map::npos) {
      return 0;
    }
    blocks_[idx].marked = false;
    return blocks_[idx].size;
  }

  /// @brief The size of the marked allocated block that starts at @p ptr, or 0 if no block
  /// starts there, it is free, or it is not marked. O(1).
  [[nodiscard]] std::size_t marked_size(std::uintptr_t ptr) const noexcept {
    index_t const idx = marked_index(ptr);
    return idx == address_map::npos ? 0 : blocks_[idx].size;
  }

  /**
   * @brief Gives the free block of tag @p from that starts at @p ptr, if there is one, to tag
   * @p to, merging it with free neighbours of tag @p to. O(1).
   * @return Its size, or 0 if no free block of tag @p from starts at @p ptr (nothing changes).
   * @throws std::bad_alloc only when @p to is new and its index cannot be created (then
   * unchanged).
   */
  std::size_t retag_block(std::uintptr_t ptr, tag_t from, tag_t to) {
    return retag_index(find_block(ptr), from, to);
  }

  /**
   * @brief `retag_block` of the block that directly follows, in its region, the allocated block
   * at @p ptr: for a caller that has just allocated from tag @p from and takes the rest of the
   * free block too. O(1) under either keying (the allocated block has a key; its neighbour is
   * one link away), where `retag_block` under `keyed_blocks::allocated` walks the region.
   * @return The size moved, or 0 if @p ptr is not the start of an allocated block, the block
   * after it is not a free block of @p from (or there is none), or @p from == @p to; then
   * nothing changes.
   * @throws std::bad_alloc only when @p to is new and its index cannot be created (then
   * unchanged).
   */
  std::size_t retag_after(std::uintptr_t ptr, tag_t from, tag_t to);

  /**
   * @brief Gives every free block of tag @p from to tag @p to, merging it with free neighbours
   * of tag @p to. O(k) in the number k of free blocks of @p from (plus one vector of k indices).
   * @return The number of bytes moved.
   * @throws std::bad_alloc if bookkeeping cannot grow; the list is then unchanged.
   */
  std::size_t retag(tag_t from, tag_t to);

  /// @brief The granularity given at construction.
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  /// @brief Sum of the sizes of all free blocks.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_; }
  /// @brief Sum of the sizes of the free blocks of @p tag (0 for a tag never used).
  [[nodiscard]] std::size_t free_bytes(tag_t tag) const noexcept {
    return tag < index_.size() ? index_[tag].free_bytes : 0;
  }
  /// @brief Number of free blocks of @p tag (0 for a tag never used).
  [[nodiscard]] std::size_t num_free_blocks(tag_t tag) const noexcept {
    return tag < index_.size() ? index_[tag].num_free : 0;
  }
  /// @brief One past the highest tag used so far.
  [[nodiscard]] std::size_t num_tags() const noexcept { return index_.size(); }
  /// @brief Sum of the sizes of all allocated blocks.
  [[nodiscard]] std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }
  /// @brief Sum of the sizes of all regions (`free_bytes() + allocated_bytes()`).
  [[nodiscard]] std::size_t total_bytes() const noexcept { return total_bytes_; }
  /// @brief Number of free blocks (after coalescing).
  [[nodiscard]] std::size_t num_free_blocks() const noexcept { return num_free_blocks_; }
  /// @brief Number of regions currently held.
  [[nodiscard]] std::size_t num_regions() const noexcept { return region_map_.size(); }

  /**
   * @brief Size of the largest free block of any tag, exactly; 0 if there is none.
   * O(number of tags) times the cost of `largest_free_block(tag)`.
   */
  [[nodiscard]] std::size_t largest_free_block() const noexcept;

  /**
   * @brief Size of the largest free block of @p tag, exactly; 0 if there is none.
   *
   * O(1) to find the highest non-empty size class, then a scan of that one class's list when
   * the class spans more than one granule (its blocks differ in size). See the design note.
   */
  [[nodiscard]] std::size_t largest_free_block(tag_t tag) const noexcept;

  /**
   * @brief True if region @p id has no allocated block (its free blocks may still carry
   * different tags; after `retag` of all of them to one tag it is a single free block).
   * @throws std::invalid_argument if @p id does not name a current region.
   */
  [[nodiscard]] bool region_fully_free(region_id id) const {
    return live_region(id).allocated_blocks == 0;
  }

  /**
   * @brief Start address of region @p id. O(1).
   * @throws std::invalid_argument if @p id does not name a current region.
   */
  [[nodiscard]] std::uintptr_t region_base(region_id id) const { return live_region(id).base; }

  /**
   * @brief Size of region @p id, as inserted and then extended or shrunk. O(1).
   * @throws std::invalid_argument if @p id does not name a current region.
   */
  [[nodiscard]] std::size_t region_size(region_id id) const { return live_region(id).size; }

  /**
   * @brief Size and tag of the last block (in address order) of region @p id if it is free,
   * std::nullopt if it is allocated: what `shrink_region` could trim, or a growth merge with. O(1).
   * @throws std::invalid_argument if @p id does not name a current region.
   */
  [[nodiscard]] std::optional<std::pair<std::size_t, tag_t>> trailing_free_block(
      region_id id) const;

  /**
   * @brief Grows region @p id in place (its upstream is a growable virtual range): appends
   * [end, end + @p bytes), end = base + size, as free memory of tag @p tag. If the region's last
   * block is free and of tag @p tag, that block grows (and moves to its new size class);
   * otherwise the memory becomes a new free block after it. `free_bytes()` and `total_bytes()`
   * grow by @p bytes. O(1) plus an O(log R) look-up of the next region (R regions) and, for a
   * new block, one address-map insert.
   *
   * @pre @p bytes is a non-zero multiple of the granularity.
   * @throws std::invalid_argument naming the values if @p id does not name a current region,
   * @p bytes is zero or not a multiple of the granularity, the grown range would wrap around the
   * address space, or it would overlap the next region in address order. The list is then
   * unchanged.
   * @throws std::bad_alloc (or std::length_error) if bookkeeping cannot grow; the list is then
   * unchanged.
   */
  void extend_region(region_id id, std::size_t bytes, tag_t tag = 0);

  /**
   * @brief Trims region @p id to [base, base + @p new_size): gives up the end of its last block,
   * which must be free (of any tag), so the caller can unmap it upstream. If the last block
   * starts exactly at base + @p new_size it is removed, otherwise it is shortened.
   * `free_bytes()` and `total_bytes()` drop by the size removed. O(1) plus, when the block is
   * removed, one address-map erase; never allocates.
   *
   * @pre 0 < @p new_size < `region_size(id)`, a multiple of the granularity, and base +
   * @p new_size at or above the start of the region's last block, which is free.
   * @throws std::invalid_argument naming the values if @p id does not name a current region or
   * any other precondition fails. The list is then unchanged.
   */
  void shrink_region(region_id id, std::size_t new_size);

  /**
   * @brief Allocates exactly [@p ptr, @p ptr + @p size) out of the free block (of any tag) that
   * starts at @p block: the parts of it before and after the range stay free with its tag. The
   * pool uses it to take a chosen range out of service while the physical memory behind it is
   * unmapped (a "hole"); deallocating the range later returns it like any block. O(1) plus up to
   * two address-map inserts.
   *
   * @pre @p ptr and @p size are multiples of the granularity, @p size is non-zero, and
   * [@p ptr, @p ptr + @p size) lies inside the free block at @p block.
   * @throws std::invalid_argument naming the values if no free block starts at @p block or any
   * other precondition fails; std::bad_alloc (or std::length_error) if bookkeeping cannot grow.
   * The list is then unchanged.
   */
  void allocate_range(std::uintptr_t block, std::uintptr_t ptr, std::size_t size);

  /**
   * @brief Joins the allocated block at @p first with the allocated block that follows it
   * physically (in the same region), which must start at @p second: one allocated block of both
   * sizes remains at @p first, to be deallocated with their sum. The pool joins adjacent holes
   * so that mapping one back makes one block. O(1) plus one address-map erase; never allocates.
   * @throws std::invalid_argument naming the values if no allocated block starts at @p first or
   * the block after it is not an allocated block starting at @p second; the list is then
   * unchanged.
   */
  void join_allocated(std::uintptr_t first, std::uintptr_t second);

  /**
   * @brief Sizes of the free blocks of tag @p tag just before and just after the allocated
   * block at @p ptr (0 where that neighbour is allocated, of another tag or absent): what
   * `deallocate(ptr, size, tag)` would merge it with. O(1).
   * @throws std::invalid_argument if no allocated block starts at @p ptr.
   */
  [[nodiscard]] std::pair<std::size_t, std::size_t> free_neighbours(std::uintptr_t ptr,
                                                                    tag_t tag) const;

  /**
   * @brief Number of allocated blocks in region @p id. O(1).
   * @throws std::invalid_argument if @p id does not name a current region.
   */
  [[nodiscard]] std::size_t region_allocated_blocks(region_id id) const {
    return live_region(id).allocated_blocks;
  }

  /**
   * @brief Removes every region that is entirely free and a single free block (all its free
   * space carries one tag) and returns them as (base, size), in increasing address order, so the
   * caller can give them back upstream.
   * @throws std::bad_alloc if the result cannot be allocated; the list is then unchanged.
   */
  std::vector<std::pair<std::uintptr_t, std::size_t>> take_free_regions();

  /**
   * @brief Calls `f(base, size, is_free, region, tag)` for every block, region by region in
   * increasing address order (tag is meaningful for free blocks only). O(number of blocks);
   * meant for logging, dumps and tests. @p f must not modify this list.
   */
  template <typename F>
  void for_each_block(F&& f) const;

  /**
   * @brief Calls `f(id, base, size, fully_free)` for every region in increasing address order.
   * @p f must not modify this list.
   */
  template <typename F>
  void for_each_region(F&& f) const;

  /**
   * @brief Checks every invariant (O(number of blocks + number of descriptors)); for tests.
   * @throws std::logic_error describing the first violation found.
   */
  void validate() const;

 private:
  using index_t                         = std::uint32_t;
  static constexpr index_t nil          = std::numeric_limits<index_t>::max();
  static constexpr region_id no_region  = std::numeric_limits<region_id>::max();
  using sc                              = tlsf_size_classes;
  using size_class                      = sc::size_class;
  static constexpr std::size_t sl_count = sc::sl_count;
  static constexpr std::size_t fl_count = sc::fl_count;

  struct block {
    std::uintptr_t base{};
    std::size_t size{};
    region_id region{no_region};
    index_t prev_phys{nil};  // address neighbours within the region
    index_t next_phys{nil};
    index_t prev_free{nil};  // size-class list; next_free also chains spare descriptors
    index_t next_free{nil};
    tag_t tag{0};  // owner of a free block
    bool free{false};
    bool marked{false};  // allocate_marked; never set on a free block
  };

  struct region {
    std::uintptr_t base{};
    std::size_t size{};
    index_t first_block{nil};  // never changes: merges keep the lower descriptor
    index_t last_block{nil};   // the block ending at base + size: O(1) extend, trim, query
    std::size_t allocated_blocks{};
    bool live{false};
    region_id next_spare{no_region};
  };

  // The size-class index of one tag: list heads and the two bitmap levels.
  struct free_index {
    free_index() {
      for (auto& row : heads) {
        row.fill(nil);
      }
    }
    std::array<std::array<index_t, sl_count>, fl_count> heads{};
    std::array<std::uint32_t, fl_count> sl_bitmap{};
    std::uint64_t fl_bitmap{};
    std::size_t num_free{};
    std::size_t free_bytes{};
  };

  [[nodiscard]] size_class class_of_size(std::size_t bytes) const noexcept {
    return sc::class_of_units(bytes >> shift_);
  }

  // Lowest non-empty class >= c, by two bit scans.
  [[nodiscard]] static std::optional<size_class> nonempty_class_from(size_class c,
                                                                     free_index const& x) noexcept {
    std::uint32_t const sl_map = x.sl_bitmap[c.fl] & (~std::uint32_t{0} << c.sl);
    if (sl_map != 0) {
      return size_class{c.fl, sc::lowest_bit(sl_map)};
    }
    if (c.fl + 1 >= fl_count) {
      return std::nullopt;
    }
    std::uint64_t const fl_map = x.fl_bitmap & (~std::uint64_t{0} << (c.fl + 1));
    if (fl_map == 0) {
      return std::nullopt;
    }
    std::size_t const fl = sc::lowest_bit(fl_map);
    return size_class{fl, sc::lowest_bit(x.sl_bitmap[fl])};
  }

  [[nodiscard]] index_t find_fit(std::size_t size, free_index const& x) const noexcept {
    std::size_t const units = size >> shift_;
    if (auto const good = sc::good_fit_class(units)) {
      if (auto const c = nonempty_class_from(*good, x)) {
        return x.heads[c->fl][c->sl];
      }
    }
    // Nothing in a class that surely fits: only a block of the request's own class, larger
    // than the request, can still fit. The scan is confined to that one list.
    size_class const own = sc::class_of_units(units);
    for (index_t i = x.heads[own.fl][own.sl]; i != nil; i = blocks_[i].next_free) {
      if (blocks_[i].size >= size) {
        return i;
      }
    }
    return nil;
  }

  // Block mechanics (tlsf_free_list_blocks.hpp).
  // Allocates the front `size` bytes of free block idx; strong exception guarantee.
  std::uintptr_t carve(index_t idx, std::size_t size);

  // What allocate_block returns when no free block fits: never a block's address (a block ends
  // at or below the top of the address space, and is not empty).
  static constexpr std::uintptr_t no_address = std::numeric_limits<std::uintptr_t>::max();

  // The optional the public members return. Built by the inlined caller rather than returned by
  // allocate_block: g++ 12 assembled a returned optional in memory, a 1-byte store of its flag
  // then an 8-byte load, which cannot be forwarded from the store and stalled every allocation.
  static std::optional<std::uintptr_t> as_optional(std::uintptr_t p) noexcept {
    if (p == no_address) {
      return std::nullopt;
    }
    return p;
  }

  std::uintptr_t allocate_block(char const* what, std::size_t size, tag_t tag, bool mark) {
    check_size(what, size);
    ensure_tag(tag);
    index_t const idx = find_fit(size, index_[tag]);
    if (idx == nil) {
      return no_address;
    }
    std::uintptr_t const base = carve(idx, size);  // the block keeps the descriptor idx
    blocks_[idx].marked       = mark;
    return base;
  }
  // retag_block and retag_after once the block is found (nil or address_map::npos: none).
  std::size_t retag_index(index_t idx, tag_t from, tag_t to);
  // Turns the allocated block idx, whose key is in the address map's slot `slot`, into a free
  // block of `tag` (whose index exists), unmarked, and merges it with its free same-tag
  // neighbours: deallocate and deallocate_marked after lookup.
  // Always inlined: as a call, the arena's large frees ran 7-9 more instructions each (session v).
  [[gnu::always_inline]] void free_allocated(index_t idx, tag_t tag, std::size_t slot) noexcept;
  // Links the (unlinked) free block idx after merging it with its free same-tag neighbours.
  // deallocate, coalesce_and_link, absorb_next and drop_block are always inlined: as four nested
  // calls they cost the pool about 20 instructions per free in the host model of the n = 1,000
  // rows, each call saving and restoring registers (docs/benchmarks.md, thirty-eighth step).
  [[gnu::always_inline]] void coalesce_and_link(index_t idx) noexcept;
  // Merges the (unlinked) next neighbour into idx and frees its descriptor.
  [[gnu::always_inline]] void absorb_next(index_t idx) noexcept;
  // Adds / removes free block idx to / from its tag's size-class index.
  // link_free always inlined: with address_map's two erase modes inlined beside it,
  // coalesce_and_link grew past GCC's limit and called it, about 10 more instructions per large
  // free in the host model (session z).
  // unlink_free always inlined too: a call on every allocation and merge, 8 instructions per
  // operation of the pool's n = 1,000 rows in the host model (thirty-eighth step).
  [[gnu::always_inline]] void link_free(index_t idx) noexcept;
  [[gnu::always_inline]] void unlink_free(index_t idx) noexcept;
  // link_free of a block that is a whole region: ordered, out of line (rare). `inline` here, not
  // at the definition (GCC warns when a later declaration adds an attribute or `inline`).
  [[gnu::noinline]] inline void link_whole_region(index_t idx, index_t& head) noexcept;
  // At most this many list entries are passed to place a whole region in address order.
  static constexpr std::size_t whole_region_walk = 16;
  // A descriptor for [base, base + size), free or not, registered in the address map if keyed;
  // strong guarantee.
  index_t new_block(std::uintptr_t base, std::size_t size, bool free);
  // The spare descriptor (there must be one: reserve_block) as [base, base + size), with no key.
  [[gnu::always_inline]] index_t take_spare(std::uintptr_t base,
                                            std::size_t size,
                                            bool free) noexcept;
  [[gnu::always_inline]] void drop_block(index_t idx) noexcept;
  // Makes sure that a spare descriptor exists, so that the next new_block allocates none.
  void reserve_block();
  // Whether a block that is (or becomes) free / allocated has a key in the address map: every
  // allocated block has one; a free block only with keyed_blocks::all.
  [[nodiscard]] bool keyed(bool free) const noexcept { return key_free_ || !free; }
  // The block that starts at ptr, free or allocated, or npos: the address map, or for a free
  // block under keyed_blocks::allocated a walk over its region's blocks.
  [[nodiscard]] index_t find_block(std::uintptr_t ptr) const noexcept;
  [[nodiscard]] index_t walk_to_block(std::uintptr_t ptr) const noexcept;

  void ensure_tag(tag_t tag);  // makes index_[tag] exist (tlsf_free_list_tags.hpp)
  // The descriptor of the marked allocated block that starts at ptr, or npos (marked_size, unmark).
  [[nodiscard]] index_t marked_index(std::uintptr_t ptr) const noexcept {
    index_t const idx = by_address_.find(ptr);
    return idx != address_map::npos && blocks_[idx].marked ? idx : address_map::npos;
  }
  // Region slots and removal (tlsf_free_list_regions.hpp).
  region_id acquire_region();
  void release_region(region_id rid) noexcept;
  void remove_free_region(region_id rid) noexcept;

  // Argument checks (tlsf_free_list_checks.hpp): each throws std::invalid_argument naming the
  // values when its precondition fails, and changes nothing.
  // lookup_allocated and check_size are on every free and grant: short, with the messages
  // built out of line (throw_bad_free, throw_bad_size), so that they inline.
  // The address map's slot of the allocated block of `size` bytes at ptr; else throws.
  [[nodiscard]] std::size_t lookup_allocated(std::uintptr_t ptr, std::size_t size) const;
  [[noreturn]] void throw_bad_free(std::uintptr_t ptr, std::size_t size, index_t found) const;
  void check_size(char const* what, std::size_t size) const;
  [[noreturn]] void throw_bad_size(char const* what, std::size_t size) const;
  [[nodiscard]] index_t check_range(std::uintptr_t block_base,
                                    std::uintptr_t ptr,
                                    std::size_t size) const;
  void check_new_region(std::uintptr_t base, std::size_t size) const;
  [[nodiscard]] region const& live_region(region_id id) const;
  void check_extend(region_id id, std::size_t bytes) const;
  void check_shrink(region_id id, std::size_t new_size) const;

  static std::string hex(std::uintptr_t v) { return format_hex(v); }

  // Invariant checks behind validate() (tlsf_free_list_checks.hpp).
  static void expect(bool ok, char const* what) { expect_invariant(ok, "tlsf_free_list", what); }
  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "tlsf_free_list", what, at);
  }
  void validate_regions() const;
  void validate_free_lists() const;
  std::size_t validate_free_index(tag_t tag) const;

  std::size_t granularity_;
  std::size_t shift_{};
  bool key_free_;  // keyed_blocks::all
  std::vector<block> blocks_;
  index_t spare_blocks_{nil};
  address_map by_address_;  // every allocated block, and every free one if key_free_
  std::vector<region> regions_;
  region_id spare_regions_{no_region};
  std::map<std::uintptr_t, region_id> region_map_;  // by base: overlap checks, ordered output
  std::vector<free_index> index_;                   // one size-class index per tag
  std::size_t free_bytes_{};
  std::size_t allocated_bytes_{};
  std::size_t total_bytes_{};
  std::size_t num_free_blocks_{};
};

}  // namespace rmm::mr::detail

#include <rmm/mr/detail/algorithms/tlsf_free_list_blocks.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list_checks.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list_regions.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list_tags.hpp>
