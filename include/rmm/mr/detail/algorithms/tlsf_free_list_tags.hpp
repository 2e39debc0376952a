/**
 * @file tlsf_free_list_tags.hpp
 * @brief Tags of tlsf_free_list, defined out of line: a tag's index made on first use
 * (`ensure_tag`), moving free blocks from one tag to another (`retag_after`, `retag` and
 * `retag_index`, which `retag_block` calls from the class) and the exact largest free block, of
 * one tag or of all.
 * Included at the end of tlsf_free_list.hpp (where the members are declared and documented);
 * including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmm::mr::detail {

inline void tlsf_free_list::ensure_tag(tag_t tag) {
  if (tag >= index_.size()) {
    index_.resize(std::size_t{tag} + 1);
  }
}

inline std::size_t tlsf_free_list::retag_after(std::uintptr_t ptr, tag_t from, tag_t to) {
  index_t const idx = by_address_.find(ptr);
  if (idx == address_map::npos || blocks_[idx].free) {
    return 0;
  }
  return retag_index(blocks_[idx].next_phys, from, to);
}

inline std::size_t tlsf_free_list::retag(tag_t from, tag_t to) {
  ensure_tag(std::max(from, to));
  if (from == to || index_[from].num_free == 0) {
    return 0;
  }
  std::vector<index_t> moved;
  moved.reserve(index_[from].num_free);
  free_index const& src = index_[from];
  for (std::uint64_t fl_map = src.fl_bitmap; fl_map != 0; fl_map &= fl_map - 1) {
    std::size_t const fl = sc::lowest_bit(fl_map);
    for (std::uint32_t sl_map = src.sl_bitmap[fl]; sl_map != 0; sl_map &= sl_map - 1) {
      std::size_t const sl = sc::lowest_bit(sl_map);
      for (index_t i = src.heads[fl][sl]; i != nil; i = blocks_[i].next_free) {
        moved.push_back(i);
      }
    }
  }
  std::size_t const bytes = index_[from].free_bytes;
  for (index_t const i : moved) {
    unlink_free(i);
    blocks_[i].tag = to;
    link_free(i);
  }
  for (index_t const i : moved) {
    if (blocks_[i].free && blocks_[i].tag == to && blocks_[i].size != 0) {
      unlink_free(i);
      coalesce_and_link(i);
    }
  }
  return bytes;
}

inline std::size_t tlsf_free_list::retag_index(index_t idx, tag_t from, tag_t to) {
  static_assert(nil == address_map::npos, "one value for no block");
  if (idx == nil || !blocks_[idx].free || blocks_[idx].tag != from || from == to) {
    return 0;
  }
  ensure_tag(to);
  std::size_t const size = blocks_[idx].size;
  unlink_free(idx);
  blocks_[idx].tag = to;
  coalesce_and_link(idx);
  return size;
}

inline std::size_t tlsf_free_list::largest_free_block() const noexcept {
  std::size_t best = 0;
  for (std::size_t t = 0; t < index_.size(); ++t) {
    best = std::max(best, largest_free_block(static_cast<tag_t>(t)));
  }
  return best;
}

inline std::size_t tlsf_free_list::largest_free_block(tag_t tag) const noexcept {
  if (tag >= index_.size() || index_[tag].fl_bitmap == 0) {
    return 0;
  }
  free_index const& x  = index_[tag];
  std::size_t const fl = sc::log2_floor(x.fl_bitmap);
  size_class const c{fl, sc::log2_floor(x.sl_bitmap[fl])};
  std::size_t const lower = sc::class_lower_units(c) << shift_;
  std::size_t const upper = lower + ((sc::class_width_units(c) - 1) << shift_);
  std::size_t best        = 0;
  for (index_t i = x.heads[c.fl][c.sl]; i != nil && best != upper; i = blocks_[i].next_free) {
    if (blocks_[i].size > best) {
      best = blocks_[i].size;
    }
  }
  return best;
}

}  // namespace rmm::mr::detail
