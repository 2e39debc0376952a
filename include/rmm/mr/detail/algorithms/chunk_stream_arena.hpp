/**
 * @file chunk_stream_arena.hpp
 * @brief The stream arena of arena_memory_resource: the superblocks one stream holds and the free
 * blocks inside them, indexed by the 16 MiB chunk of the global arena in which each superblock
 * starts.
 *
 * Plain host data structure: no CUDA call, no locking, addresses are opaque integers (the tests
 * use fake ones). See chunk_stream_arena.md for the design, the complexities and the limits.
 */
#pragma once

#include <rmm/mr/detail/algorithms/address_ordered_free_list.hpp>
#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/block_array.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail::arena {

/**
 * @brief One stream's arena: the superblocks it holds (taken from the global arena
 * [arena_base, arena_base + arena_size)) and the free blocks inside them.
 *
 * Allocation is lowest-address first fit over all free blocks; a freed block coalesces with its
 * free neighbours inside its superblock, never across a superblock edge, so an entirely free
 * superblock is one free block that can be taken out whole. Superblocks are indexed by the 16 MiB
 * chunk (chunk_size) of the global arena in which they start: a class tree over the chunks (the
 * largest free block per chunk, a size class byte per chunk and the largest class per 64 chunks)
 * finds the lowest-addressed superblock that fits; a table of 2 MiB granules, each naming the
 * superblock that holds its first byte, maps most addresses to their superblock, and a bitmap of
 * the chunks where a superblock starts the rest. Each superblock keeps its free blocks in a small
 * sorted array, or in an address_ordered_free_list once it has more than small_block_limit of them.
 *
 * Not thread-safe: the caller serialises every member.
 */
class chunk_stream_arena {
 public:
  /// @brief Free blocks a superblock keeps in its sorted array; one more switches it to a tree.
  static constexpr std::size_t small_block_limit = 512;

  /// @brief The most array capacity (in blocks) a superblock record keeps when its superblock is
  /// taken out; a larger array is freed (block_array::release), so that records recycled many
  /// times do not each hold small_block_limit blocks of storage. (A superblock whose blocks move
  /// to a tree keeps its array's storage: going back to the array when it is entirely free must
  /// not allocate, since that free cannot fail after changing the tree.)
  static constexpr std::size_t kept_block_capacity = 128;

  /// @brief The largest range an arena indexes: the class tree keeps sizes as 32-bit counts of
  /// allocation_granularity units, so the range is at most 2^32 - 1 units, about 1 TiB.
  static constexpr std::size_t max_arena_size =
      std::size_t{std::numeric_limits<std::uint32_t>::max()} * allocation_granularity;

  /// @brief log2 of the index's chunk: 16 MiB, the batch of superblocks arena_memory_resource
  /// takes at once (8 standard superblocks), so that a batch is one chunk. Against 2 MiB chunks
  /// that is one leaf of the index per batch instead of 8, and an index 8 times smaller
  /// (chunk_stream_arena.md, "Chunk index").
  static constexpr unsigned chunk_shift = 24;
  /// @brief The index's chunk in bytes (a multiple of superblock_size).
  static constexpr std::size_t chunk_size = std::size_t{1} << chunk_shift;

  /**
   * @brief An empty arena over [arena_base, arena_base + arena_size), keeping up to
   * @p cache_bytes bytes of entirely free superblocks for reuse.
   * @throws std::invalid_argument naming the range if it is empty, wraps around or is larger
   * than max_arena_size.
   * @throws std::bad_alloc (the index takes about 40.5 bytes per 16 MiB chunk of the range,
   * allocated here: 8.5 for the chunks, 32 for the granules of 2 MiB; about 104 KB for a 40 GiB
   * range).
   */
  chunk_stream_arena(std::uintptr_t arena_base,
                     std::size_t arena_size,
                     std::size_t cache_bytes = default_cache_bytes)
      : cache_bytes_{cache_bytes}, base_{arena_base}, end_{arena_base + arena_size} {
    if (arena_size == 0 || arena_size > std::numeric_limits<std::uintptr_t>::max() - arena_base ||
        arena_size > max_arena_size) {
      throw std::invalid_argument("chunk_stream_arena: arena [" + format_hex(arena_base) + ", +" +
                                  std::to_string(arena_size) +
                                  ") is empty, wraps around or is larger than " +
                                  std::to_string(max_arena_size) + " bytes");
    }
    std::size_t const chunks = ((arena_size - 1) >> chunk_shift) + 1;
    chunk_head_.assign(chunks, none);
    starts_.assign((chunks + 63) / 64, 0);
    starts_sum_.assign((starts_.size() + 63) / 64, 0);
    granule_owner_.assign(((arena_size - 1) >> granule_shift) + 1, none);
    leaves_.assign(chunks, 0);
    std::size_t const groups = (chunks + group_chunks - 1) / group_chunks;
    cls_.assign(groups * group_chunks, 0);     // whole groups: a group's search reads all 64
    gmax_.assign((groups + 15) / 16 * 16, 0);  // whole vectors of 16 group classes
  }

