/**
 * @file tlsf_free_list_blocks.hpp
 * @brief The block mechanics of tlsf_free_list, defined out of line: splitting a free block,
 * freeing an allocated one, merging neighbours, the size-class links and block descriptors.
 * Included at the end of tlsf_free_list.hpp (where the members are declared); including it alone
 * includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace rmm::mr::detail {

// Allocates the front `size` bytes of free block idx; strong exception guarantee.
inline std::uintptr_t tlsf_free_list::carve(index_t idx, std::size_t size) {
  std::size_t const rest = blocks_[idx].size - size;
  index_t const tail     = rest != 0 ? new_block(blocks_[idx].base + size, rest) : nil;
  unlink_free(idx);
  block& b = blocks_[idx];
  b.free   = false;
  b.size   = size;
  free_bytes_ -= size;
  allocated_bytes_ += size;
  ++regions_[b.region].allocated_blocks;
  if (tail != nil) {
    block& t    = blocks_[tail];
    t.region    = b.region;
    t.free      = true;
    t.tag       = b.tag;
    t.prev_phys = idx;
    t.next_phys = b.next_phys;
    if (b.next_phys != nil) {
      blocks_[b.next_phys].prev_phys = tail;
    }
    b.next_phys = tail;
    if (t.next_phys == nil) {
      regions_[b.region].last_block = tail;
    }
    link_free(tail);
  }
  return b.base;
}

// Turns the allocated block idx into a free block of `tag` (whose index exists), unmarked, merged.
[[gnu::always_inline]] inline void tlsf_free_list::free_allocated(index_t idx, tag_t tag) noexcept {
  block& b = blocks_[idx];
  b.free   = true;
  b.tag    = tag;
  b.marked = false;
  free_bytes_ += b.size;
  allocated_bytes_ -= b.size;
  --regions_[b.region].allocated_blocks;
  coalesce_and_link(idx);
}

// Links the (unlinked) free block idx after merging it with its free same-tag neighbours.
inline void tlsf_free_list::coalesce_and_link(index_t idx) noexcept {
  tag_t const tag    = blocks_[idx].tag;
  index_t const next = blocks_[idx].next_phys;
  if (next != nil && blocks_[next].free && blocks_[next].tag == tag) {
    unlink_free(next);
    absorb_next(idx);
  }
  index_t const prev = blocks_[idx].prev_phys;
  if (prev != nil && blocks_[prev].free && blocks_[prev].tag == tag) {
    unlink_free(prev);
    absorb_next(prev);
    idx = prev;
  }
  link_free(idx);
}

// Merges the (unlinked) next neighbour into idx and frees its descriptor.
inline void tlsf_free_list::absorb_next(index_t idx) noexcept {
  index_t const next = blocks_[idx].next_phys;
  block& b           = blocks_[idx];
  b.size += blocks_[next].size;
  b.next_phys = blocks_[next].next_phys;
  if (b.next_phys != nil) {
    blocks_[b.next_phys].prev_phys = idx;
  } else {
    regions_[b.region].last_block = idx;
  }
  drop_block(next);
}

[[gnu::always_inline]] inline void tlsf_free_list::link_free(index_t idx) noexcept {
  block& b           = blocks_[idx];
  free_index& x      = index_[b.tag];
  size_class const c = class_of_size(b.size);
  index_t& head      = x.heads[c.fl][c.sl];
  b.prev_free        = nil;
  b.next_free        = head;
  if (head != nil) {
    blocks_[head].prev_free = idx;
  }
  head = idx;
  x.sl_bitmap[c.fl] |= std::uint32_t{1} << c.sl;
  x.fl_bitmap |= std::uint64_t{1} << c.fl;
  ++x.num_free;
  x.free_bytes += b.size;
  ++num_free_blocks_;
}

inline void tlsf_free_list::unlink_free(index_t idx) noexcept {
  block const& b     = blocks_[idx];
  free_index& x      = index_[b.tag];
  size_class const c = class_of_size(b.size);
  if (b.prev_free != nil) {
    blocks_[b.prev_free].next_free = b.next_free;
  } else {
    x.heads[c.fl][c.sl] = b.next_free;
  }
  if (b.next_free != nil) {
    blocks_[b.next_free].prev_free = b.prev_free;
  }
  if (x.heads[c.fl][c.sl] == nil) {
    x.sl_bitmap[c.fl] &= ~(std::uint32_t{1} << c.sl);
    if (x.sl_bitmap[c.fl] == 0) {
      x.fl_bitmap &= ~(std::uint64_t{1} << c.fl);
    }
  }
  --x.num_free;
  x.free_bytes -= b.size;
  --num_free_blocks_;
}

// A descriptor for [base, base + size) registered in the address map; strong guarantee.
inline auto tlsf_free_list::new_block(std::uintptr_t base, std::size_t size) -> index_t {
  index_t idx = spare_blocks_;
  if (idx != nil) {
    spare_blocks_ = blocks_[idx].next_free;
  } else {
    if (blocks_.size() >= nil) {
      throw std::length_error("tlsf_free_list: too many blocks");
    }
    blocks_.emplace_back();
    idx = static_cast<index_t>(blocks_.size() - 1);
  }
  try {
    by_address_.emplace(base, idx);
  } catch (...) {
    blocks_[idx].next_free = spare_blocks_;
    spare_blocks_          = idx;
    throw;
  }
  blocks_[idx]      = block{};
  blocks_[idx].base = base;
  blocks_[idx].size = size;
  return idx;
}

inline void tlsf_free_list::drop_block(index_t idx) noexcept {
  by_address_.erase(blocks_[idx].base);
  blocks_[idx]           = block{};
  blocks_[idx].next_free = spare_blocks_;
  spare_blocks_          = idx;
}

}  // namespace rmm::mr::detail
