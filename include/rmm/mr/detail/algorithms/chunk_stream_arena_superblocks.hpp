/**
 * @file chunk_stream_arena_superblocks.hpp
 * @brief chunk_stream_arena's superblocks coming and going, defined out of line: add_superblock(),
 * release_free_superblocks() and remove_superblock(). Design: chunk_stream_arena.md. Included at
 * the end of chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::mr::detail::arena {

inline void chunk_stream_arena::add_superblock(std::uintptr_t base, std::size_t size) {
  if (size == 0 || ((base | size) % allocation_granularity) != 0 || base < base_ || base >= end_ ||
      size > end_ - base) {
    throw std::invalid_argument("chunk_stream_arena: superblock [" + format_hex(base) + ", +" +
                                std::to_string(size) + ") is misaligned, empty or outside [" +
                                format_hex(base_) + ", " + format_hex(end_) + ")");
  }
  if (std::uint32_t const prev = last_start_le(base + size - 1);
      prev != none && sbs_[prev].base + sbs_[prev].size > base) {
    throw std::invalid_argument("chunk_stream_arena: superblock [" + format_hex(base) + ", +" +
                                std::to_string(size) + ") overlaps a superblock of the arena");
  }
  if (spare_slots_.empty()) {  // a new slot; room to recycle every slot, so removal never throws
    sbs_.emplace_back();
    try {
      spare_slots_.reserve(sbs_.size());
    } catch (...) {
      sbs_.pop_back();
      throw;
    }
    spare_slots_.push_back(static_cast<std::uint32_t>(sbs_.size() - 1));
  }
  std::uint32_t const s = spare_slots_.back();
  sb_rec& sb            = sbs_[s];
  sb.blocks.assign_one(0, units(size));  // the only step left that can throw
  spare_slots_.pop_back();
  sb.base             = base;
  sb.size             = size;
  sb.allocated        = 0;
  sb.max_free         = size;
  std::size_t const c = chunk_of(base);
  std::uint32_t* link = &chunk_head_[c];  // the chunk's list is in address order
  while (*link != none && sbs_[*link].base < base) {
    link = &sbs_[*link].next_in_chunk;
  }
  sb.next_in_chunk = *link;
  *link            = s;
  mark_alone(c);
  set_start(c);
  set_granules(base, size, s);
  link_empty(s);
  held_bytes_ += size;
  cached_bytes_ += size;
  if (size > largest_superblock_.get()) {
    largest_superblock_.set(size);
  }
  free_bytes_ += size;
  ++num_superblocks_;
  refresh_leaf(c);
}

inline std::vector<range> chunk_stream_arena::release_free_superblocks() {
  std::vector<range> out;
  out.reserve(num_empty_);
  while (empty_head_ != none) {
    std::uint32_t const s = empty_head_;
    out.push_back(range{sbs_[s].base, sbs_[s].size});
    remove_superblock(s);
  }
  std::sort(out.begin(), out.end(), [](range a, range b) { return a.base < b.base; });
  return out;
}

// Takes an entirely free superblock out and recycles its slot.
inline void chunk_stream_arena::remove_superblock(std::uint32_t s) noexcept {
  sb_rec& sb          = sbs_[s];
  std::size_t const c = chunk_of(sb.base);
  std::uint32_t* link = &chunk_head_[c];
  while (*link != s) {
    link = &sbs_[*link].next_in_chunk;
  }
  *link = sb.next_in_chunk;
  if (chunk_head_[c] == none) {
    clear_start(c);
  } else {
    mark_alone(c);
  }
  set_granules(sb.base, sb.size, none);
  if (sb.is_empty) {
    unlink_empty(s);
    cached_bytes_ -= sb.size;
  }
  held_bytes_ -= sb.size;
  free_bytes_ -= sb.size;
  --num_superblocks_;
  if (sb.tree) {
    sb.tree.reset();
    --num_trees_;
  }
  sb.size     = 0;
  sb.max_free = 0;
  sb.alone    = false;
  trim_blocks(sb);  // the slot's next superblock reuses up to kept_block_capacity
  sb.next_in_chunk = none;
  spare_slots_.push_back(s);  // never throws: capacity reserved in add_superblock
  refresh_leaf(c);
}

}  // namespace rmm::mr::detail::arena
