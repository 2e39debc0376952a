/**
 * @file class_bytes.hpp
 * @brief Masks and maxima over arrays of unsigned bytes, 16 or 64 at a time: the searches of
 * chunk_stream_arena's class tree (a class byte per chunk, the largest class per group of 64
 * chunks; chunk_stream_arena.md, "Class tree"). SSE2 where the host compiler has it
 * (RMM_DETAIL_SSE2, sse2_u32.hpp), else scalar loops with the same results. Plain host code, no
 * state; every function reads exactly the bytes it names, whose owner pads its arrays to them.
 */
#pragma once

#include <rmm/mr/detail/algorithms/sse2_u32.hpp>

#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail::class_bytes {

#ifdef RMM_DETAIL_SSE2
inline __m128i load16(std::uint8_t const* p) noexcept {
  return _mm_loadu_si128(reinterpret_cast<__m128i const*>(p));
}
inline __m128i splat(std::uint8_t k) noexcept { return _mm_set1_epi8(static_cast<char>(k)); }
// The largest of the 16 bytes of m.
inline std::uint8_t fold_max(__m128i m) noexcept {
  m = _mm_max_epu8(m, _mm_srli_si128(m, 8));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 4));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 2));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 1));
  return static_cast<std::uint8_t>(_mm_cvtsi128_si32(m) & 0xFF);
}
#endif

/// @brief Bit i set where p[i] >= k, for i < 16.
inline unsigned ge16(std::uint8_t const* p, std::uint8_t k) noexcept {
#ifdef RMM_DETAIL_SSE2
  __m128i const x = load16(p);  // max(x, k) == x  <=>  x >= k (unsigned)
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, splat(k)), x)));
#else
  unsigned m = 0;
  for (unsigned i = 0; i < 16; ++i) {
    m |= static_cast<unsigned>(p[i] >= k) << i;
  }
  return m;
#endif
}

/// @brief Bit i set where p[i] == k, for i < 16.
inline unsigned eq16(std::uint8_t const* p, std::uint8_t k) noexcept {
#ifdef RMM_DETAIL_SSE2
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(load16(p), splat(k))));
#else
  unsigned m = 0;
  for (unsigned i = 0; i < 16; ++i) {
    m |= static_cast<unsigned>(p[i] == k) << i;
  }
  return m;
#endif
}

/// @brief Bit i set where p[i] >= k, for i < 64.
inline std::uint64_t ge64(std::uint8_t const* p, std::uint8_t k) noexcept {
  return std::uint64_t{ge16(p, k)} | (std::uint64_t{ge16(p + 16, k)} << 16U) |
         (std::uint64_t{ge16(p + 32, k)} << 32U) | (std::uint64_t{ge16(p + 48, k)} << 48U);
}

/// @brief Bit i set where p[i] == k, for i < 64.
inline std::uint64_t eq64(std::uint8_t const* p, std::uint8_t k) noexcept {
  return std::uint64_t{eq16(p, k)} | (std::uint64_t{eq16(p + 16, k)} << 16U) |
         (std::uint64_t{eq16(p + 32, k)} << 32U) | (std::uint64_t{eq16(p + 48, k)} << 48U);
}

/// @brief The largest of p[0 .. n), n a multiple of 16 (0 where n is 0).
inline std::uint8_t max_of(std::uint8_t const* p, std::size_t n) noexcept {
#ifdef RMM_DETAIL_SSE2
  __m128i m = _mm_setzero_si128();
  for (std::size_t i = 0; i < n; i += 16) {
    m = _mm_max_epu8(m, load16(p + i));
  }
  return fold_max(m);
#else
  std::uint8_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m = p[i] > m ? p[i] : m;
  }
  return m;
#endif
}

/// @brief The largest of p[0 .. 64) with p[lane] taken as v: read before p[lane]'s store (a
/// 16-byte load over a 1-byte store still in the store buffer is not forwarded, and waits).
inline std::uint8_t max64_replacing(std::uint8_t const* p,
                                    std::size_t lane,
                                    std::uint8_t v) noexcept {
#ifdef RMM_DETAIL_SSE2
  __m128i const at  = splat(static_cast<std::uint8_t>(lane));
  __m128i const val = splat(v);
  __m128i const idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  auto const get    = [&](int k) {
    __m128i const hit =
        _mm_cmpeq_epi8(_mm_add_epi8(idx, splat(static_cast<std::uint8_t>(16 * k))), at);
    return _mm_or_si128(_mm_andnot_si128(hit, load16(p + 16 * k)), _mm_and_si128(hit, val));
  };
  return fold_max(_mm_max_epu8(_mm_max_epu8(get(0), get(1)), _mm_max_epu8(get(2), get(3))));
#else
  std::uint8_t m = 0;
  for (std::size_t i = 0; i < 64; ++i) {
    std::uint8_t const x = i == lane ? v : p[i];
    m                    = x > m ? x : m;
  }
  return m;
#endif
}

}  // namespace rmm::mr::detail::class_bytes