  /**
   * @brief First fit of @p bytes (a non-zero multiple of allocation_granularity) in the arena's
   * free blocks. O(log_16 chunks + blocks of one superblock) (see chunk_stream_arena.md).
   * @return The address, or nullopt if no free block is large enough (the caller then adds a
   * superblock and retries).
   * @throws std::invalid_argument if @p bytes is zero or not a multiple of the granularity.
   */
  std::optional<std::uintptr_t> allocate(std::size_t bytes) {
    std::uintptr_t const p = allocate_address(bytes);
    if (p == no_address) {
      return std::nullopt;
    }
    return p;
  }

  /// @brief What allocate_address() returns where no free block is large enough: never a block's
  /// address (every block starts below the arena's end).
  static constexpr std::uintptr_t no_address = std::numeric_limits<std::uintptr_t>::max();

  /**
   * @brief allocate(), returning no_address where allocate() returns nullopt. allocate() is this
   * and a test, inlined into its caller: g++ 12 returned the optional from this function's body
   * through memory, a 1-byte store of its flag and then an 8-byte load, which the store cannot
   * forward, a stall on every allocation (2-3 % of the operation, chunk_stream_arena.md).
   * @throws std::invalid_argument as allocate().
   */
  std::uintptr_t allocate_address(std::size_t bytes) {
    if (bytes == 0 || (bytes % allocation_granularity) != 0) {
      throw_bad_size("allocate", bytes);
    }
    std::size_t const c = first_chunk_fitting(bytes);
    if (c == npos) {
      return no_address;
    }
    std::uint32_t s = chunk_head_[c];
    while (sbs_[s].max_free < bytes) {
      s = sbs_[s].next_in_chunk;
    }
    sb_rec& sb               = sbs_[s];
    std::size_t const before = sb.max_free;
    std::uintptr_t const p   = carve(sb, bytes);
    if (sb.allocated == 0) {
      unlink_empty(s);
      cached_bytes_ -= sb.size;
    }
    sb.allocated += bytes;
    allocated_bytes_ += bytes;
    free_bytes_ -= bytes;
    if (sb.max_free != before) {
      refresh_leaf_of(sb, c);
    }
    return p;
  }

  /**
   * @brief Adds the superblock [base, base + size), entirely free.
   * @throws std::invalid_argument naming the range if it is misaligned, empty, outside the
   * arena's range or overlaps a superblock of this arena. @throws std::bad_alloc; in both cases
   * the arena is unchanged.
   */
  void add_superblock(std::uintptr_t base, std::size_t size);

  /**
   * @brief Asks for the cache line that a look-up of @p ptr (deallocate, owns) reads first, for a
   * caller with other work to do before it: a hint, with no effect on the arena. Reads only
   * members fixed at construction, so a caller may call it without the lock that serialises the
   * arena. Never throws.
   */
  void prefetch_lookup(std::uintptr_t ptr) const noexcept {
    if (ptr - base_ < end_ - base_) {
      prefetch_line(granule_owner_.data() + ((ptr - base_) >> granule_shift));
    }
  }

  /// @brief True if @p ptr lies inside a superblock of this arena. O(1) expected.
  [[nodiscard]] bool owns(std::uintptr_t ptr) const noexcept { return find(ptr) != none; }

