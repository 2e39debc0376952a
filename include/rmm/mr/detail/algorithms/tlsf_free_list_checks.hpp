/**
 * @file tlsf_free_list_checks.hpp
 * @brief The checks of tlsf_free_list, defined out of line: argument checks (misuse throws
 * std::invalid_argument naming the values, before anything changes) and the invariant checks
 * behind validate() (std::logic_error). Included at the end of tlsf_free_list.hpp; including it
 * alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

namespace rmm::mr::detail {

/// @brief "[0x<base>, +<size>)", for the free list's error messages.
inline std::string tlsf_range_text(std::uintptr_t base, std::size_t size) {
  // Built by appending: `"[" + format_hex(base)` makes GCC 12 (-O3, C++20) report a false
  // -Wrestrict inside libstdc++ (GCC bug 105651).
  std::string range{"["};
  range.append(format_hex(base)).append(", +").append(std::to_string(size)).append(")");
  return range;
}

// --- argument checks ----------------------------------------------------------------------------

inline std::size_t tlsf_free_list::lookup_allocated(std::uintptr_t ptr, std::size_t size) const {
  std::size_t const slot = by_address_.slot_of(ptr);
  index_t const found =
      slot == address_map::npos_slot ? address_map::npos : by_address_.value_at(slot);
  if (found == address_map::npos || blocks_[found].free || blocks_[found].size != size) {
    throw_bad_free(ptr, size, found);
  }
  return slot;
}

inline void tlsf_free_list::throw_bad_free(std::uintptr_t ptr,
                                           std::size_t size,
                                           index_t found) const {
  if (found == address_map::npos) {
    found = find_block(ptr);  // a free block, which has no key under keyed_blocks::allocated
  }
  if (found == address_map::npos) {
    throw std::invalid_argument("tlsf_free_list: deallocate of unknown pointer " + hex(ptr) +
                                " (size " + std::to_string(size) + ")");
  }
  if (blocks_[found].free) {
    throw std::invalid_argument("tlsf_free_list: double free of pointer " + hex(ptr) + " (size " +
                                std::to_string(size) + ")");
  }
  throw std::invalid_argument("tlsf_free_list: deallocate of pointer " + hex(ptr) + " with size " +
                              std::to_string(size) + ", but it was allocated with size " +
                              std::to_string(blocks_[found].size));
}

inline auto tlsf_free_list::check_range(std::uintptr_t block_base,
                                        std::uintptr_t ptr,
                                        std::size_t size) const -> index_t {
  std::string const where = "tlsf_free_list: allocate_range of " + std::to_string(size) +
                            " bytes at " + hex(ptr) + " from the block at " + hex(block_base);
  if (size == 0 || (size & (granularity_ - 1)) != 0 || (ptr & (granularity_ - 1)) != 0) {
    throw std::invalid_argument(where + ": the address and size must be multiples of " +
                                std::to_string(granularity_) + " and the size non-zero");
  }
  index_t const idx = find_block(block_base);
  if (idx == address_map::npos || !blocks_[idx].free) {
    throw std::invalid_argument(where + ": no free block starts there");
  }
  block const& b = blocks_[idx];
  if (ptr < b.base || ptr - b.base > b.size || size > b.size - (ptr - b.base)) {
    throw std::invalid_argument(where + ": the range is not inside that block " +
                                tlsf_range_text(b.base, b.size));
  }
  return idx;
}

inline void tlsf_free_list::check_size(char const* what, std::size_t size) const {
  // One branch on the hot path (`|`, not `||`): both tests are cheap and the branch rarely taken.
  // With stream_key's one-branch ==, 2 to 7 % off five of the pool's six n = 1,000 rows on an
  // H100's host, level on the sixth (docs/bench-results/2026-12-07-av).
  if (((size & (granularity_ - 1)) != 0) | (size == 0)) {
    throw_bad_size(what, size);
  }
}

inline void tlsf_free_list::throw_bad_size(char const* what, std::size_t size) const {
  throw std::invalid_argument(std::string{"tlsf_free_list: "} + what + " size " +
                              std::to_string(size) + " is not a non-zero multiple of " +
                              std::to_string(granularity_));
}

inline void tlsf_free_list::check_new_region(std::uintptr_t base, std::size_t size) const {
  check_size("insert_region", size);
  std::string const range = tlsf_range_text(base, size);
  if ((base & (granularity_ - 1)) != 0) {
    throw std::invalid_argument("tlsf_free_list: region " + range + " base is not aligned to " +
                                std::to_string(granularity_));
  }
  if (size > std::numeric_limits<std::uintptr_t>::max() - base) {
    throw std::invalid_argument("tlsf_free_list: region " + range + " wraps around");
  }
  auto const next = region_map_.lower_bound(base);
  bool overlaps   = next != region_map_.end() && next->first < base + size;
  if (next != region_map_.begin()) {
    region const& prev = regions_[std::prev(next)->second];
    overlaps           = overlaps || prev.base + prev.size > base;
  }
  if (overlaps) {
    throw std::invalid_argument("tlsf_free_list: region " + range +
                                " overlaps a region already inserted");
  }
}

inline auto tlsf_free_list::live_region(region_id id) const -> region const& {
  if (id >= regions_.size() || !regions_[id].live) {
    throw std::invalid_argument("tlsf_free_list: unknown region id " + std::to_string(id));
  }
  return regions_[id];
}

inline void tlsf_free_list::check_extend(region_id id, std::size_t bytes) const {
  region const& r         = live_region(id);
  std::string const where = "tlsf_free_list: extend_region of region " + std::to_string(id) + " " +
                            tlsf_range_text(r.base, r.size) + " by " + std::to_string(bytes) +
                            " bytes";
  if (bytes == 0 || (bytes & (granularity_ - 1)) != 0) {
    throw std::invalid_argument(where + ": not a non-zero multiple of " +
                                std::to_string(granularity_));
  }
  std::uintptr_t const end = r.base + r.size;
  if (bytes > std::numeric_limits<std::uintptr_t>::max() - end) {
    throw std::invalid_argument(where + ": wraps around the address space");
  }
  auto const next = region_map_.upper_bound(r.base);
  if (next != region_map_.end() && next->first < end + bytes) {
    throw std::invalid_argument(where + ": overlaps the next region, at " + hex(next->first));
  }
}

inline void tlsf_free_list::check_shrink(region_id id, std::size_t new_size) const {
  region const& r         = live_region(id);
  std::string const where = "tlsf_free_list: shrink_region of region " + std::to_string(id) + " " +
                            tlsf_range_text(r.base, r.size) + " to " + std::to_string(new_size) +
                            " bytes";
  if (new_size == 0 || new_size >= r.size) {
    throw std::invalid_argument(where + ": the new size must be non-zero and below the size");
  }
  if ((new_size & (granularity_ - 1)) != 0) {
    throw std::invalid_argument(where + ": not a multiple of " + std::to_string(granularity_));
  }
  block const& last       = blocks_[r.last_block];
  std::string const block = tlsf_range_text(last.base, last.size);
  if (!last.free) {
    throw std::invalid_argument(where + ": its last block " + block + " is allocated");
  }
  if (r.base + new_size < last.base) {
    throw std::invalid_argument(where + ": the cut lies below its free last block " + block);
  }
}

// --- invariant checks ---------------------------------------------------------------------------

inline void tlsf_free_list::validate() const {
  validate_regions();
  validate_free_lists();
  std::size_t spare = 0;
  for (index_t i = spare_blocks_; i != nil; i = blocks_[i].next_free) {
    ++spare;
  }
  std::size_t const unkeyed = key_free_ ? 0 : num_free_blocks_;
  expect(spare + by_address_.size() + unkeyed == blocks_.size(), "descriptor accounting is off");
  by_address_.validate();
}

inline void tlsf_free_list::validate_regions() const {
  std::uintptr_t prev_end = 0;
  std::size_t keys = 0, free_blocks = 0, free_bytes = 0, total = 0;
  for (auto const& [base, rid] : region_map_) {
    region const& r = regions_[rid];
    expect(r.live && r.base == base, "region map entry is stale", base);
    expect(base >= prev_end, "regions overlap", base);
    prev_end = r.base + r.size;
    total += r.size;
    std::uintptr_t cursor = r.base;
    std::size_t allocated = 0;
    index_t prev          = nil;
    for (index_t i = r.first_block; i != nil; prev = i, i = blocks_[i].next_phys) {
      block const& b = blocks_[i];
      expect(b.base == cursor, "block does not start where its predecessor ends", b.base);
      expect(b.size != 0 && (b.size & (granularity_ - 1)) == 0, "block has a bad size", b.base);
      expect(b.region == rid && b.prev_phys == prev, "block has bad links", b.base);
      expect(by_address_.find(b.base) == (keyed(b.free) ? i : address_map::npos),
             keyed(b.free) ? "block not in the address map" : "free block in the address map",
             b.base);
      expect(!(b.free && prev != nil && blocks_[prev].free && blocks_[prev].tag == b.tag),
             "block is not coalesced",
             b.base);
      expect(!(b.free && b.marked), "free block is marked", b.base);
      cursor += b.size;
      keys += keyed(b.free) ? 1U : 0U;
      if (b.free) {
        ++free_blocks;
        free_bytes += b.size;
      } else {
        ++allocated;
      }
    }
    expect(cursor == r.base + r.size, "blocks do not cover their region", base);
    expect(r.last_block == prev, "last block index of region is stale", base);
    expect(allocated == r.allocated_blocks, "allocated count of region is off", base);
  }
  std::size_t live_regions = 0;
  for (region const& r : regions_) {
    live_regions += r.live ? 1U : 0U;
  }
  expect(live_regions == region_map_.size(), "live regions missing from the region map");
  expect(keys == by_address_.size(), "address map holds blocks outside regions");
  expect(free_blocks == num_free_blocks_, "free block count is off");
  expect(free_bytes == free_bytes_, "free byte count is off");
  expect(total == total_bytes_ && total == free_bytes_ + allocated_bytes_, "byte totals");
}

inline void tlsf_free_list::validate_free_lists() const {
  std::size_t listed = 0;
  for (std::size_t t = 0; t < index_.size(); ++t) {
    listed += validate_free_index(static_cast<tag_t>(t));
  }
  expect(listed == num_free_blocks_, "free lists do not hold every free block exactly once");
}

inline std::size_t tlsf_free_list::validate_free_index(tag_t tag) const {
  free_index const& x = index_[tag];
  std::size_t listed = 0, bytes = 0;
  for (std::size_t fl = 0; fl < fl_count; ++fl) {
    for (std::size_t sl = 0; sl < sl_count; ++sl) {
      index_t const head = x.heads[fl][sl];
      bool const bit     = ((x.sl_bitmap[fl] >> sl) & 1U) != 0;
      expect(bit == (head != nil), "second-level bitmap disagrees with list emptiness");
      index_t prev = nil;
      for (index_t i = head; i != nil; prev = i, i = blocks_[i].next_free) {
        size_class const c = class_of_size(blocks_[i].size);
        expect(blocks_[i].free && blocks_[i].prev_free == prev, "free list link is bad");
        expect(blocks_[i].tag == tag, "block in the list of another tag", blocks_[i].base);
        expect(c.fl == fl && c.sl == sl, "block in wrong class", blocks_[i].base);
        ++listed;
        bytes += blocks_[i].size;
      }
    }
    bool const bit = ((x.fl_bitmap >> fl) & 1U) != 0;
    expect(bit == (x.sl_bitmap[fl] != 0), "first-level bitmap disagrees with second level");
  }
  expect(x.fl_bitmap >> fl_count == 0, "first-level bitmap has bits beyond the last class");
  expect(listed == x.num_free && bytes == x.free_bytes, "per-tag counters are off");
  return listed;
}

}  // namespace rmm::mr::detail
