/**
 * @file chunk_stream_arena_blocks.hpp
 * @brief The free blocks inside one superblock of chunk_stream_arena, defined out of line: carve()
 * (first fit in the superblock's sorted block_array or tree), give() (a free, coalescing) and
 * to_tree(). Design: chunk_stream_arena.md, "Free blocks of a
 * superblock". Included at the end of chunk_stream_arena.hpp; including it alone includes that
 * header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::mr::detail::arena {

// Takes `bytes` from the lowest block that fits (the caller checked max_free). Never throws.
inline std::uintptr_t chunk_stream_arena::carve(sb_rec& sb, std::size_t bytes) noexcept {
  if (sb.tree) {
    std::uintptr_t const p = *sb.tree->allocate_first_fit(bytes);
    sb.max_free            = sb.tree->largest_free_block();
    return p;
  }
  auto& v = sb.blocks;
  v.prefetch_places();  // read after the search of the sizes: load them meanwhile
  std::uint32_t const u      = units(bytes);
  std::size_t const i        = v.first_fit(u);
  std::uint32_t const place  = v.place(i);
  std::uint32_t const length = v.length(i);
  // Almost always the largest block: first fit lands in the lowest superblock that can hold it.
  // Its new maximum is taken from the sizes as they are before the change is stored.
  bool const was_max = bytes_of(length) == sb.max_free;
  std::size_t const max_free =
      was_max ? bytes_of(v.max_length_replacing(i, length - u)) : sb.max_free;
  if (length == u) {
    v.erase(i);
  } else {
    v.set(i, place + u, length - u);
  }
  sb.max_free = max_free;
  return sb.base + bytes_of(place);
}

// Returns [ptr, ptr + bytes) (inside sb) to sb's free blocks, coalescing.
inline void chunk_stream_arena::give(sb_rec& sb, std::uintptr_t ptr, std::size_t bytes) {
  if (bytes == 0 || (bytes % allocation_granularity) != 0) {
    throw_bad_size("free", bytes);
  }
  if ((ptr % allocation_granularity) != 0) {
    throw std::invalid_argument("chunk_stream_arena: free address " + format_hex(ptr) +
                                " is not aligned to " + std::to_string(allocation_granularity));
  }
  if (sb.tree) {
    sb.tree->insert_within(ptr, bytes, sb.base, sb.base + sb.size);
    sb.max_free = sb.tree->largest_free_block();
    if (sb.max_free == sb.size) {  // entirely free: back to the array (its capacity was kept)
      sb.tree.reset();
      --num_trees_;
      sb.blocks.assign_one(0, units(sb.size));
    }
    return;
  }
  auto& v = sb.blocks;
  v.prefetch_sizes();  // read after the search of the places: load them meanwhile
  std::uint32_t const at       = units(ptr - sb.base);  // the caller checked that it is inside sb
  std::uint32_t const n        = units(bytes);
  std::uint32_t const end      = at + n;
  std::size_t const i          = v.first_at_or_after(at);
  bool const has_next          = i < v.size();
  bool const has_prev          = i > 0;
  std::uint32_t const prev_end = has_prev ? v.place(i - 1) + v.length(i - 1) : 0;
  if ((has_next && v.place(i) < end) || (has_prev && prev_end > at)) {
    throw std::invalid_argument("chunk_stream_arena: free of [" + format_hex(ptr) + ", +" +
                                std::to_string(bytes) + ") overlaps a free block (double free?)");
  }
  bool const join_prev = has_prev && prev_end == at;
  bool const join_next = has_next && v.place(i) == end;
  std::uint32_t grown  = n;
  if (join_prev && join_next) {
    grown = v.length(i - 1) + n + v.length(i);
    v.set(i - 1, v.place(i - 1), grown);
    v.erase(i);
  } else if (join_prev) {
    grown = v.length(i - 1) + n;
    v.set(i - 1, v.place(i - 1), grown);
  } else if (join_next) {
    grown = n + v.length(i);
    v.set(i, at, grown);
  } else if (v.size() >= small_block_limit) {
    to_tree(sb);
    give(sb, ptr, bytes);
    return;
  } else {
    v.reserve(v.size() + 1);  // throws before changing anything
    v.insert(i, at, n);
  }
  sb.max_free = std::max(sb.max_free, bytes_of(grown));
}

// Moves sb's free blocks into a tree; sb is unchanged if this throws.
inline void chunk_stream_arena::to_tree(sb_rec& sb) {
  auto tree = std::make_unique<address_ordered_free_list>(allocation_granularity);
  for (std::size_t i = 0; i < sb.blocks.size(); ++i) {
    tree->insert_within(sb.base + bytes_of(sb.blocks.place(i)),
                        bytes_of(sb.blocks.length(i)),
                        sb.base,
                        sb.base + sb.size);
  }
  sb.tree = std::move(tree);
  sb.blocks.clear();  // keeps its capacity: give() refills it, without allocating, once sb is free
  ++num_trees_;
}

}  // namespace rmm::mr::detail::arena
