/**
 * @file tlsf_free_list_regions.hpp
 * @brief The region lifecycle of tlsf_free_list, defined out of line: inserting a region,
 * growing and trimming its end in place, taking fully free regions back, and the walks over
 * regions and their blocks (for_each_region, for_each_block). Included at the end
 * of tlsf_free_list.hpp (where the members are declared and documented); including it alone
 * includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

inline auto tlsf_free_list::insert_region(std::uintptr_t base, std::size_t size, tag_t tag)
    -> region_id {
  check_new_region(base, size);
  ensure_tag(tag);
  region_id const rid = acquire_region();
  index_t idx         = nil;
  try {
    idx = new_block(base, size, /*free=*/true);
    region_map_.emplace(base, rid);
  } catch (...) {
    if (idx != nil) {
      drop_block(idx);
    }
    release_region(rid);
    throw;
  }
  regions_[rid] = region{base, size, idx, idx, 0, true, no_region};
  block& b      = blocks_[idx];
  b.region      = rid;
  b.free        = true;
  b.tag         = tag;
  link_free(idx);
  free_bytes_ += size;
  total_bytes_ += size;
  return rid;
}

inline void tlsf_free_list::extend_region(region_id id, std::size_t bytes, tag_t tag) {
  check_extend(id, bytes);
  index_t const last   = regions_[id].last_block;
  bool const grow_last = blocks_[last].free && blocks_[last].tag == tag;
  // Every allocating step first, undone if a later one throws. Growing the last block
  // allocates nothing: its tag, and so its index, exist already.
  index_t const idx =
      grow_last ? last : new_block(regions_[id].base + regions_[id].size, bytes, /*free=*/true);
  try {
    ensure_tag(tag);
  } catch (...) {
    if (!grow_last) {
      drop_block(idx);
    }
    throw;
  }
  region& r = regions_[id];
  if (grow_last) {
    unlink_free(last);  // it changes size class
    blocks_[last].size += bytes;
  } else {
    block& b                = blocks_[idx];
    b.region                = id;
    b.free                  = true;
    b.tag                   = tag;
    b.prev_phys             = last;
    blocks_[last].next_phys = idx;
    r.last_block            = idx;
  }
  link_free(idx);
  r.size += bytes;
  free_bytes_ += bytes;
  total_bytes_ += bytes;
}

inline void tlsf_free_list::shrink_region(region_id id, std::size_t new_size) {
  check_shrink(id, new_size);
  region& r                 = regions_[id];
  index_t const last        = r.last_block;
  std::uintptr_t const cut  = r.base + new_size;
  std::size_t const removed = r.size - new_size;
  unlink_free(last);
  if (blocks_[last].base == cut) {
    // The block goes whole. It has a predecessor (cut > base), which is allocated or free of
    // another tag, since the free last block was coalesced: nothing to merge.
    index_t const prev      = blocks_[last].prev_phys;
    blocks_[prev].next_phys = nil;
    r.last_block            = prev;
    drop_block(last);
  } else {
    blocks_[last].size -= removed;
    link_free(last);
  }
  r.size = new_size;
  free_bytes_ -= removed;
  total_bytes_ -= removed;
}

inline void tlsf_free_list::allocate_range(std::uintptr_t block_base,
                                           std::uintptr_t ptr,
                                           std::size_t size) {
  index_t const idx      = check_range(block_base, ptr, size);
  block const& b         = blocks_[idx];
  std::size_t const head = ptr - b.base;
  std::size_t const rest = b.size - head - size;
  if (head == 0) {
    carve(idx, size);
    return;
  }
  // Every allocating step first: the middle block and, if any, the free block after it.
  index_t const mid = new_block(ptr, size, /*free=*/false);
  index_t tail      = nil;
  if (rest != 0) {
    try {
      tail = new_block(ptr + size, rest, /*free=*/true);
    } catch (...) {
      drop_block(mid);
      throw;
    }
  }
  unlink_free(idx);
  block& h            = blocks_[idx];
  index_t const after = h.next_phys;
  region& r           = regions_[h.region];
  h.size              = head;
  block& m            = blocks_[mid];
  m.region            = h.region;
  m.prev_phys         = idx;
  h.next_phys         = mid;
  index_t last        = mid;
  if (tail != nil) {
    block& t    = blocks_[tail];
    t.region    = h.region;
    t.free      = true;
    t.tag       = h.tag;
    t.prev_phys = mid;
    m.next_phys = tail;
    last        = tail;
  }
  blocks_[last].next_phys = after;
  if (after != nil) {
    blocks_[after].prev_phys = last;
  } else {
    r.last_block = last;
  }
  ++r.allocated_blocks;
  free_bytes_ -= size;
  allocated_bytes_ += size;
  link_free(idx);
  if (tail != nil) {
    link_free(tail);
  }
}

