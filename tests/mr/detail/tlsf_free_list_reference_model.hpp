// The naive reference model of tlsf_free_list, shared by tlsf_free_list_model_tests.cpp and
// fuzz/tlsf_free_list_fuzz.cpp.
#pragma once

#include "tlsf_free_list_test_helpers.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::test::tlsf {

// Naive model: every block in an ordered map, linear scans for fits, neighbour merging by map
// iteration. Slow but obviously right.
class reference_model {
 public:
  // Free bytes, free blocks and largest free block of one tag.
  struct tag_stats {
    std::size_t bytes;
    std::size_t blocks;
    std::size_t largest;
  };

  // Region id is [base, base + size), one free block of tag.
  void insert_region(std::size_t id, std::uintptr_t base, std::size_t size, tag_t tag = 0) {
    regions_[id]  = {base, size};
    blocks_[base] = {size, true, id, tag};
  }

  [[nodiscard]] bool has_fit(std::size_t size, tag_t tag) const { return largest(tag) >= size; }

  [[nodiscard]] std::size_t largest(std::optional<tag_t> tag = std::nullopt) const {
    std::size_t best = 0;
    for (auto const& [base, b] : blocks_) {
      if (b.free && (!tag || b.tag == *tag) && b.size > best) {
        best = b.size;
      }
    }
    return best;
  }

  [[nodiscard]] std::size_t free_bytes(tag_t tag) const {
    std::size_t n = 0;
    for (auto const& [base, b] : blocks_) {
      n += b.free && b.tag == tag ? b.size : 0;
    }
    return n;
  }

  // tag_stats of each tag below N, in one pass; every free block's tag must be below N.
  template <std::size_t N>
  [[nodiscard]] std::array<tag_stats, N> per_tag() const {
    std::array<tag_stats, N> out{};
    for (auto const& [base, b] : blocks_) {
      if (b.free) {
        tag_stats& s = out.at(b.tag);
        s.bytes += b.size;
        ++s.blocks;
        s.largest = std::max(s.largest, b.size);
      }
    }
    return out;
  }