  /**
   * @brief Frees the block [ptr, ptr + bytes) allocated from this arena (coalescing it).
   *
   * If its superblock becomes entirely free and @p allow_release is true, the superblock is taken
   * out of the arena and returned (the caller gives it back to the global arena) when keeping it
   * would make the entirely free superblocks exceed the cache size given at construction;
   * otherwise it is kept for reuse.
   * @return The released superblock, if any.
   * @throws std::invalid_argument naming the block if it is not inside one superblock of this
   * arena, is misaligned or empty, exceeds the bytes allocated in its superblock, or overlaps a
   * free block (a double free); the arena is then unchanged. @throws std::bad_alloc; the blocks
   * are then unchanged.
   */
  std::optional<range> deallocate(std::uintptr_t ptr,
                                  std::size_t bytes,
                                  bool allow_release = true) {
    free_result r = deallocate_if_owned(ptr, bytes, allow_release);
    if (!r.owned) {
      throw_not_inside(ptr, bytes);
    }
    return r.released;
  }

  /// @brief What deallocate_if_owned did: whether the block was this arena's (nothing was done
  /// if not), and the superblock it released, if any.
  struct free_result {
    bool owned;
    std::optional<range> released;
  };

  /**
   * @brief deallocate(), for a caller that does not know whether @p ptr is this arena's: one
   * look-up instead of owns() and then deallocate(). If @p ptr lies in no superblock of this
   * arena, nothing is done and `owned` is false.
   * @throws std::invalid_argument and std::bad_alloc as deallocate() for a block inside a
   * superblock of this arena; the arena is then unchanged.
   */
  free_result deallocate_if_owned(std::uintptr_t ptr,
                                  std::size_t bytes,
                                  bool allow_release = true) {
    std::uint32_t const s = find(ptr);
    if (s == none) {
      return {false, std::nullopt};
    }
    sb_rec& sb          = sbs_[s];
    std::size_t const c = chunk_of(sb.base);
    prefetch_line(leaf_of(c));  // its line is needed after give(): load it meanwhile
    if (bytes > sb.size - (ptr - sb.base)) {
      throw_not_inside(ptr, bytes);
    }
    if (bytes > sb.allocated) {
      throw std::invalid_argument(
          "chunk_stream_arena: free of [" + format_hex(ptr) + ", +" + std::to_string(bytes) +
          ") exceeds the " + std::to_string(sb.allocated) + " bytes allocated in its superblock");
    }
    bool const now_empty     = sb.allocated == bytes;
    bool const release       = now_empty && allow_release && !keeps(sb.size);
    std::size_t const before = sb.max_free;
    give(sb, ptr, bytes);  // throws before changing anything
    sb.allocated -= bytes;
    allocated_bytes_ -= bytes;
    free_bytes_ += bytes;
    if (!release) {
      if (now_empty) {
        link_empty(s);
        cached_bytes_ += sb.size;
      }
      if (sb.max_free != before) {
        refresh_leaf_of(sb, c);
      }
      return {true, std::nullopt};
    }
    range const r{sb.base, sb.size};
    remove_superblock(s);
    return {true, r};
  }

  /// @brief Takes every entirely free superblock out of the arena and returns them in address
  /// order (for the caller to give back to the global arena). O(k log k + k log_16 chunks).
  std::vector<range> release_free_superblocks();

