/**
 * @file sam_headroom.hpp
 * @brief The headroom decision of sam_headroom_memory_resource as a pure function: which leading
 * part of a new system allocation may prefer the GPU without eating into the reserved headroom.
 * No CUDA here, so that the arithmetic is tested on the host.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail {

/// @brief How an allocation [base, base + device_bytes + host_bytes) is split: the first
/// device_bytes prefer the GPU, the remaining host_bytes prefer the host.
struct sam_headroom_split {
  std::size_t device_bytes;  ///< leading bytes whose preferred location is the GPU
  std::size_t host_bytes;    ///< trailing bytes whose preferred location is the host
};

/**
 * @brief Bytes that may still be placed on the GPU: @p free_device_bytes minus @p headroom, or 0
 * if the headroom is at least the free memory. Never overflows.
 */
[[nodiscard]] constexpr std::size_t sam_headroom_allowance(std::size_t free_device_bytes,
                                                           std::size_t headroom) noexcept {
  return free_device_bytes > headroom ? free_device_bytes - headroom : 0;
}

/**
 * @brief Splits the allocation of @p bytes bytes at address @p base so that the part preferring
 * the GPU does not eat into the headroom.
 *
 * - If the whole allocation fits in the allowance (free device memory minus headroom), all of it
 *   prefers the GPU: `{bytes, 0}`.
 * - Otherwise the GPU part is the longest prefix that fits in the allowance and ends on a page
 *   boundary (an address that is a multiple of @p page_size), so that no page straddles the two
 *   parts; it may be 0. The rest prefers the host.
 *
 * The arithmetic never overflows: the page boundary is found modulo @p page_size, which is exact
 * even where `base + allowance` would wrap around (a power of two divides 2^64).
 *
 * @param base Address of the allocation.
 * @param bytes Its size.
 * @param free_device_bytes Free memory of the device, as cudaMemGetInfo reports it.
 * @param headroom Bytes of device memory to keep free for other CUDA calls.
 * @param page_size Host page size. @pre A power of two (1 means no rounding).
 * @return The split; `device_bytes + host_bytes == bytes` always.
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] constexpr sam_headroom_split split_for_headroom(std::uintptr_t base,
                                                              std::size_t bytes,
                                                              std::size_t free_device_bytes,
                                                              std::size_t headroom,
                                                              std::size_t page_size) noexcept {
  std::size_t const allowance = sam_headroom_allowance(free_device_bytes, headroom);
  if (bytes <= allowance) {
    return {bytes, 0};
  }
  // allowance < bytes: cut at the last page boundary at or below base + allowance.
  std::size_t const mask  = page_size == 0 ? 0 : page_size - 1;
  std::size_t const over  = static_cast<std::size_t>(base + allowance) & mask;
  std::size_t const front = over <= allowance ? allowance - over : 0;
  return {front, bytes - front};
}

}  // namespace rmm::mr::detail
