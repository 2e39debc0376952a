// Shared by the arena tests and fuzz targets: chunk_stream_arena over a fixed fake range, so that
// tests written for the stream arena's interface construct it from the cache size alone.
#pragma once

#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <cstddef>
#include <cstdint>

namespace rmm::test {

/// Fake global arena range the test arenas index: [fake_arena_base, +fake_arena_span).
inline constexpr std::uintptr_t fake_arena_base = 0x7f0000000000;
inline constexpr std::size_t fake_arena_span    = std::size_t{4} << 30U;  // 2048 chunks

/// chunk_stream_arena over [base, base + span), by default the fake range above.
struct test_stream_arena : rmm::mr::detail::arena::chunk_stream_arena {
  explicit test_stream_arena(std::size_t cache   = rmm::mr::detail::arena::default_cache_bytes,
                             std::uintptr_t base = fake_arena_base,
                             std::size_t span    = fake_arena_span)
      : chunk_stream_arena{base, span, cache} {}
};

}  // namespace rmm::test
