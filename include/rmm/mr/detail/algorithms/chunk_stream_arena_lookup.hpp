/**
 * @file chunk_stream_arena_lookup.hpp
 * @brief chunk_stream_arena's map from an address to its superblock, defined out of line: the
 * bitmap of the chunks where superblocks start, the table of 2 MiB granules, and find(). Design:
 * chunk_stream_arena.md, "Finding a block's superblock". Included at the end of
 * chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail::arena {

inline void chunk_stream_arena::set_start(std::size_t c) noexcept {
  starts_[c >> 6U] |= std::uint64_t{1} << (c & 63U);
  starts_sum_[c >> 12U] |= std::uint64_t{1} << ((c >> 6U) & 63U);
}
inline void chunk_stream_arena::clear_start(std::size_t c) noexcept {
  starts_[c >> 6U] &= ~(std::uint64_t{1} << (c & 63U));
  if (starts_[c >> 6U] == 0) {
    starts_sum_[c >> 12U] &= ~(std::uint64_t{1} << ((c >> 6U) & 63U));
  }
}
// Highest chunk <= c in which a superblock starts, or npos.
inline std::size_t chunk_stream_arena::prev_start(std::size_t c) const noexcept {
  std::size_t const w = c >> 6U;
  if (std::uint64_t const bits = starts_[w] & (~std::uint64_t{0} >> (63 - (c & 63U))); bits != 0) {
    return (w << 6U) + top_bit(bits);
  }
  if (w == 0) {
    return npos;
  }
  std::size_t const wq = w - 1;  // the highest non-zero word <= wq, through the summary
  std::size_t sw       = wq >> 6U;
  std::uint64_t sbits  = starts_sum_[sw] & (~std::uint64_t{0} >> (63 - (wq & 63U)));
  while (sbits == 0) {
    if (sw == 0) {
      return npos;
    }
    sbits = starts_sum_[--sw];
  }
  std::size_t const word = (sw << 6U) + top_bit(sbits);
  return (word << 6U) + top_bit(starts_[word]);
}
// The superblock with the greatest base <= a, or none.
inline std::uint32_t chunk_stream_arena::last_start_le(std::uintptr_t a) const noexcept {
  if (a < base_ || a >= end_) {
    return none;
  }
  std::size_t c      = chunk_of(a);
  std::uint32_t best = none;
  for (std::uint32_t s = chunk_head_[c]; s != none && sbs_[s].base <= a;
       s               = sbs_[s].next_in_chunk) {
    best = s;
  }
  if (best != none || c == 0) {
    return best;
  }
  c = prev_start(c - 1);
  if (c == npos) {
    return none;
  }
  for (std::uint32_t s = chunk_head_[c]; s != none; s = sbs_[s].next_in_chunk) {
    best = s;
  }
  return best;
}
// The superblock holding ptr, or none: its granule's entry where that superblock holds ptr (all
// but the addresses past a superblock boundary inside a granule), else the chunk lists. Without
// the granules every free walked its chunk's list, and the chunk before it where its superblock
// began there (a free in a superblock not aligned to a chunk, the usual case once large blocks
// share the global arena): chunk_stream_arena.md, "Finding a block's superblock".
inline std::uint32_t chunk_stream_arena::find(std::uintptr_t ptr) const noexcept {
  if (ptr - base_ < end_ - base_) {
    if (std::uint32_t const g = granule_owner_[(ptr - base_) >> granule_shift];
        g != none && ptr - sbs_[g].base < sbs_[g].size) {
      return g;
    }
  }
  std::uint32_t const s = last_start_le(ptr);
  return (s != none && ptr - sbs_[s].base < sbs_[s].size) ? s : none;
}

// The granules whose first byte lies in [base, base + size) (inside the arena) now name s, or
// none. Superblocks are disjoint, so each granule's first byte lies in at most one.
inline void chunk_stream_arena::set_granules(std::uintptr_t base,
                                             std::size_t size,
                                             std::uint32_t s) noexcept {
  std::size_t const first = (base - base_ + granule - 1) >> granule_shift;
  std::size_t const last  = (base - base_ + size - 1) >> granule_shift;
  for (std::size_t g = first; g <= last; ++g) {
    granule_owner_[g] = s;
  }
}

}  // namespace rmm::mr::detail::arena