  // Applies an allocation the structure made at ptr; false if ptr was not a fitting free block
  // of the tag.
  bool allocate_at(std::uintptr_t ptr, std::size_t size, tag_t tag) {
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second.free || it->second.size < size ||
        it->second.tag != tag) {
      return false;
    }
    blk const old = it->second;
    it->second    = {size, false, old.region, 0};
    if (old.size > size) {
      blocks_[ptr + size] = {old.size - size, true, old.region, tag};
    }
    return true;
  }

  void retag(tag_t from, tag_t to) {
    for (auto& [base, b] : blocks_) {
      if (b.free && b.tag == from) {
        b.tag = to;
      }
    }
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      auto const next = std::next(it);
      if (next != blocks_.end() && mergeable(*it, *next)) {
        it->second.size += next->second.size;
        blocks_.erase(next);
      } else {
        it = next;
      }
    }
  }

  void deallocate(std::uintptr_t ptr, tag_t tag) {
    auto it         = blocks_.find(ptr);
    it->second.free = true;
    it->second.tag  = tag;
    merge_around(it);
  }

  // Why allocate_range(block, ptr, size) must be refused (a fragment of its message), or "" if
  // it is valid, with granularity g.
  [[nodiscard]] std::string allocate_range_refusal(std::uintptr_t block,
                                                   std::uintptr_t ptr,
                                                   std::size_t size,
                                                   std::size_t g) const {
    if (size == 0 || size % g != 0 || ptr % g != 0) {
      return "multiples of " + std::to_string(g);
    }
    auto const it = blocks_.find(block);
    if (it == blocks_.end() || !it->second.free) {
      return "no free block starts there";
    }
    std::size_t const n = it->second.size;
    if (ptr < block || ptr - block >= n || n - (ptr - block) < size) {
      return "not inside that block";
    }
    return "";
  }

  // Allocates [ptr, ptr + size) out of the free block at block: the pieces before and after it
  // stay free with the block's tag.
  void allocate_range(std::uintptr_t block, std::uintptr_t ptr, std::size_t size) {
    auto const it          = blocks_.find(block);
    blk const old          = it->second;
    std::size_t const head = ptr - block;
    std::size_t const tail = old.size - head - size;
    if (head != 0) {
      it->second.size = head;
    }
    blocks_[ptr] = {size, false, old.region, 0};  // replaces the block itself when head == 0
    if (tail != 0) {
      blocks_[ptr + size] = {tail, true, old.region, old.tag};
    }
  }

  // True if first and second start physically adjacent allocated blocks of one region.
  [[nodiscard]] bool joinable_allocated(std::uintptr_t first, std::uintptr_t second) const {
    auto const it = blocks_.find(first);
    if (it == blocks_.end() || it->second.free) {
      return false;
    }
    auto const next = std::next(it);
    return next != blocks_.end() && next->first == second && !next->second.free &&
           next->second.region == it->second.region && first + it->second.size == second;
  }

  // Every (first, second) that joinable_allocated accepts.
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::uintptr_t>> adjacent_allocated() const {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      auto const next = std::next(it);
      if (next != blocks_.end() && joinable_allocated(it->first, next->first)) {
        out.emplace_back(it->first, next->first);
      }
    }
    return out;
  }

  // One allocated block of both sizes remains at first.
  void join_allocated(std::uintptr_t first, std::uintptr_t second) {
    auto const it = blocks_.find(second);
    blocks_.at(first).size += it->second.size;
    blocks_.erase(it);
  }

  // Sizes of the free blocks of tag right before and after the block at ptr in its region.
  [[nodiscard]] std::pair<std::size_t, std::size_t> free_neighbours(std::uintptr_t ptr,
                                                                    tag_t tag) const {
    auto const it     = blocks_.find(ptr);
    auto const counts = [&](auto n) {
      return n->second.free && n->second.tag == tag && n->second.region == it->second.region;
    };
    auto const next         = std::next(it);
    std::size_t const after = next != blocks_.end() && counts(next) ? next->second.size : 0;
    if (it == blocks_.begin() || !counts(std::prev(it))) {
      return {0, after};
    }
    return {std::prev(it)->second.size, after};
  }

  [[nodiscard]] std::size_t allocated_blocks(std::size_t id) const {
    std::size_t n = 0;
    for (auto const& [base, b] : blocks_) {
      n += !b.free && b.region == id ? 1U : 0U;
    }
    return n;
  }

  // What retag_block(ptr, from, to) returns: the size of the free block of tag from at ptr, or 0
  // if there is none or from == to (then nothing changes).
  [[nodiscard]] std::size_t retag_block_size(std::uintptr_t ptr, tag_t from, tag_t to) const {
    auto const it = blocks_.find(ptr);
    bool const moves =
        it != blocks_.end() && it->second.free && it->second.tag == from && from != to;
    return moves ? it->second.size : 0;
  }

  // Where retag_after(ptr, from, to) acts: the start of the block that follows the allocated
  // block at ptr in its region, or nullopt if ptr starts no allocated block or it ends its region.
  [[nodiscard]] std::optional<std::uintptr_t> block_after(std::uintptr_t ptr) const {
    auto const it = blocks_.find(ptr);
    if (it == blocks_.end() || it->second.free) {
      return std::nullopt;
    }
    auto const next = std::next(it);
    if (next == blocks_.end() || next->second.region != it->second.region) {
      return std::nullopt;
    }
    return next->first;
  }

  // Relabels that one block and merges it with its neighbours that now share its tag.
  void retag_block(std::uintptr_t ptr, tag_t from, tag_t to) {
    if (retag_block_size(ptr, from, to) == 0) {
      return;
    }
    auto const it  = blocks_.find(ptr);
    it->second.tag = to;
    merge_around(it);
  }

  // The block that starts at ptr, if any.
  [[nodiscard]] std::optional<block_view> block_at(std::uintptr_t ptr) const {
    auto const it = blocks_.find(ptr);
    if (it == blocks_.end()) {
      return std::nullopt;
    }
    return view_of(*it);
  }

  [[nodiscard]] bool is_allocated_block(std::uintptr_t ptr) const {
    auto const it = blocks_.find(ptr);
    return it != blocks_.end() && !it->second.free;
  }

  [[nodiscard]] bool region_fully_free(std::size_t id) const {
    auto const& [base, size] = regions_.at(id);
    for (auto it = blocks_.find(base); it != blocks_.end() && it->first < base + size; ++it) {
      if (!it->second.free) {
        return false;
      }
    }
    return true;
  }

  [[nodiscard]] bool region_single_free_block(std::size_t id) const {
    auto const& [base, size] = regions_.at(id);
    auto const& b            = blocks_.at(base);
    return b.free && b.size == size;
  }

  std::vector<range> take_free_regions() {
    std::vector<range> out;
    for (auto it = regions_.begin(); it != regions_.end();) {
      if (region_single_free_block(it->first)) {
        out.push_back(it->second);
        blocks_.erase(it->second.first);
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  [[nodiscard]] std::vector<block_view> blocks() const {
    std::vector<block_view> out;
    for (auto const& entry : blocks_) {
      out.push_back(view_of(entry));
    }
    return out;
  }

  [[nodiscard]] std::size_t num_blocks() const { return blocks_.size(); }

  // The i-th block in address order (i below num_blocks()), without copying them all.
  [[nodiscard]] block_view nth_block(std::size_t i) const {
    return view_of(*std::next(blocks_.begin(), static_cast<std::ptrdiff_t>(i)));
  }

  [[nodiscard]] std::vector<range> free_blocks() const {
    std::vector<range> out;
    for (auto const& [base, b] : blocks_) {
      if (b.free) {
        out.emplace_back(base, b.size);
      }
    }
    return out;
  }

  [[nodiscard]] std::size_t bytes(bool free) const {
    std::size_t n = 0;
    for (auto const& [base, b] : blocks_) {
      n += b.free == free ? b.size : 0;
    }
    return n;
  }

  // Grows region id by bytes of tag: its last block absorbs them if free and of that tag,
  // otherwise they form a new free block after it.
  void extend_region(std::size_t id, std::size_t bytes, tag_t tag) {
    range& r  = regions_.at(id);
    auto last = last_block(id);
    if (last->second.free && last->second.tag == tag) {
      last->second.size += bytes;
    } else {
      blocks_[r.first + r.second] = {bytes, true, id, tag};
    }
    r.second += bytes;
  }

  // Why extend_region(id, bytes, tag) must be refused (a fragment of its message), or "" if it is
  // valid, with granularity g. (A growth that wraps around the address space is not modelled.)
  [[nodiscard]] std::string extend_region_refusal(std::size_t id,
                                                  std::size_t bytes,
                                                  std::size_t g) const {
    if (bytes == 0 || bytes % g != 0) {
      return "not a non-zero multiple of " + std::to_string(g);
    }
    auto const [base, size] = regions_.at(id);
    auto const next         = next_region_base(id);
    return next && *next < base + size + bytes ? "overlaps the next region" : "";
  }

  // Why shrink_region(id, new_size) must be refused (a fragment of its message), or "" if it is
  // valid, with granularity g.
  [[nodiscard]] std::string shrink_region_refusal(std::size_t id,
                                                  std::size_t new_size,
                                                  std::size_t g) const {
    auto const [base, size]    = regions_.at(id);
    auto const [lb, ls, lf, t] = last_of(id);
    if (new_size == 0 || new_size >= size) {
      return "must be non-zero and below the size";
    }
    if (new_size % g != 0) {
      return "not a multiple of " + std::to_string(g);
    }
    if (!lf) {
      return "is allocated";
    }
    return base + new_size < lb ? "the cut lies below its free last block" : "";
  }

  // Cuts region id to new_size: its (free) last block is removed or shortened.
  void shrink_region(std::size_t id, std::size_t new_size) {
    range& r                 = regions_.at(id);
    auto last                = last_block(id);
    std::uintptr_t const cut = r.first + new_size;
    if (last->first == cut) {
      blocks_.erase(last);
    } else {
      last->second.size = cut - last->first;
    }
    r.second = new_size;
  }

  // (base, size, free, tag) of the last block of region id.
  [[nodiscard]] block_view last_of(std::size_t id) const {
    range const& r = regions_.at(id);
    auto const it  = std::prev(blocks_.lower_bound(r.first + r.second));
    return {it->first, it->second.size, it->second.free, it->second.tag};
  }

  [[nodiscard]] std::optional<std::pair<std::size_t, tag_t>> trailing_free_block(
      std::size_t id) const {
    auto const [base, size, free, tag] = last_of(id);
    if (!free) {
      return std::nullopt;
    }
    return std::pair<std::size_t, tag_t>{size, tag};
  }

  // Base of the region after region id in address order, if any.
  [[nodiscard]] std::optional<std::uintptr_t> next_region_base(std::size_t id) const {
    std::uintptr_t const base = regions_.at(id).first;
    std::optional<std::uintptr_t> next;
    for (auto const& [other, r] : regions_) {
      if (r.first > base && (!next || r.first < *next)) {
        next = r.first;
      }
    }
    return next;
  }

  [[nodiscard]] std::map<std::size_t, range> const& regions() const { return regions_; }

 private:
  struct blk {
    std::size_t size;
    bool free;
    std::size_t region;
    tag_t tag;
  };

  // As blocks() shows it: an allocated block's tag is meaningless, shown as 0.
  template <typename P>
  static block_view view_of(P const& entry) {
    blk const& b = entry.second;
    return {entry.first, b.size, b.free, b.free ? b.tag : tag_t{0}};
  }

  template <typename P>
  static bool mergeable(P const& lo, P const& hi) {
    return lo.second.free && hi.second.free && lo.second.region == hi.second.region &&
           lo.second.tag == hi.second.tag && lo.first + lo.second.size == hi.first;
  }

  // Merges the free block at it with its mergeable neighbours.
  void merge_around(std::map<std::uintptr_t, blk>::iterator it) {
    auto const next = std::next(it);
    if (next != blocks_.end() && mergeable(*it, *next)) {
      it->second.size += next->second.size;
      blocks_.erase(next);
    }
    if (it != blocks_.begin()) {
      auto const prev = std::prev(it);
      if (mergeable(*prev, *it)) {
        prev->second.size += it->second.size;
        blocks_.erase(it);
      }
    }
  }

  std::map<std::uintptr_t, blk>::iterator last_block(std::size_t id) {
    range const& r = regions_.at(id);
    return std::prev(blocks_.lower_bound(r.first + r.second));
  }

  std::map<std::uintptr_t, blk> blocks_;
  std::map<std::size_t, range> regions_;
};

}  // namespace rmm::test::tlsf