inline void tlsf_free_list::join_allocated(std::uintptr_t first, std::uintptr_t second) {
  index_t const idx  = by_address_.find(first);
  index_t const next = idx == address_map::npos ? nil : blocks_[idx].next_phys;
  if (idx == address_map::npos || blocks_[idx].free || next == nil || blocks_[next].free ||
      blocks_[next].base != second) {
    throw std::invalid_argument("tlsf_free_list: join_allocated of " + hex(first) + " and " +
                                hex(second) +
                                ": not two physically adjacent allocated blocks of one region");
  }
  block& b = blocks_[idx];
  b.size += blocks_[next].size;
  b.next_phys = blocks_[next].next_phys;
  if (b.next_phys != nil) {
    blocks_[b.next_phys].prev_phys = idx;
  } else {
    regions_[b.region].last_block = idx;
  }
  --regions_[b.region].allocated_blocks;
  drop_block(next);
}

inline auto tlsf_free_list::free_neighbours(std::uintptr_t ptr, tag_t tag) const
    -> std::pair<std::size_t, std::size_t> {
  index_t const idx = by_address_.find(ptr);
  if (idx == address_map::npos || blocks_[idx].free) {
    throw std::invalid_argument("tlsf_free_list: free_neighbours of " + hex(ptr) +
                                ", which is not the start of an allocated block");
  }
  auto size_of = [&](index_t n) -> std::size_t {
    return n != nil && blocks_[n].free && blocks_[n].tag == tag ? blocks_[n].size : 0;
  };
  return {size_of(blocks_[idx].prev_phys), size_of(blocks_[idx].next_phys)};
}

inline auto tlsf_free_list::trailing_free_block(region_id id) const
    -> std::optional<std::pair<std::size_t, tag_t>> {
  block const& last = blocks_[live_region(id).last_block];
  if (!last.free) {
    return std::nullopt;
  }
  return std::pair<std::size_t, tag_t>{last.size, last.tag};
}

inline std::vector<std::pair<std::uintptr_t, std::size_t>> tlsf_free_list::take_free_regions() {
  std::vector<region_id> ids;
  for (auto const& [base, rid] : region_map_) {
    if (regions_[rid].allocated_blocks == 0 &&
        blocks_[regions_[rid].first_block].next_phys == nil) {
      ids.push_back(rid);
    }
  }
  std::vector<std::pair<std::uintptr_t, std::size_t>> out;
  out.reserve(ids.size());
  for (region_id const rid : ids) {
    out.emplace_back(regions_[rid].base, regions_[rid].size);
  }
  for (region_id const rid : ids) {
    remove_free_region(rid);
  }
  return out;
}

inline auto tlsf_free_list::acquire_region() -> region_id {
  if (spare_regions_ != no_region) {
    region_id const rid = spare_regions_;
    spare_regions_      = regions_[rid].next_spare;
    return rid;
  }
  regions_.emplace_back();
  return regions_.size() - 1;
}

inline void tlsf_free_list::release_region(region_id rid) noexcept {
  regions_[rid]            = region{};
  regions_[rid].next_spare = spare_regions_;
  spare_regions_           = rid;
}

inline void tlsf_free_list::remove_free_region(region_id rid) noexcept {
  region const r = regions_[rid];
  unlink_free(r.first_block);
  drop_block(r.first_block);
  region_map_.erase(r.base);
  release_region(rid);
  free_bytes_ -= r.size;
  total_bytes_ -= r.size;
}

template <typename F>
void tlsf_free_list::for_each_block(F&& f) const {
  for (auto const& [base, rid] : region_map_) {
    for (index_t i = regions_[rid].first_block; i != nil; i = blocks_[i].next_phys) {
      block const& b = blocks_[i];
      f(b.base, b.size, b.free, rid, b.tag);
    }
  }
}

template <typename F>
void tlsf_free_list::for_each_region(F&& f) const {
  for (auto const& [base, rid] : region_map_) {
    region const& r = regions_[rid];
    f(rid, r.base, r.size, r.allocated_blocks == 0);
  }
}

}  // namespace rmm::mr::detail
