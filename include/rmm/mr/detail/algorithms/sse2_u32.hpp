/**
 * @file sse2_u32.hpp
 * @brief SSE2 helpers for unsigned 32-bit lanes, for the arena's vector searches in block_array
 * (chunk_stream_arena's class tree searches bytes: class_bytes.hpp): SSE2 compares 32-bit lanes as
 * signed only, so values are compared biased by 2^31, whose signed order is the unsigned order of
 * the values.
 *
 * Defines RMM_DETAIL_SSE2 (kept defined for the headers that include this one) where SSE2 is there:
 * every x86-64 host compiler, not nvcc's device pass. Where it is not, the includers use scalar
 * loops. Where the build enables SSE4.1 (`__SSE4_1__`: -msse4.1, -march=x86-64-v2 or later), the
 * maxima are one pmaxsd instead of a compare and a select (6 % fewer instructions per operation in
 * the arena's host model, chunk_stream_arena.md). Plain host code, no state.
 */
#pragma once

#include <cstdint>

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#ifdef __SSE4_1__
#include <smmintrin.h>
#endif
#define RMM_DETAIL_SSE2 1
#endif

#ifdef RMM_DETAIL_SSE2
namespace rmm::mr::detail::sse2 {

inline constexpr std::uint32_t bias = 0x80000000U;

/// @brief @p x biased, in all four lanes.
inline __m128i splat_biased(std::uint32_t x) noexcept {
  return _mm_set1_epi32(static_cast<int>(x ^ bias));
}

/// @brief The lane-wise maximum of biased values: SSE4.1's signed maximum where the build enables
/// it, else a compare and a select (SSE2 has no 32-bit maximum).
inline __m128i max_biased(__m128i a, __m128i b) noexcept {
#ifdef __SSE4_1__
  return _mm_max_epi32(a, b);  // pmaxsd: the signed maximum, which is what the bias is for
#else
  __m128i const gt = _mm_cmpgt_epi32(a, b);
  return _mm_or_si128(_mm_and_si128(gt, a), _mm_andnot_si128(gt, b));
#endif
}

/// @brief All ones in the lane, of lanes first_lane .. first_lane + 3 of an array, whose index is
/// @p at (splat); zero in the others.
inline __m128i lane_is(int first_lane, __m128i at) noexcept {
  return _mm_cmpeq_epi32(_mm_add_epi32(_mm_set1_epi32(first_lane), _mm_set_epi32(3, 2, 1, 0)), at);
}

/// @brief The four biased lanes @p x, lanes first_lane .. first_lane + 3 of an array, with the
/// lane whose index is @p at (splat) replaced by @p value (biased, splat); the others as they are.
/// For a maximum over an array whose entry `at` is about to change, taken before the store: a
/// 16-byte load over a 4-byte store still in the store buffer cannot be forwarded, and waits for
/// the store to reach the cache.
inline __m128i lane_replaced(__m128i x, int first_lane, __m128i at, __m128i value) noexcept {
  __m128i const hit = lane_is(first_lane, at);
  return _mm_or_si128(_mm_andnot_si128(hit, x), _mm_and_si128(hit, value));
}

/// @brief The largest of the four biased lanes of @p m, unbiased.
inline std::uint32_t fold_max(__m128i m) noexcept {
  m = max_biased(m, _mm_shuffle_epi32(m, 0x4E));  // lanes 2 3 0 1
  m = max_biased(m, _mm_shuffle_epi32(m, 0xB1));  // lanes 1 0 3 2
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(m)) ^ bias;
}

}  // namespace rmm::mr::detail::sse2
#endif
