/**
 * @file chunk_stream_arena_blocks.hpp
 * @brief The free blocks inside one superblock of chunk_stream_arena, defined out of line: carve()
 * (first fit in the superblock's sorted array or tree), give() (a free, coalescing),
 * first_at_or_after() and to_tree(). Design: chunk_stream_arena.md, "Free blocks of a
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
  auto it = sb.blocks.begin();
  while (it->size < bytes) {
    ++it;
  }
  std::uintptr_t const p = it->base;
  bool const was_max     = it->size == sb.max_free;
  if (it->size == bytes) {
    sb.blocks.erase(it);
  } else {
    it->base += bytes;
    it->size -= bytes;
  }
  if (was_max) {
    std::size_t m = 0;
    for (auto const& b : sb.blocks) {
      m = std::max(m, b.size);
    }
    sb.max_free = m;
  }
  return p;
}

// Returns [ptr, ptr + bytes) (inside sb) to sb's free blocks, coalescing.
inline void chunk_stream_arena::give(sb_rec& sb, std::uintptr_t ptr, std::size_t bytes) {
  if (bytes == 0 || (bytes % allocation_granularity) != 0) {
    throw std::invalid_argument("chunk_stream_arena: free size " + std::to_string(bytes) +
                                " is not a non-zero multiple of " +
                                std::to_string(allocation_granularity));
  }
  if ((ptr % allocation_granularity) != 0) {
    throw std::invalid_argument("chunk_stream_arena: free address " + format_hex(ptr) +
                                " is not aligned to " + std::to_string(allocation_granularity));
  }
  if (sb.tree) {
    sb.tree->insert_within(ptr, bytes, sb.base, sb.base + sb.size);
    sb.max_free = sb.tree->largest_free_block();
    if (sb.max_free == sb.size) {  // entirely free: back to the array (capacity >= 1 kept)
      sb.tree.reset();
      --num_trees_;
      sb.blocks.assign(1, block{sb.base, sb.size});
    }
    return;
  }
  std::uintptr_t const end = ptr + bytes;
  auto& v                  = sb.blocks;
  auto it                  = v.begin() + static_cast<std::ptrdiff_t>(first_at_or_after(v, ptr));
  bool const has_next      = it != v.end();
  bool const has_prev      = it != v.begin();
  if ((has_next && it->base < end) ||
      (has_prev && std::prev(it)->base + std::prev(it)->size > ptr)) {
    throw std::invalid_argument("chunk_stream_arena: free of [" + format_hex(ptr) + ", +" +
                                std::to_string(bytes) + ") overlaps a free block (double free?)");
  }
  bool const join_prev = has_prev && std::prev(it)->base + std::prev(it)->size == ptr;
  bool const join_next = has_next && it->base == end;
  std::size_t grown    = bytes;
  if (join_prev && join_next) {
    auto const pv = std::prev(it);
    pv->size += bytes + it->size;
    grown = pv->size;
    v.erase(it);
  } else if (join_prev) {
    grown = (std::prev(it)->size += bytes);
  } else if (join_next) {
    it->base = ptr;
    grown    = (it->size += bytes);
  } else if (v.size() >= small_block_limit) {
    to_tree(sb);
    give(sb, ptr, bytes);
    return;
  } else {
    v.insert(it, block{ptr, bytes});
  }
  sb.max_free = std::max(sb.max_free, grown);
}

// The index of the first block of `v` (sorted by address) at or after `ptr`. Up to 32 blocks, a
// linear scan: its loads are independent, where each step of a binary search waits for the last
// one, and it mispredicts once, at its exit (on the structure alone 0.90-0.95 of the binary
// search's time at max 1 MiB, session t, docs/bench-results/2026-11-28-h200-t/proto/). Beyond,
// lower_bound with a fixed number of steps: which way a probe goes is a coin toss for a free at a
// random place, so std::lower_bound mispredicted about one branch per step (about 12 % of the small
// single-thread rows with 128-block arrays, profile of 2026-11-27 session n).
inline std::size_t chunk_stream_arena::first_at_or_after(std::vector<block> const& v,
                                                         std::uintptr_t ptr) noexcept {
  std::size_t len = v.size();
  if (len <= linear_scan_limit) {
    std::size_t i = 0;
    while (i < len && v[i].base < ptr) {
      ++i;
    }
    return i;
  }
  block const* b = v.data();
  while (len > 1) {
    std::size_t const half = len / 2;
    b                      = b[half - 1].base < ptr ? b + half : b;
    len -= half;
  }
  return static_cast<std::size_t>(b - v.data()) + (b->base < ptr ? 1U : 0U);
}

// Moves sb's free blocks into a tree; sb is unchanged if this throws.
inline void chunk_stream_arena::to_tree(sb_rec& sb) {
  auto tree = std::make_unique<address_ordered_free_list>(allocation_granularity);
  for (auto const& b : sb.blocks) {
    tree->insert_within(b.base, b.size, sb.base, sb.base + sb.size);
  }
  sb.tree = std::move(tree);
  sb.blocks.clear();  // keeps its capacity
  ++num_trees_;
}

}  // namespace rmm::mr::detail::arena
