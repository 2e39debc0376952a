// Device-side checks used by the GPU tests. Implemented in device_kernels.cu so that the test
// sources themselves compile with the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define RMM_TEST_HOST_DEVICE __host__ __device__
#else
#define RMM_TEST_HOST_DEVICE
#endif

namespace rmm::test {

/// @brief Byte @p index of the pattern for @p seed (the same function on host and device).
RMM_TEST_HOST_DEVICE constexpr std::uint8_t pattern_byte(std::uint32_t seed,
                                                         std::size_t index) noexcept {
  auto const mixed = static_cast<std::uint32_t>(index) * 2654435761U ^ (seed * 0x9E3779B1U) ^
                     static_cast<std::uint32_t>(index >> 32);
  return static_cast<std::uint8_t>(mixed >> 24);
}

/// @brief Launches a kernel on @p stream that writes the pattern of @p seed into @p bytes bytes.
void fill_pattern(void* ptr, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);

/**
 * @brief Like fill_pattern, but the kernel first spins for about @p spin_ns nanoseconds: work that
 * is still running when the host moves on, to expose missing stream ordering.
 */
void fill_pattern_after_delay(
    void* ptr, std::size_t bytes, std::uint32_t seed, std::uint64_t spin_ns, cudaStream_t stream);

/// @brief Counts, in a kernel on @p stream, the bytes that differ from the pattern of @p seed;
/// synchronises @p stream and returns the count. Throws rmm::cuda_error on CUDA failure.
std::size_t count_pattern_mismatches(void const* ptr,
                                     std::size_t bytes,
                                     std::uint32_t seed,
                                     cudaStream_t stream);

/// @brief Writes the pattern of @p seed into @p bytes bytes on @p stream, then counts the bytes
/// that differ from it there (count_pattern_mismatches): 0 unless other work wrote them meanwhile.
inline std::size_t fill_and_count_mismatches(void* ptr,
                                             std::size_t bytes,
                                             std::uint32_t seed,
                                             cudaStream_t stream) {
  fill_pattern(ptr, bytes, seed, stream);
  return count_pattern_mismatches(ptr, bytes, seed, stream);
}

/// @brief Counts on the host the bytes of host-accessible memory that differ from the pattern.
std::size_t count_pattern_mismatches_host(void const* ptr, std::size_t bytes, std::uint32_t seed);

/// @brief Writes the pattern of @p seed on the host into @p bytes bytes of host-accessible memory.
void fill_pattern_host(void* ptr, std::size_t bytes, std::uint32_t seed);

}  // namespace rmm::test
