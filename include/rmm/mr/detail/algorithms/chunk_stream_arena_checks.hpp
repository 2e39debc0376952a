/**
 * @file chunk_stream_arena_checks.hpp
 * @brief Members of chunk_stream_arena defined out of line, all O(n) and meant for tests and
 * diagnostics: validate() (the invariant checks listed in chunk_stream_arena.md, std::logic_error
 * on the first violation), free_blocks() and describe() (the out-of-memory dump). Included at the
 * end of chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail::arena {

inline std::vector<std::pair<std::uintptr_t, std::size_t>> chunk_stream_arena::free_blocks() const {
  std::vector<std::pair<std::uintptr_t, std::size_t>> out;
  for_each_sb([&](sb_rec const& sb) {
    if (sb.tree) {
      sb.tree->for_each([&](std::uintptr_t b, std::size_t s) { out.emplace_back(b, s); });
    } else {
      for (std::size_t i = 0; i < sb.blocks.size(); ++i) {
        out.emplace_back(sb.base + bytes_of(sb.blocks.place(i)), bytes_of(sb.blocks.length(i)));
      }
    }
  });
  return out;
}

inline std::string chunk_stream_arena::describe(std::size_t max_lines) const {
  std::string out = "holds " + std::to_string(held_bytes_) + " bytes in " +
                    std::to_string(num_superblocks_) + " superblocks, allocated " +
                    std::to_string(allocated_bytes_) + ", free " + std::to_string(free_bytes_) +
                    ", largest free block " + std::to_string(largest_free_block()) + "\n";
  std::size_t shown = 0;
  for_each_sb([&](sb_rec const& sb) {
    if (shown++ < max_lines) {
      out += "  superblock [" + format_hex(sb.base) + ", +" + std::to_string(sb.size) +
             "): allocated " + std::to_string(sb.allocated) + "\n";
    }
  });
  if (shown > max_lines) {
    out += "  ... " + std::to_string(shown - max_lines) + " more superblocks\n";
  }
  return out;
}

inline void chunk_stream_arena::validate() const {
  std::size_t held = 0, allocated = 0, free = 0, cached = 0, empty = 0, trees = 0, count = 0;
  std::uintptr_t prev_end = base_;
  std::vector<std::size_t> leaf(chunk_head_.size(), 0);
  std::vector<std::uint32_t> in_order;  // the superblocks in address order, for the granules
  for (std::size_t c = 0; c < chunk_head_.size(); ++c) {
    bool const starts = ((starts_[c >> 6U] >> (c & 63U)) & 1U) != 0;
    expect(starts == (chunk_head_[c] != none), "start bitmap is off", c);
    for (std::uint32_t s = chunk_head_[c]; s != none; s = sbs_[s].next_in_chunk) {
      sb_rec const& sb = sbs_[s];
      in_order.push_back(s);
      expect(sb.size != 0 && s < sbs_.size(), "spare slot in a chunk list", sb.base);
      expect(chunk_of(sb.base) == c, "superblock in the wrong chunk list", sb.base);
      expect(sb.base >= prev_end, "superblocks overlap or are out of order", sb.base);
      expect(sb.size <= end_ - sb.base, "superblock outside the arena range", sb.base);
      prev_end            = sb.base + sb.size;
      std::size_t sb_free = 0, sb_max = 0;
      auto visit = [&, last = sb.base, any = false](std::uintptr_t b, std::size_t n) mutable {
        expect(n != 0 && ((b | n) % allocation_granularity) == 0, "free block misaligned", b);
        expect(b >= sb.base && n <= sb.base + sb.size - b, "free block outside its superblock", b);
        expect(!any || b > last, "free blocks overlap, touch or are out of order", b);
        any  = true;
        last = b + n;
        sb_free += n;
        sb_max = std::max(sb_max, n);
      };
      if (sb.tree) {
        sb.tree->validate();
        expect(sb.blocks.empty() && sb.blocks.capacity() != 0,
               "superblock with both a tree and an array, or no room to go back to one",
               sb.base);
        sb.tree->for_each(visit);
        ++trees;
      } else {
        expect(sb.blocks.size() <= small_block_limit, "block array over its limit", sb.base);
        expect(sb.blocks.padded(), "block array padding is off", sb.base);
        for (std::size_t i = 0; i < sb.blocks.size(); ++i) {
          visit(sb.base + bytes_of(sb.blocks.place(i)), bytes_of(sb.blocks.length(i)));
        }
      }
      expect(sb_free + sb.allocated == sb.size, "superblock bytes unaccounted", sb.base);
      expect(sb_max == sb.max_free, "largest free block of a superblock is off", sb.base);
      expect(sb.is_empty == (sb.allocated == 0), "free-superblock flag is off", sb.base);
      expect(sb.alone == (chunk_head_[c] == s && sb.next_in_chunk == none),
             "alone-in-its-chunk flag is off",
             sb.base);
      leaf[c] = std::max(leaf[c], sb.max_free);
      held += sb.size;
      allocated += sb.allocated;
      free += sb_free;
      empty += sb.is_empty ? 1 : 0;
      cached += sb.is_empty ? sb.size : 0;
      ++count;
    }
  }
  // Each granule names the superblock holding its first byte, or none: one pass over the granules
  // beside the superblocks in address order (in_order, gathered by the walk above).
  expect(granule_owner_.size() == ((end_ - base_ - 1) >> granule_shift) + 1,
         "granule table size is off",
         granule_owner_.size());
  {
    std::size_t next = 0;
    for (std::size_t g = 0; g < granule_owner_.size(); ++g) {
      std::uintptr_t const first = base_ + (g << granule_shift);
      while (next < in_order.size() &&
             sbs_[in_order[next]].base + sbs_[in_order[next]].size <= first) {
        ++next;
      }
      bool const held_by = next < in_order.size() && sbs_[in_order[next]].base <= first;
      expect(granule_owner_[g] == (held_by ? in_order[next] : none), "granule table is off", first);
    }
  }
  for (std::size_t w = 0; w < starts_.size(); ++w) {
    bool const sum = ((starts_sum_[w >> 6U] >> (w & 63U)) & 1U) != 0;
    expect(sum == (starts_[w] != 0), "start summary bitmap is off", w);
  }
  expect(leaves_.size() == leaf.size(), "leaves are off", leaves_.size());
  for (std::size_t c = 0; c < leaf.size(); ++c) {
    expect(leaves_[c] == units(leaf[c]), "leaves are off", c);
  }
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    expect(cls_[c] == (c < leaf.size() ? cls_of(units(leaf[c])) : 0), "chunk classes are off", c);
  }
  for (std::size_t g = 0; g < gmax_.size(); ++g) {
    std::uint8_t m = 0;
    for (std::size_t c = g * group_chunks; c < (g + 1) * group_chunks && c < cls_.size(); ++c) {
      m = std::max(m, cls_[c]);
    }
    expect(gmax_[g] == m, "group classes are off", g);
  }
  std::size_t lm = 0;
  for (std::size_t x : leaf) {
    lm = std::max(lm, x);
  }
  expect(largest_.get() == lm, "the published largest free block is off", largest_.get());
  std::size_t at_top = 0;
  for (std::size_t x : leaf) {
    at_top += lm != 0 && x == lm;
  }
  expect(lm == 0 || top_count_ == at_top, "the count of chunks at the largest is off", top_count_);
  std::size_t listed = 0;
  for (std::uint32_t s = empty_head_, prev = none; s != none; prev = s, s = sbs_[s].empty_next) {
    expect(sbs_[s].is_empty && sbs_[s].size != 0, "free-superblock list holds a busy one", s);
    expect(sbs_[s].empty_prev == prev, "free-superblock list links are off", s);
    expect(++listed <= empty, "free-superblock list is too long", s);
  }
  std::size_t spare = 0;
  for (sb_rec const& sb : sbs_) {
    spare += sb.size == 0 ? 1 : 0;
    expect(sb.size != 0 || (!sb.tree && !sb.alone), "spare slot with a tree or flagged alone", 0);
    expect(sb.size != 0 || (sb.blocks.empty() && sb.blocks.capacity() <= kept_block_capacity),
           "spare slot's array not trimmed",
           0);
  }
  expect(spare == spare_slots_.size() && spare_slots_.capacity() >= sbs_.size(),
         "slot accounting is off",
         spare);
  expect(count == num_superblocks_ && held == held_bytes_ && allocated == allocated_bytes_ &&
             free == free_bytes_ && cached == cached_bytes_ && empty == num_empty_ &&
             listed == empty && trees == num_trees_,
         "counters are off",
         0);
}

}  // namespace rmm::mr::detail::arena
