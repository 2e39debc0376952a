/**
 * @file chunk_stream_arena_tree.hpp
 * @brief The max tree over chunks of chunk_stream_arena, defined out of line: refresh_leaf()
 * (climbs after a superblock's largest free block changed) and first_chunk_fitting() (the lowest
 * chunk whose superblocks hold a large enough block). Design: chunk_stream_arena.md, "16-ary max
 * tree". Included at the end of chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>
#include <rmm/mr/detail/algorithms/sse2_u32.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail::arena {

inline std::size_t chunk_stream_arena::first_fit_in(group const& g, std::uint32_t u) noexcept {
#ifdef RMM_DETAIL_SSE2
  // `entry >= u` as `entry > u - 1` (u >= 1), biased; the four masks packed to 16 bytes, one bit
  // each.
  __m128i const key = sse2::splat_biased(u - 1);
  auto const ge     = [&](int k) { return _mm_cmpgt_epi32(sse2::load_biased(g.v + 4 * k), key); };
  __m128i const lo  = _mm_packs_epi32(ge(0), ge(1));
  __m128i const hi  = _mm_packs_epi32(ge(2), ge(3));
  auto const mask   = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
#else
  unsigned mask = 0;
  for (std::size_t k = 0; k < fan; ++k) {
    mask |= static_cast<unsigned>(g.v[k] >= u) << k;
  }
#endif
  return mask == 0 ? fan : static_cast<std::size_t>(__builtin_ctz(mask));
}

inline std::uint32_t chunk_stream_arena::group_max(group const& g) noexcept {
#ifdef RMM_DETAIL_SSE2
  // The 16 entries folded to 4, then to 1.
  auto const load = [&](int k) { return sse2::load_biased(g.v + 4 * k); };
  return sse2::fold_max(
      sse2::max_biased(sse2::max_biased(load(0), load(1)), sse2::max_biased(load(2), load(3))));
#else
  std::uint32_t m = 0;
  for (std::uint32_t const x : g.v) {
    m = std::max(m, x);
  }
  return m;
#endif
}

inline std::uint32_t chunk_stream_arena::group_max_replacing(group const& g,
                                                             std::size_t lane,
                                                             std::uint32_t v) noexcept {
#ifdef RMM_DETAIL_SSE2
  // The entry at `lane` zeroed (unbiased, so that it is the least once biased), then v.
  __m128i const at = _mm_set1_epi32(static_cast<int>(lane));
  auto const get   = [&](int k) {
    __m128i const x = _mm_loadu_si128(reinterpret_cast<__m128i const*>(g.v + 4 * k));
    return _mm_xor_si128(_mm_andnot_si128(sse2::lane_is(4 * k, at), x), sse2::splat_biased(0));
  };
  return std::max(v,
                  sse2::fold_max(sse2::max_biased(sse2::max_biased(get(0), get(1)),
                                                  sse2::max_biased(get(2), get(3)))));
#else
  std::uint32_t m = 0;
  for (std::size_t k = 0; k < fan; ++k) {
    m = std::max(m, k == lane ? v : g.v[k]);
  }
  return m;
#endif
}

// The maximum of the top level's groups (at most top_groups).
inline std::uint32_t chunk_stream_arena::top_max() const noexcept {
  group const* const t   = level(num_levels_ - 1);
  std::size_t const size = groups_of(num_levels_ - 1);
  std::uint32_t m        = 0;
  for (std::size_t g = 0; g < size; ++g) {
    m = std::max(m, group_max(t[g]));
  }
  return m;
}

// Climbs while the group maximum changes, and republishes largest_ when the top changed. A group
// is rescanned only when the entry that was its maximum shrank: a larger value is the new
// maximum, and a change below the maximum leaves it (the rescans were 10 % of a single-thread arena
// operation, 2026-11-27 profiles). The same rule keeps largest_, the top level's maximum.
inline void chunk_stream_arena::refresh_leaf(std::size_t c) noexcept {
  std::size_t b = 0;
  for (std::uint32_t s = chunk_head_[c]; s != none; s = sbs_[s].next_in_chunk) {
    b = std::max(b, sbs_[s].max_free);
  }
  set_leaf(c, units(b));
}

// Without the walk of chunk c's list (chunk_head_[c], a line of its own) where sb is the only
// superblock starting there, as every batch is.
inline void chunk_stream_arena::refresh_leaf_of(sb_rec const& sb, std::size_t c) noexcept {
  if (sb.alone) {
    set_leaf(c, units(sb.max_free));
  } else {
    refresh_leaf(c);
  }
}

// Each entry is stored after its group's rescan, which reads the group as it was with the entry
// replaced: a rescan that loaded the group after the entry's 4-byte store would wait for that
// store to reach the cache (a load over a smaller store is not forwarded).
inline void chunk_stream_arena::set_leaf(std::size_t c, std::uint32_t v) noexcept {
  std::uint32_t* entry = leaf_of(c);
  std::uint32_t old    = *entry;
  if (old == v) {
    return;
  }
  for (std::size_t l = 0; l + 1 < num_levels_; ++l) {
    std::size_t const g        = c / fan;
    std::uint32_t& up          = level(l + 1)[g / fan].v[g % fan];
    std::uint32_t const up_old = up;
    std::uint32_t m            = v;
    if (v < up_old) {
      if (old < up_old) {
        *entry = v;
        return;  // the group's maximum is another entry, unchanged
      }
      m = group_max_replacing(level(l)[g], c % fan, v);  // the maximum shrank: rescan
    }
    *entry = v;
    if (m == up_old) {
      return;
    }
    entry = &up;
    old   = up_old;
    v     = m;
    c     = g;
  }
  // An entry of the top level goes from `old` to `v`.
  *entry                  = v;
  std::uint32_t const top = units(largest_.get());
  if (v >= top) {
    largest_.set(bytes_of(v));
  } else if (old >= top) {  // the maximum shrank (rare: a rescan after the store is acceptable)
    largest_.set(bytes_of(top_max()));
  }
}

// The lowest chunk whose superblocks hold a free block of at least `bytes` (npos if none): the
// first group of the top level that holds one, then one group per level.
inline std::size_t chunk_stream_arena::first_chunk_fitting(std::size_t bytes) const noexcept {
  if (bytes > largest_.get()) {
    return npos;  // also keeps units(bytes) below 2^32
  }
  std::uint32_t const u = units(bytes);
  group const* const t  = level(num_levels_ - 1);
  std::size_t g         = 0;
  std::size_t j         = 0;
  while ((j = first_fit_in(t[g], u)) == fan) {  // largest_ guarantees a hit
    ++g;
  }
  std::size_t i = g * fan + j;  // the group at the level below: entry i of this level
  if (num_levels_ == 1) {
    return i;  // the top is the leaves
  }
  for (std::size_t l = num_levels_ - 1; l-- > 1;) {
    i = i * fan + first_fit_in(level(l)[i], u);  // the parent's maximum guarantees a hit
  }
  // i is the group of leaves: the caller reads the chunk's list head next, so its line is asked
  // for now, while the group is searched.
  prefetch_line(chunk_head_.data() + i * fan);
  return i * fan + first_fit_in(level(0)[i], u);
}

}  // namespace rmm::mr::detail::arena
