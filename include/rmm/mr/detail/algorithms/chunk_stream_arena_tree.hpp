/**
 * @file chunk_stream_arena_tree.hpp
 * @brief The max tree over chunks of chunk_stream_arena, defined out of line: refresh_leaf()
 * (climbs after a superblock's largest free block changed) and first_chunk_fitting() (the lowest
 * chunk whose superblocks hold a large enough block). Design: chunk_stream_arena.md, "8-ary max
 * tree". Included at the end of chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail::arena {

// Climbs while the group maximum changes, and republishes largest_ when the top level changed. A
// group is rescanned only when the entry that was its maximum shrank: a larger value is the new
// maximum, and a change below the maximum leaves it (the rescans were 10 % of a single-thread arena
// operation, 2026-11-27 profiles).
inline void chunk_stream_arena::refresh_leaf(std::size_t c) noexcept {
  std::size_t v = 0;
  for (std::uint32_t s = chunk_head_[c]; s != none; s = sbs_[s].next_in_chunk) {
    v = std::max(v, sbs_[s].max_free);
  }
  std::size_t old = levels_[0][c];
  if (old == v) {
    return;
  }
  levels_[0][c] = v;
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    std::size_t const g      = c / fan;
    std::size_t& up          = levels_[l + 1][g];
    std::size_t const up_old = up;
    std::size_t m            = v;
    if (v < up_old) {
      if (old < up_old) {
        return;  // the group's maximum is another entry, unchanged
      }
      std::size_t const* p = &levels_[l][g * fan];
      m                    = *std::max_element(p, p + fan);  // the maximum shrank: rescan
    }
    if (m == up_old) {
      return;
    }
    up  = m;
    old = up_old;
    v   = m;
    c   = g;
  }
  // The change reached the top level (or the tree is one level): its maximum may have moved.
  auto const& top = levels_.back();
  largest_.set(*std::max_element(top.begin(), top.end()));
}

// The lowest chunk whose superblocks hold a free block of at least `bytes` (npos if none): the
// top level scanned, then one group of 8 per level.
inline std::size_t chunk_stream_arena::first_chunk_fitting(std::size_t bytes) const noexcept {
  auto const& top = levels_.back();
  std::size_t i   = 0;
  while (i < top.size() && top[i] < bytes) {
    ++i;
  }
  if (i == top.size()) {
    return npos;
  }
  for (std::size_t l = levels_.size() - 1; l-- > 0;) {
    std::size_t const* p = &levels_[l][i * fan];
    std::size_t j        = 0;
    while (p[j] < bytes) {  // the parent's maximum guarantees a hit
      ++j;
    }
    i = i * fan + j;
  }
  return i;
}

}  // namespace rmm::mr::detail::arena
