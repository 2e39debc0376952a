/**
 * @file block_pool_layout.hpp
 * @brief The arithmetic and the messages of block_memory_pool_resource, without CUDA, so that
 * they are tested on the host: the layout of the one upstream allocation (blocks are spaced by
 * the block size rounded up to 256 bytes) and the reports of the two refusals.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cstddef>
#include <limits>
#include <string>

namespace rmm::mr::detail {

/// @brief Where the blocks of a block pool lie in its single allocation.
struct block_pool_layout {
  std::size_t block_size;   ///< the largest request a block serves (as given)
  std::size_t stride;       ///< distance between blocks: block_size rounded up to 256
  std::size_t num_blocks;   ///< number of blocks
  std::size_t total_bytes;  ///< stride * num_blocks: the size of the one allocation
};

/**
 * @brief The layout of @p num_blocks blocks of @p block_size bytes. Every block starts at a
 * multiple of CUDA_ALLOCATION_ALIGNMENT from the base, so that each is 256-byte aligned.
 * @throws rmm::logic_error naming @p name and the values if @p block_size or @p num_blocks is 0,
 * or if the rounded block size or the total size does not fit in std::size_t.
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] inline block_pool_layout make_block_pool_layout(char const* name,
                                                              std::size_t block_size,
                                                              std::size_t num_blocks) {
  RMM_EXPECTS(block_size > 0, std::string{name} + ": block_size must not be 0");
  RMM_EXPECTS(num_blocks > 0, std::string{name} + ": num_blocks must not be 0");
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  RMM_EXPECTS(block_size <= max - (CUDA_ALLOCATION_ALIGNMENT - 1),
              std::string{name} + ": block_size " + std::to_string(block_size) + " is too large");
  std::size_t const stride = align_up(block_size, CUDA_ALLOCATION_ALIGNMENT);
  RMM_EXPECTS(num_blocks <= max / stride,
              std::string{name} + ": num_blocks " + std::to_string(num_blocks) + " times " +
                  std::to_string(stride) + " bytes per block overflows");
  return {block_size, stride, num_blocks, stride * num_blocks};
}

/**
 * @brief The report of a request of @p requested bytes above the block size: the resource
 * @p name, the request and the reason; the pool adds its figures, the device and the stream.
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] inline out_of_memory_report block_too_large_report(char const* name,
                                                                 std::size_t requested,
                                                                 std::size_t block_size) {
  out_of_memory_report report;
  report.resource        = name;
  report.requested_bytes = requested;
  report.reason = "the request exceeds the block size of " + std::to_string(block_size) + " bytes";
  return report;
}

/**
 * @brief The report of a request of @p requested bytes when every block is in use: the resource
 * @p name, the request and the reason; the pool adds its figures, the device and the stream.
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] inline out_of_memory_report blocks_exhausted_report(char const* name,
                                                                  std::size_t requested,
                                                                  std::size_t num_blocks,
                                                                  std::size_t block_size) {
  out_of_memory_report report;
  report.resource        = name;
  report.requested_bytes = requested;
  report.reason = "all " + std::to_string(num_blocks) + " blocks of " + std::to_string(block_size) +
                  " bytes are in use (the pool has a fixed capacity)";
  return report;
}

}  // namespace rmm::mr::detail
