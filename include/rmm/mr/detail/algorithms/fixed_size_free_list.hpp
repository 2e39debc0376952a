/**
 * @file fixed_size_free_list.hpp
 * @brief A LIFO free list of equally sized blocks carved from chunks, with always-on detection of
 * double frees and foreign pointers. It backs the fixed-size pool resource.
 *
 * The blocks are GPU memory, which host code must never touch, so the list cannot thread itself
 * through the blocks: it keeps a host stack of returned blocks, a bump index per chunk for blocks
 * never handed out, and one "handed out" bit per block. See fixed_size_free_list.md.
 */
#pragma once

#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Free list of blocks of one size.
 *
 * `pop()` returns the most recently pushed block first (its memory is the most likely to be warm
 * in the GPU's caches), then blocks never handed out, lowest address first within a chunk.
 *
 * Not thread-safe: every member, const or not, must be serialised by the caller.
 */
class fixed_size_free_list {
 public:
  /**
   * @brief Owner tag of a returned block (a stream, for the stream-ordered resource). Each tag
   * has its own LIFO stack; `pop(t)` takes only blocks pushed with tag t, or blocks never handed
   * out (which belong to no one). Tags are small dense integers; tag 0 always exists.
   */
  using tag_t = std::uint32_t;

  /**
   * @brief Creates an empty list of blocks of @p block_size bytes.
   * @throws std::invalid_argument if @p block_size is zero.
   */
  explicit fixed_size_free_list(std::size_t block_size) : block_size_{block_size} {
    if (block_size == 0) {
      throw std::invalid_argument("fixed_size_free_list: block size must not be zero");
    }
    stacks_.emplace_back();
  }

  /**
   * @brief Adds the chunk [base, base + num_blocks * block_size()) as @p num_blocks free blocks.
   * The chunk is split lazily (O(num_blocks / 64) to clear its bitmap, no per-block work).
   * @throws std::invalid_argument naming the chunk if @p num_blocks is zero, the chunk's size
   * overflows or wraps around the address space, or it overlaps a chunk already added.
   * @throws std::bad_alloc if bookkeeping cannot grow. In both cases the list is unchanged.
   */
  void add_chunk(std::uintptr_t base, std::size_t num_blocks) {
    check_chunk(base, num_blocks);
    std::size_t const id = chunks_.size();
    chunks_.push_back(
        chunk{base, num_blocks, 0, std::vector<std::uint64_t>((num_blocks + 63) / 64)});
    try {
      auto const at = by_base_.insert(first_at_or_after(base), {base, id});
      try {
        fresh_.push_back(id);
      } catch (...) {
        by_base_.erase(at);
        throw;
      }
    } catch (...) {
      chunks_.pop_back();
      throw;
    }
    capacity_ += num_blocks;
    free_count_ += num_blocks;
  }

  /**
   * @brief Takes a free block: the one most recently pushed with @p tag, else one never handed
   * out.
   * @return Its address, or std::nullopt if neither exists. Never throws.
   */
  std::optional<std::uintptr_t> pop(tag_t tag = 0) noexcept {
    if (tag < stacks_.size() && !stacks_[tag].empty()) {
      entry const e = stacks_[tag].back();
      stacks_[tag].pop_back();
      return hand_out(e.chunk, e.block);
    }
    if (fresh_.empty()) {
      return std::nullopt;
    }
    std::size_t const id = fresh_.back();
    chunk& c             = chunks_[id];
    std::size_t const b  = c.next_fresh++;
    if (c.next_fresh == c.num_blocks) {
      fresh_.pop_back();
    }
    return hand_out(id, b);
  }

  /**
   * @brief Returns the block at @p ptr, which must have been returned by `pop()` and not pushed
   * since, onto the stack of @p tag.
   * @throws std::invalid_argument naming @p ptr if it lies in no chunk, is not the start of a
   * block, or the block is already free (double free).
   * @throws std::bad_alloc if the stack cannot grow. In both cases the list is unchanged.
   */
  void push(std::uintptr_t ptr, tag_t tag = 0) {
    auto const [id, b] = locate(ptr);
    if (!handed_out(id, b)) {
      throw std::invalid_argument("fixed_size_free_list: push of pointer " + hex(ptr) +
                                  ", which is already free (double free?)");
    }
    if (tag >= stacks_.size()) {
      stacks_.resize(std::size_t{tag} + 1);
    }
    stacks_[tag].push_back(entry{id, b});
    chunks_[id].handed_out[b / 64] &= ~bit(b);
    ++free_count_;
  }

  /**
   * @brief True if @p ptr is the start of a block of some chunk that is currently free.
   * @throws std::invalid_argument naming @p ptr if it lies in no chunk or is not a block start.
   */
  [[nodiscard]] bool is_free(std::uintptr_t ptr) const {
    auto const [id, b] = locate(ptr);
    return !handed_out(id, b);
  }

  /// @brief True if @p ptr is the start of a block of some chunk (free or not).
  [[nodiscard]] bool owns(std::uintptr_t ptr) const noexcept {
    std::size_t const id = chunk_containing(ptr);
    return id != npos && (ptr - chunks_[id].base) % block_size_ == 0;
  }

  /**
   * @brief Moves every block pushed with tag @p from onto the stack of @p to (below its own
   * blocks). O(blocks of both).
   * @return The number of blocks moved.
   * @throws std::bad_alloc if the stack cannot grow; the list is then unchanged.
   */
  std::size_t retag(tag_t from, tag_t to) {
    return retag_newest(from, to, std::numeric_limits<std::size_t>::max());
  }

  /**
   * @brief Moves the @p n blocks most recently pushed with tag @p from (all if it has fewer),
   * in their order, below the blocks of @p to: `to` pops its own blocks first. O(blocks of
   * `to` plus blocks moved).
   * @return The number of blocks moved.
   * @throws std::bad_alloc if the stack cannot grow; the list is then unchanged.
   */
  std::size_t retag_newest(tag_t from, tag_t to, std::size_t n) {
    if (from == to || from >= stacks_.size() || stacks_[from].empty() || n == 0) {
      return 0;
    }
    if (to >= stacks_.size()) {
      stacks_.resize(std::size_t{to} + 1);
    }
    auto& src               = stacks_[from];
    auto& dst               = stacks_[to];
    std::size_t const moved = n < src.size() ? n : src.size();
    auto const first        = src.end() - static_cast<std::ptrdiff_t>(moved);
    dst.insert(dst.begin(), first, src.end());  // older blocks below: LIFO order kept
    src.erase(first, src.end());
    return moved;
  }

  /// @brief Number of blocks pushed with @p tag and not popped since.
  [[nodiscard]] std::size_t stacked(tag_t tag) const noexcept {
    return tag < stacks_.size() ? stacks_[tag].size() : 0;
  }
  /// @brief Number of blocks never handed out (usable with any tag).
  [[nodiscard]] std::size_t fresh() const noexcept {
    std::size_t n = free_count_;
    for (auto const& st : stacks_) {
      n -= st.size();
    }
    return n;
  }
  /// @brief One past the highest tag used so far.
  [[nodiscard]] std::size_t num_tags() const noexcept { return stacks_.size(); }

  /// @brief Number of free blocks.
  [[nodiscard]] std::size_t size() const noexcept { return free_count_; }
  /// @brief True if no block is free.
  [[nodiscard]] bool empty() const noexcept { return free_count_ == 0; }
  /// @brief Number of blocks in all chunks, free or not.
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// @brief The block size given at construction.
  [[nodiscard]] std::size_t block_size() const noexcept { return block_size_; }
  /// @brief Number of chunks added.
  [[nodiscard]] std::size_t num_chunks() const noexcept { return chunks_.size(); }

  /// @brief The chunks as (base, bytes), in the order they were added (for giving them back).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> chunks() const {
    std::vector<std::pair<std::uintptr_t, std::size_t>> out;
    out.reserve(chunks_.size());
    for (chunk const& c : chunks_) {
      out.emplace_back(c.base, c.num_blocks * block_size_);
    }
    return out;
  }

  /**
   * @brief Removes every chunk none of whose blocks is handed out, with its free blocks, so
   * that its memory can be given back; the other chunks and the stacks' order stay.
   * O(capacity() / 64 + size() + num_chunks()).
   * @return The chunks removed as (base, bytes), in address order.
   * @throws std::bad_alloc if the bookkeeping cannot be rebuilt; the list is then unchanged.
   */
  std::vector<std::pair<std::uintptr_t, std::size_t>> release_free_chunks() {
    std::vector<std::size_t> new_id(chunks_.size(), npos);
    std::size_t kept = 0;
    for (std::size_t id = 0; id < chunks_.size(); ++id) {
      auto const& words = chunks_[id].handed_out;
      if (std::any_of(words.begin(), words.end(), [](std::uint64_t w) { return w != 0; })) {
        new_id[id] = kept++;
      }
    }
    std::vector<std::pair<std::uintptr_t, std::size_t>> released;
    if (kept == chunks_.size()) {
      return released;
    }
    // Everything that allocates first; then only moves within reserved capacity (noexcept).
    released.reserve(chunks_.size() - kept);
    std::vector<chunk> chunks;
    chunks.reserve(kept);
    decltype(by_base_) by_base;
    by_base.reserve(kept);
    decltype(stacks_) stacks(stacks_.size());
    for (std::size_t t = 0; t < stacks_.size(); ++t) {
      stacks[t].reserve(stacks_[t].size());
    }
    decltype(fresh_) fresh;
    fresh.reserve(fresh_.size());
    for (auto const& [base, id] : by_base_) {
      if (new_id[id] == npos) {
        released.emplace_back(base, chunks_[id].num_blocks * block_size_);
        capacity_ -= chunks_[id].num_blocks;
        free_count_ -= chunks_[id].num_blocks;
      } else {
        by_base.emplace_back(base, new_id[id]);
      }
    }
    for (std::size_t t = 0; t < stacks_.size(); ++t) {
      for (entry const& e : stacks_[t]) {
        if (new_id[e.chunk] != npos) {
          stacks[t].push_back(entry{new_id[e.chunk], e.block});
        }
      }
    }
    for (std::size_t const id : fresh_) {
      if (new_id[id] != npos) {
        fresh.push_back(new_id[id]);
      }
    }
    for (std::size_t id = 0; id < chunks_.size(); ++id) {
      if (new_id[id] != npos) {
        chunks.push_back(std::move(chunks_[id]));
      }
    }
    chunks_.swap(chunks);
    by_base_.swap(by_base);
    stacks_.swap(stacks);
    fresh_.swap(fresh);
    return released;
  }

  /// @brief Forgets every chunk and block.
  void clear() noexcept {
    chunks_.clear();
    by_base_.clear();
    stacks_.assign(1, {});
    fresh_.clear();
    capacity_   = 0;
    free_count_ = 0;
  }

  /**
   * @brief Checks every invariant (bitmaps, stack, bump indices, counters); O(capacity() / 64 +
   * size() + num_chunks()). For tests.
   * @throws std::logic_error describing the first violation found.
   */
  void validate() const {
    std::size_t handed = 0;
    std::size_t never  = 0;
    std::uintptr_t end = 0;
    for (auto const& [base, id] : by_base_) {
      expect(id < chunks_.size() && chunks_[id].base == base, "chunk map is stale");
      expect(base >= end, "chunks overlap", base);
      chunk const& c = chunks_[id];
      end            = base + c.num_blocks * block_size_;
      handed += validate_chunk(c);
      never += c.num_blocks - c.next_fresh;
    }
    expect(by_base_.size() == chunks_.size(), "chunk map misses chunks");
    validate_stack();
    validate_fresh();
    std::size_t stacked_blocks = 0;
    for (auto const& st : stacks_) {
      stacked_blocks += st.size();
    }
    expect(free_count_ == stacked_blocks + never, "free block count is off");
    expect(handed + free_count_ == capacity_, "handed-out bits disagree with counters");
  }

 private:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  struct chunk {
    std::uintptr_t base;
    std::size_t num_blocks;
    std::size_t next_fresh;                 // blocks at or above it were never handed out
    std::vector<std::uint64_t> handed_out;  // one bit per block: out of the list
  };

  struct entry {
    std::size_t chunk;
    std::size_t block;
  };

  static std::uint64_t bit(std::size_t b) noexcept { return std::uint64_t{1} << (b % 64); }

  [[nodiscard]] bool handed_out(std::size_t id, std::size_t b) const noexcept {
    return (chunks_[id].handed_out[b / 64] & bit(b)) != 0;
  }

  std::uintptr_t hand_out(std::size_t id, std::size_t b) noexcept {
    chunks_[id].handed_out[b / 64] |= bit(b);
    --free_count_;
    return chunks_[id].base + b * block_size_;
  }

  // The first entry of by_base_ whose base is >= base (or > base if `after`).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>>::const_iterator
  first_at_or_after(std::uintptr_t base, bool after = false) const noexcept {
    return after ? std::upper_bound(by_base_.begin(),
                                    by_base_.end(),
                                    base,
                                    [](std::uintptr_t b, auto const& e) { return b < e.first; })
                 : std::lower_bound(
                       by_base_.begin(), by_base_.end(), base, [](auto const& e, std::uintptr_t b) {
                         return e.first < b;
                       });
  }

  [[nodiscard]] std::size_t chunk_containing(std::uintptr_t ptr) const noexcept {
    auto it = first_at_or_after(ptr, /*after=*/true);
    if (it == by_base_.begin()) {
      return npos;
    }
    --it;
    chunk const& c = chunks_[it->second];
    return ptr - c.base < c.num_blocks * block_size_ ? it->second : npos;
  }

  [[nodiscard]] std::pair<std::size_t, std::size_t> locate(std::uintptr_t ptr) const {
    std::size_t const id = chunk_containing(ptr);
    if (id == npos) {
      throw std::invalid_argument("fixed_size_free_list: pointer " + hex(ptr) +
                                  " lies in no chunk of this list");
    }
    std::size_t const offset = ptr - chunks_[id].base;
    if (offset % block_size_ != 0) {
      throw std::invalid_argument("fixed_size_free_list: pointer " + hex(ptr) +
                                  " is not the start of a block of size " +
                                  std::to_string(block_size_));
    }
    return {id, offset / block_size_};
  }

  void check_chunk(std::uintptr_t base, std::size_t num_blocks) const {
    std::string const what = "fixed_size_free_list: chunk at " + hex(base) + " of " +
                             std::to_string(num_blocks) + " blocks ";
    if (num_blocks == 0) {
      throw std::invalid_argument(what + "is empty");
    }
    if (num_blocks > std::numeric_limits<std::size_t>::max() / block_size_ ||
        num_blocks * block_size_ > std::numeric_limits<std::uintptr_t>::max() - base) {
      throw std::invalid_argument(what + "does not fit in the address space");
    }
    std::uintptr_t const end = base + num_blocks * block_size_;
    auto const next          = first_at_or_after(base);
    bool overlaps            = next != by_base_.end() && next->first < end;
    if (next != by_base_.begin()) {
      chunk const& prev = chunks_[std::prev(next)->second];
      overlaps          = overlaps || prev.base + prev.num_blocks * block_size_ > base;
    }
    if (overlaps) {
      throw std::invalid_argument(what + "overlaps a chunk already added");
    }
  }

  // Returns the number of handed-out blocks of c.
  static std::size_t validate_chunk(chunk const& c) {
    expect(c.next_fresh <= c.num_blocks, "bump index beyond the chunk", c.base);
    expect(c.handed_out.size() == (c.num_blocks + 63) / 64, "bitmap size is off", c.base);
    std::size_t handed = 0;
    for (std::size_t w = 0; w < c.handed_out.size(); ++w) {
      std::uint64_t const word = c.handed_out[w];
      std::size_t const first  = w * 64;
      // Blocks at or above next_fresh were never handed out: their bits must be clear.
      std::uint64_t const beyond = c.next_fresh <= first       ? word
                                   : c.next_fresh < first + 64 ? word >> (c.next_fresh - first)
                                                               : 0;
      expect(beyond == 0, "block handed out beyond the bump index", c.base);
      handed += static_cast<std::size_t>(__builtin_popcountll(word));
    }
    return handed;
  }

  void validate_stack() const {
    std::vector<std::vector<std::uint64_t>> seen;  // handed-out bits plus stacked ones
    seen.reserve(chunks_.size());
    for (chunk const& c : chunks_) {
      seen.push_back(c.handed_out);
    }
    for (auto const& st : stacks_) {
      for (entry const& e : st) {
        expect(e.chunk < chunks_.size() && e.block < chunks_[e.chunk].next_fresh,
               "stack entry out of range");
        std::uint64_t& word = seen[e.chunk][e.block / 64];
        expect((word & bit(e.block)) == 0, "stacked block is handed out or stacked twice");
        word |= bit(e.block);
      }
    }
  }

  void validate_fresh() const {
    std::size_t with_fresh = 0;
    for (chunk const& c : chunks_) {
      with_fresh += c.next_fresh < c.num_blocks ? 1U : 0U;
    }
    expect(fresh_.size() == with_fresh, "fresh chunk list is off");
    for (std::size_t const id : fresh_) {
      expect(id < chunks_.size() && chunks_[id].next_fresh < chunks_[id].num_blocks,
             "fresh chunk list holds an exhausted chunk");
    }
  }

  static std::string hex(std::uintptr_t v) { return format_hex(v); }

  static void expect(bool ok, char const* what) {
    expect_invariant(ok, "fixed_size_free_list", what);
  }
  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "fixed_size_free_list", what, at);
  }

  std::size_t block_size_;
  std::vector<chunk> chunks_;
  // (base, chunk id) sorted by base: finds the chunk of a pushed pointer. A sorted vector, not a
  // std::map: a free's lookup is a binary search over contiguous memory (the map's node per
  // level was a cache miss: 30 % of the time of the n = 100 000, 1 MiB random-allocation row
  // in a profile on the GPU machine);
  // inserting shifts the vector, but chunks are added only when the resource grows.
  std::vector<std::pair<std::uintptr_t, std::size_t>> by_base_;
  std::vector<std::vector<entry>> stacks_;  // pushed blocks per tag, LIFO
  std::vector<std::size_t> fresh_;          // chunks with never-handed-out blocks
  std::size_t capacity_{};
  std::size_t free_count_{};
};

}  // namespace rmm::mr::detail
