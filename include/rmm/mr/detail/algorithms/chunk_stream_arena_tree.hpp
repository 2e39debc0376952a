/**
 * @file chunk_stream_arena_tree.hpp
 * @brief The first-fit index over chunks of chunk_stream_arena (a leaf per chunk, a class byte per
 * chunk, the largest class per group of 64 chunks), defined out of line: set_leaf() (after a
 * superblock's largest free block changed) and first_chunk_fitting() (the lowest chunk whose
 * superblocks hold a large enough block). Design: chunk_stream_arena.md, "Class tree". Included
 * at the end of chunk_stream_arena.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>
#include <rmm/mr/detail/algorithms/class_bytes.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail::arena {

// Leaf c from the largest free blocks of the superblocks starting in chunk c.
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

// The largest leaf and how many chunks hold it: the top class from the group classes, then the
// chunks of that class in the groups that reach it. Called only when the last chunk holding the
// largest leaf shrank (at n = 100,000 / max 4 MiB one leaf change in ten, in the host model).
inline std::uint32_t chunk_stream_arena::leaf_max() noexcept {
  using namespace class_bytes;
  std::uint8_t const top = max_of(gmax_.data(), gmax_.size());
  std::uint32_t m        = 0;
  std::size_t n          = 0;
  if (top != 0) {
    for (std::size_t g0 = 0; g0 < gmax_.size(); g0 += 16) {
      for (unsigned gm = eq16(gmax_.data() + g0, top); gm != 0; gm &= gm - 1) {
        std::size_t const g = g0 + static_cast<std::size_t>(__builtin_ctz(gm));
        for (std::uint64_t cm = eq64(cls_.data() + g * group_chunks, top); cm != 0; cm &= cm - 1) {
          std::uint32_t const x =
              leaf(g * group_chunks + static_cast<std::size_t>(__builtin_ctzll(cm)));
          n = x > m ? 1 : n + (x == m);
          m = std::max(m, x);
        }
      }
    }
  }
  top_count_ = n;
  return m;
}

// Leaf c is now v. Its class byte changes only when v crosses a class bound; the group's largest
// class is rescanned only when the byte that was it shrank, and read before the byte's store (a
// 16-byte load over a 1-byte store still in the store buffer is not forwarded). largest_ is kept
// with top_count_, the chunks holding it, so that it is recomputed only when the last one shrank.
inline void chunk_stream_arena::set_leaf(std::size_t c, std::uint32_t v) noexcept {
  std::uint32_t* const entry = leaf_of(c);
  std::uint32_t const old    = *entry;
  if (old == v) {
    return;
  }
  *entry                = v;
  std::uint8_t const nc = cls_of(v);
  std::uint8_t const oc = cls_[c];
  if (nc != oc) {
    std::size_t const g   = c / group_chunks;
    std::uint8_t const gm = gmax_[g];
    if (nc > gm) {
      gmax_[g] = nc;
    } else if (oc == gm && nc < oc) {
      gmax_[g] = class_bytes::max64_replacing(cls_.data() + g * group_chunks, c % group_chunks, nc);
    }
    cls_[c] = nc;
  }
  std::uint32_t const top = units(largest_.get());
  if (v > top) {
    largest_.set(bytes_of(v));
    top_count_ = 1;
    return;
  }
  top_count_ += v == top;
  if (old == top && --top_count_ == 0) {
    largest_.set(bytes_of(leaf_max()));
  }
}

// The lowest chunk whose superblocks hold a free block of at least `bytes` (npos if none): the
// first group whose largest class reaches the request's class, then in it the first chunk of a
// higher class (it fits, classes being monotonic) or of the same class whose leaf fits.
inline std::size_t chunk_stream_arena::first_chunk_fitting(std::size_t bytes) const noexcept {
  if (bytes > largest_.get()) {
    return npos;  // also keeps units(bytes) below 2^32
  }
  std::uint32_t const u = units(bytes);
  std::uint8_t const k  = cls_of(u);
  for (std::size_t g0 = 0; g0 < gmax_.size(); g0 += 16) {
    for (unsigned gm = class_bytes::ge16(gmax_.data() + g0, k); gm != 0; gm &= gm - 1) {
      std::size_t const g = g0 + static_cast<std::size_t>(__builtin_ctz(gm));
      for (std::uint64_t cm = class_bytes::ge64(cls_.data() + g * group_chunks, k); cm != 0;
           cm &= cm - 1) {
        std::size_t const c = g * group_chunks + static_cast<std::size_t>(__builtin_ctzll(cm));
        if (cls_[c] > k || leaf(c) >= u) {
          prefetch_line(chunk_head_.data() + c);  // the caller reads the chunk's list head next
          return c;
        }
      }
    }
  }
  return npos;
}

}  // namespace rmm::mr::detail::arena
