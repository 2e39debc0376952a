/**
 * @file aligned.hpp
 * @brief Alignment constants and helpers. All functions are constexpr, noexcept and thread-safe.
 */
#pragma once

#include <rmm/detail/cccl_version.hpp>

#include <cstddef>
#include <cstdint>

namespace rmm {

/// @brief Alignment of every allocation made by this library's device resources, in bytes. It is
/// the alignment `cudaMalloc` guarantees.
static constexpr std::size_t CUDA_ALLOCATION_ALIGNMENT{256};

/// @brief Default alignment of host allocations, in bytes.
static constexpr std::size_t RMM_DEFAULT_HOST_ALIGNMENT{alignof(std::max_align_t)};

/// @brief True if @p value is a non-zero power of two.
[[nodiscard]] constexpr bool is_pow2(std::size_t value) noexcept {
  return value != 0 && (value & (value - 1)) == 0;
}

/// @brief True if @p alignment can be requested from a resource: a power of two.
[[nodiscard]] constexpr bool is_supported_alignment(std::size_t alignment) noexcept {
  return is_pow2(alignment);
}

/**
 * @brief Rounds @p value up to a multiple of @p alignment.
 * @pre `is_pow2(alignment)`, and the result is representable in `std::size_t` (no wrap-around
 * check is made here; callers that take untrusted sizes check `value <= SIZE_MAX - alignment`).
 */
[[nodiscard]] constexpr std::size_t align_up(std::size_t value, std::size_t alignment) noexcept {
  return (value + (alignment - 1)) & ~(alignment - 1);
}

/// @brief Rounds @p value down to a multiple of @p alignment. @pre `is_pow2(alignment)`.
[[nodiscard]] constexpr std::size_t align_down(std::size_t value, std::size_t alignment) noexcept {
  return value & ~(alignment - 1);
}

/// @brief True if @p value is a multiple of @p alignment. @pre `is_pow2(alignment)`.
[[nodiscard]] constexpr bool is_aligned(std::size_t value, std::size_t alignment) noexcept {
  return (value & (alignment - 1)) == 0;
}

/// @brief True if @p ptr is a multiple of @p alignment. @pre `is_pow2(alignment)`.
[[nodiscard]] inline bool is_pointer_aligned(
    void* ptr, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
  return is_aligned(reinterpret_cast<std::uintptr_t>(ptr), alignment);
}

}  // namespace rmm