  /// @brief Bytes in live blocks.
  [[nodiscard]] std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }
  /// @brief Bytes of the superblocks held.
  [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }
  /// @brief Free bytes inside the superblocks held.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_; }
  /// @brief Largest free block inside the superblocks held. O(1).
  [[nodiscard]] std::size_t largest_free_block() const noexcept { return largest_.get(); }
  /**
   * @brief largest_free_block(), for a caller that does not hold the lock that serialises this
   * arena: the one member that may be read concurrently with changes (a relaxed atomic, updated
   * whenever the largest leaf of the class tree changes). Exact for the thread that made the last
   * change; another thread may read an older value. arena_memory_resource reads it to skip its
   * stream arena's lock for a large request that no free block of the arena could hold.
   */
  [[nodiscard]] std::size_t largest_free_block_hint() const noexcept { return largest_.get(); }
  /**
   * @brief The size of the largest superblock this arena has ever held (it never decreases); no
   * block larger than it can be this arena's. Readable without the lock, as
   * largest_free_block_hint(): another thread may read an older, smaller value.
   * arena_memory_resource reads it to free a large block that cannot be the arena's without taking
   * the arena's lock.
   */
  [[nodiscard]] std::size_t largest_superblock_hint() const noexcept {
    return largest_superblock_.get();
  }
  /// @brief Number of superblocks held.
  [[nodiscard]] std::size_t num_superblocks() const noexcept { return num_superblocks_; }
  /// @brief Number of entirely free superblocks held.
  [[nodiscard]] std::size_t num_free_superblocks() const noexcept { return num_empty_; }
  /// @brief Bytes of the entirely free superblocks held.
  [[nodiscard]] std::size_t cached_bytes() const noexcept { return cached_bytes_; }
  /// @brief The cache size: how many bytes of entirely free superblocks deallocate keeps.
  [[nodiscard]] std::size_t cache_bytes() const noexcept { return cache_bytes_; }
  /// @brief The keep rule: whether an entirely free superblock of @p bytes stays in the arena,
  /// that is whether the entirely free superblocks would stay within the cache size with it.
  /// deallocate applies it to a superblock it empties; callers that add a free superblock for
  /// reuse (arena_memory_resource's freed large blocks) apply it before add_superblock. O(1).
  [[nodiscard]] bool keeps(std::size_t bytes) const noexcept {
    return bytes <= cache_bytes_ - std::min(cache_bytes_, cached_bytes_);
  }
  /// @brief Sets the cache size. Superblocks kept already stay (even beyond it); the size rules
  /// the next free that empties a superblock. O(1).
  void set_cache_bytes(std::size_t bytes) noexcept { cache_bytes_ = bytes; }
  /// @brief Number of superblocks keeping their free blocks in a tree (more than
  /// small_block_limit free blocks at some point since they were last entirely free).
  [[nodiscard]] std::size_t num_tree_superblocks() const noexcept { return num_trees_; }
  /// @brief First byte of the global arena range this arena indexes.
  [[nodiscard]] std::uintptr_t arena_base() const noexcept { return base_; }
  /// @brief Size of the global arena range this arena indexes.
  [[nodiscard]] std::size_t arena_size() const noexcept { return end_ - base_; }

  /// @brief Calls `f(base, size, allocated bytes)` for every superblock in address order.
  /// O(chunks / 64 + S).
  template <typename F>
  void for_each_superblock(F&& f) const {
    for_each_sb([&](sb_rec const& sb) { f(sb.base, sb.size, sb.allocated); });
  }

  /// @brief The free blocks in address order. O(chunks / 64 + S + n).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_blocks() const;

  /**
   * @brief Checks every invariant listed in chunk_stream_arena.md: the blocks of each superblock
   * (sorted, aligned, inside it, coalesced, counted), the chunk lists and the start bitmaps, the
   * class tree, the list of entirely free superblocks, the slots and the counters. O(chunks + n).
   * For tests.
   * @throws std::logic_error describing the first violation.
   */
  void validate() const;

  /// @brief A multi-line description (superblocks and their use), for the out-of-memory dump.
  /// O(chunks / 64 + S).
  [[nodiscard]] std::string describe(std::size_t max_lines = 64) const;

 private:
  static constexpr std::size_t group_chunks = 64;  // chunks a group class covers: 4 SSE2 vectors
  static constexpr std::uint32_t none       = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t npos         = std::numeric_limits<std::size_t>::max();
  static_assert(chunk_size % superblock_size == 0);

  // A size that this arena's (serialised) changes write and other threads may read without
  // their lock (largest_free_block_hint): relaxed loads and stores, copied and moved by value.
  class relaxed_size {
   public:
    relaxed_size() noexcept = default;
    relaxed_size(relaxed_size const& o) noexcept : v_{o.get()} {}
    relaxed_size& operator=(relaxed_size const& o) noexcept {
      set(o.get());
      return *this;
    }
    ~relaxed_size() = default;
    [[nodiscard]] std::size_t get() const noexcept { return v_.load(std::memory_order_relaxed); }
    void set(std::size_t v) noexcept { v_.store(v, std::memory_order_relaxed); }

   private:
    std::atomic<std::size_t> v_{0};
  };

  struct sb_rec {
    std::uintptr_t base{};
    std::size_t size{};  // 0: a spare slot
    std::size_t allocated{};
    std::size_t max_free{};                           // largest free block
    block_array blocks;                               // in units from base, sorted, unless `tree`
    std::unique_ptr<address_ordered_free_list> tree;  // more than small_block_limit blocks
    std::uint32_t next_in_chunk{none};                // next superblock starting in the chunk
    std::uint32_t empty_prev{none};                   // list of entirely free superblocks
    std::uint32_t empty_next{none};
    bool is_empty{false};
    bool alone{false};  // the only superblock starting in its chunk: its max_free is the leaf
  };

  [[nodiscard]] std::size_t chunk_of(std::uintptr_t a) const noexcept {
    return (a - base_) >> chunk_shift;
  }

  template <typename F>
  void for_each_sb(F&& f) const {
    for (std::size_t w = 0; w < starts_.size(); ++w) {
      for (std::uint64_t bits = starts_[w]; bits != 0; bits &= bits - 1) {
        std::size_t const c = (w << 6U) + static_cast<std::size_t>(__builtin_ctzll(bits));
        for (std::uint32_t s = chunk_head_[c]; s != none; s = sbs_[s].next_in_chunk) {
          f(sbs_[s]);
        }
      }
    }
  }

  // --- address to superblock (defined in chunk_stream_arena_lookup.hpp) -----------------------
  // Where superblocks start: a bitmap of chunks and a summary bitmap of its words.
  static std::size_t top_bit(std::uint64_t x) noexcept {
    return 63 - static_cast<std::size_t>(__builtin_clzll(x));
  }
  void set_start(std::size_t c) noexcept;
  void clear_start(std::size_t c) noexcept;
  // Highest chunk <= c in which a superblock starts, or npos.
  [[nodiscard]] std::size_t prev_start(std::size_t c) const noexcept;
  // The superblock with the greatest base <= a, or none.
  [[nodiscard]] std::uint32_t last_start_le(std::uintptr_t a) const noexcept;
  // The superblock holding ptr, or none: its granule's entry where that superblock holds ptr,
  // else the chunk lists.
  [[nodiscard]] std::uint32_t find(std::uintptr_t ptr) const noexcept;
  // Per granule (2 MiB) the superblock that holds the granule's first byte: the granules whose
  // first byte lies in [base, base + size) now name s, or none.
  static constexpr unsigned granule_shift = 21;
  static constexpr std::size_t granule    = std::size_t{1} << granule_shift;
  void set_granules(std::uintptr_t base, std::size_t size, std::uint32_t s) noexcept;

  // --- class tree over chunks: leaf = largest free block of the superblocks starting there ----
  // (defined in chunk_stream_arena_tree.hpp; chunk_stream_arena.md, "Class tree")
  // Leaf c from the superblocks starting in chunk c; refresh_leaf_of: after a change of sb's
  // max_free, where sb starts in chunk c (one load where sb is alone there); both set_leaf.
  void refresh_leaf(std::size_t c) noexcept;
  void refresh_leaf_of(sb_rec const& sb, std::size_t c) noexcept;
  // Leaf c is now v: its class, its group's class and largest_ follow where they change.
  void set_leaf(std::size_t c, std::uint32_t v) noexcept;
  [[nodiscard]] std::uint32_t* leaf_of(std::size_t c) noexcept { return &leaves_[c]; }
  // Sets `alone` on the superblocks starting in chunk c: whether there is one.
  void mark_alone(std::size_t c) noexcept {
    std::uint32_t const head = chunk_head_[c];
    bool const one           = sbs_[head].next_in_chunk == none;
    for (std::uint32_t s = head; s != none; s = sbs_[s].next_in_chunk) {
      sbs_[s].alone = one;
    }
  }
  [[nodiscard]] std::uint32_t leaf(std::size_t c) const noexcept { return leaves_[c]; }
  // The class tree: a byte class per chunk (8 classes an octave, monotonic in the leaf) and the
  // largest class of each group of 64 chunks.
  [[nodiscard]] static std::uint8_t cls_of(std::uint32_t u) noexcept {
    if (u < 8) {
      return static_cast<std::uint8_t>(u);
    }
    unsigned const l = 31U - static_cast<unsigned>(__builtin_clz(u));
    return static_cast<std::uint8_t>(8U + (l - 3U) * 8U + ((u >> (l - 3U)) & 7U));
  }
  // The largest leaf; sets top_count_ to the chunks holding it.
  [[nodiscard]] std::uint32_t leaf_max() noexcept;
  [[nodiscard]] std::size_t first_chunk_fitting(std::size_t bytes) const noexcept;
  [[nodiscard]] static std::uint32_t units(std::size_t bytes) noexcept {
    return static_cast<std::uint32_t>(bytes / allocation_granularity);
  }
  [[nodiscard]] static std::size_t bytes_of(std::uint32_t n) noexcept {
    return std::size_t{n} * allocation_granularity;
  }

  // --- blocks inside one superblock (defined in chunk_stream_arena_blocks.hpp) ---------------
  // Takes `bytes` from the lowest block that fits (the caller checked max_free). Never throws.
  std::uintptr_t carve(sb_rec& sb, std::size_t bytes) noexcept;
  // Returns [ptr, ptr + bytes) (inside sb) to sb's free blocks, coalescing.
  void give(sb_rec& sb, std::uintptr_t ptr, std::size_t bytes);
  // Moves sb's free blocks into a tree; sb is unchanged if this throws.
  void to_tree(sb_rec& sb);

  // --- entirely free superblocks: an intrusive doubly linked list -----------------------------
  void link_empty(std::uint32_t s) noexcept {
    sb_rec& sb    = sbs_[s];
    sb.is_empty   = true;
    sb.empty_prev = none;
    sb.empty_next = empty_head_;
    if (empty_head_ != none) {
      sbs_[empty_head_].empty_prev = s;
    }
    empty_head_ = s;
    ++num_empty_;
  }
  void unlink_empty(std::uint32_t s) noexcept {
    sb_rec& sb  = sbs_[s];
    sb.is_empty = false;
    if (sb.empty_prev != none) {
      sbs_[sb.empty_prev].empty_next = sb.empty_next;
    } else {
      empty_head_ = sb.empty_next;
    }
    if (sb.empty_next != none) {
      sbs_[sb.empty_next].empty_prev = sb.empty_prev;
    }
    --num_empty_;
  }

  // Takes an entirely free superblock out and recycles its slot.
  void remove_superblock(std::uint32_t s) noexcept;

  // Empties sb's array, keeping its storage unless it holds more than kept_block_capacity.
  static void trim_blocks(sb_rec& sb) noexcept {
    if (sb.blocks.capacity() > kept_block_capacity) {
      sb.blocks.release();
    } else {
      sb.blocks.clear();
    }
  }

  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "chunk_stream_arena", what, at);
  }
  [[noreturn]] static void throw_bad_size(char const* what, std::size_t bytes) {
    throw std::invalid_argument(std::string{"chunk_stream_arena: "} + what + " size " +
                                std::to_string(bytes) + " is not a non-zero multiple of " +
                                std::to_string(allocation_granularity));
  }
  [[noreturn]] static void throw_not_inside(std::uintptr_t ptr, std::size_t bytes) {
    throw std::invalid_argument("chunk_stream_arena: free of [" + format_hex(ptr) + ", +" +
                                std::to_string(bytes) +
                                ") that is not inside one superblock of this arena");
  }

  std::size_t cache_bytes_;
  std::uintptr_t base_;
  std::uintptr_t end_;
  std::vector<sb_rec> sbs_;                   // superblock records; size 0: spare
  std::vector<std::uint32_t> spare_slots_;    // capacity >= sbs_.size()
  std::vector<std::uint32_t> chunk_head_;     // per chunk: first superblock starting there
  std::vector<std::uint64_t> starts_;         // bit per chunk: a superblock starts there
  std::vector<std::uint64_t> starts_sum_;     // bit per word of starts_: it is non-zero
  std::vector<std::uint32_t> granule_owner_;  // per granule: the superblock holding its first byte
  std::vector<std::uint32_t> leaves_;         // per chunk: its largest free block, in units
  relaxed_size largest_;                      // the largest leaf, in bytes
  std::vector<std::uint8_t> cls_;             // per chunk, padded to whole groups of 64
  std::vector<std::uint8_t> gmax_;            // per group of 64 chunks, padded to 16
  std::size_t top_count_{};                   // chunks whose leaf is largest_ (when largest_ > 0)
  relaxed_size largest_superblock_;           // the largest superblock ever added
  std::uint32_t empty_head_{none};
  std::size_t num_empty_{};
  std::size_t num_trees_{};
  std::size_t allocated_bytes_{};
  std::size_t held_bytes_{};
  std::size_t cached_bytes_{};  // bytes of the entirely free superblocks
  std::size_t free_bytes_{};
  std::size_t num_superblocks_{};
};

}  // namespace rmm::mr::detail::arena

#include <rmm/mr/detail/algorithms/chunk_stream_arena_blocks.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena_checks.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena_lookup.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena_superblocks.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena_tree.hpp>
