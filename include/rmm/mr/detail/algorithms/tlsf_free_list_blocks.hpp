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
#include <iterator>
#include <stdexcept>

namespace rmm::mr::detail {

// Allocates the front `size` bytes of free block idx; strong exception guarantee.
inline std::uintptr_t tlsf_free_list::carve(index_t idx, std::size_t size) {
  std::size_t const rest    = blocks_[idx].size - size;
  std::uintptr_t const base = blocks_[idx].base;
  if (!key_free_) {
    // The allocated block's key, and a spare descriptor first so that new_block (which adds no
    // key for a free block) cannot throw after it: no try block, which kept GCC from inlining.
    if (rest != 0) {
      reserve_block();
    }
    by_address_.emplace(base, idx);  // nothing has changed if it throws (but a spare descriptor)
  }
  // The tail: under allocated-only keying it has no key and its descriptor is the spare reserved
  // above, taken inline (as a new_block call, 16 instructions per call of the pool's n = 1,000
  // rows in the host model).
  index_t const tail = rest == 0   ? nil
                       : key_free_ ? new_block(base + size, rest, /*free=*/true)
                                   : take_spare(base + size, rest, /*free=*/true);
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
[[gnu::always_inline]] inline void tlsf_free_list::free_allocated(index_t idx,
                                                                  tag_t tag,
                                                                  std::size_t slot) noexcept {
  block& b = blocks_[idx];
  if (!key_free_) {
    by_address_.erase_at(slot);  // free blocks have no key
  }
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
  if (b.prev_phys == nil && b.next_phys == nil) {
    link_whole_region(idx, head);
  } else {
    b.prev_free = nil;
    b.next_free = head;
    if (head != nil) {
      blocks_[head].prev_free = idx;
    }
    head = idx;
  }
  x.sl_bitmap[c.fl] |= std::uint32_t{1} << c.sl;
  x.fl_bitmap |= std::uint64_t{1} << c.fl;
  ++x.num_free;
  x.free_bytes += b.size;
  ++num_free_blocks_;
}

// A whole free region goes after the partial blocks at the head of its class's list and among
// the whole regions in address order, passing at most whole_region_walk entries (then it goes
// there): tlsf_free_list.md, "Whole regions".
void tlsf_free_list::link_whole_region(index_t idx, index_t& head) noexcept {
  std::uintptr_t const base = blocks_[idx].base;
  index_t prev              = nil;
  index_t next              = head;
  for (std::size_t passed = 0; next != nil && passed < whole_region_walk; ++passed) {
    block const& n = blocks_[next];
    if (n.prev_phys == nil && n.next_phys == nil && n.base > base) {
      break;
    }
    prev = next;
    next = n.next_free;
  }
  blocks_[idx].prev_free = prev;
  blocks_[idx].next_free = next;
  if (next != nil) {
    blocks_[next].prev_free = idx;
  }
  (prev != nil ? blocks_[prev].next_free : head) = idx;
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

inline void tlsf_free_list::reserve_block() {
  if (spare_blocks_ == nil) {
    if (blocks_.size() >= nil) {
      throw std::length_error("tlsf_free_list: too many blocks");
    }
    blocks_.emplace_back();
    spare_blocks_ = static_cast<index_t>(blocks_.size() - 1);
  }
}

// A descriptor for [base, base + size), registered in the address map if keyed; strong guarantee.
inline auto tlsf_free_list::new_block(std::uintptr_t base, std::size_t size, bool free) -> index_t {
  reserve_block();
  if (keyed(free)) {
    by_address_.emplace(base, spare_blocks_);  // if it throws, the descriptor stays spare
  }
  return take_spare(base, size, free);
}

[[gnu::always_inline]] inline auto tlsf_free_list::take_spare(std::uintptr_t base,
                                                              std::size_t size,
                                                              bool free) noexcept -> index_t {
  index_t const idx = spare_blocks_;
  spare_blocks_     = blocks_[idx].next_free;
  blocks_[idx]      = block{};
  blocks_[idx].base = base;
  blocks_[idx].size = size;
  blocks_[idx].free = free;
  return idx;
}

inline void tlsf_free_list::drop_block(index_t idx) noexcept {
  if (keyed(blocks_[idx].free)) {
    by_address_.erase(blocks_[idx].base);
  }
  blocks_[idx]           = block{};
  blocks_[idx].next_free = spare_blocks_;
  spare_blocks_          = idx;
}

inline auto tlsf_free_list::find_block(std::uintptr_t ptr) const noexcept -> index_t {
  index_t const idx = by_address_.find(ptr);
  return idx != address_map::npos || key_free_ ? idx : walk_to_block(ptr);
}

inline auto tlsf_free_list::walk_to_block(std::uintptr_t ptr) const noexcept -> index_t {
  auto it = region_map_.upper_bound(ptr);  // the first region above ptr
  if (it == region_map_.begin()) {
    return address_map::npos;
  }
  region const& r = regions_[std::prev(it)->second];
  if (ptr - r.base >= r.size) {
    return address_map::npos;
  }
  index_t i = r.first_block;
  while (i != nil && blocks_[i].base < ptr) {
    i = blocks_[i].next_phys;
  }
  return i != nil && blocks_[i].base == ptr ? i : address_map::npos;
}

}  // namespace rmm::mr::detail
