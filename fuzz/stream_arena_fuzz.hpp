// Shared by the fuzz targets of the arena's stream arenas (chunk_stream_arena_fuzz,
// bitmap_stream_arena_fuzz, arena_fuzz): what they read from the input and check the same way.
#pragma once

#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace rmm::fuzz {

/// Live blocks by address: their sizes.
using live_map = std::map<std::uintptr_t, std::size_t>;

/// A block size from the input: 256 B .. @p max, mostly small.
inline std::size_t block_size(reader& in, std::size_t max) {
  return 256 * (1 + in.skewed(max / 256));
}

/// A stream arena's cache size from the input's first byte: 0 .. 3 superblocks, maybe 256 B more.
inline std::size_t cache_size(std::uint8_t head) {
  return (head % 4U) * rmm::mr::detail::arena::superblock_size + ((head >> 2U) % 2U) * 256;
}

/// A free to try as misuse: at @p p or at a live block (as the input picks), shifted by up to
/// 16 KiB either way, of a size from the input (not always a multiple of 256).
inline std::pair<std::uintptr_t, std::size_t> misused_free(reader& in,
                                                           std::uintptr_t p,
                                                           live_map const& live) {
  if (!live.empty() && in.byte() % 2U == 0) {
    p = pick(live, in)->first;
  }
  std::size_t const shift = in.byte();
  p                       = shift < 128 ? p + 128 * shift : p - 128 * (shift - 128);
  std::size_t const n     = in.byte() % 8U == 0 ? in.byte() : 256 * (1 + in.byte() % 64U);
  return {p, n};
}

/// The bytes of the live blocks.
inline std::size_t live_bytes(live_map const& live) {
  std::size_t bytes = 0;
  for (auto const& [p, n] : live) {
    bytes += n;
  }
  return bytes;
}

}  // namespace rmm::fuzz
