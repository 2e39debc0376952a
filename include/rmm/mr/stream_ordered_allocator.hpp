/**
 * @file stream_ordered_allocator.hpp
 * @brief The sensor-streaming SDK's stream-ordered allocator: a cuda_async_memory_resource (a
 * CUDA memory pool used through cudaMallocFromPoolAsync / cudaFreeAsync) configured with size
 * strings.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/detail/mechanics/storage_resource.hpp>
#include <rmm/mr/pool_size_strings.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace rmm::mr {

/// @brief The SDK's default release threshold of the stream-ordered allocator: 4 MiB.
inline constexpr std::size_t sdk_default_release_threshold = std::size_t{4} << 20U;

/**
 * @brief The SDK parameters of make_stream_ordered_allocator(). Every member is optional; an
 * absent one takes its default. Size strings follow rmm::parse_memory_size ("512MB", "256 KB",
 * "1.5 GB": powers of 1024, decimals truncated).
 */
struct stream_ordered_allocator_config {
  /// Bytes the pool reserves at construction. Default: sdk_default_initial_pool_size (16 MiB on
  /// x86_64, 8 MiB on aarch64).
  std::optional<std::string> device_memory_initial_size;
  /// The most bytes that may be allocated at once. Default: twice device_memory_initial_size.
  std::optional<std::string> device_memory_max_size;
  /// Bytes of unused memory the pool keeps at a synchronisation before giving the rest back to
  /// the system. Default: sdk_default_release_threshold ("4MB").
  std::optional<std::string> release_threshold;
  /// The device of the pool. Default: the current device.
  std::optional<int> dev_id;
};

/// @brief The sizes a stream_ordered_allocator_config resolves to, in bytes.
struct stream_ordered_allocator_sizes {
  pool_size_range device;         ///< initial size and maximum (multiples of 256)
  std::size_t release_threshold;  ///< as parsed
};

/**
 * @brief The sizes of @p config, without touching CUDA: each string parsed or its default taken;
 * the initial and maximum sizes are rounded up to a multiple of 256 as for the pool pair.
 * @throws rmm::invalid_argument if a size string is malformed or overflows; the message starts
 * with the parameter's name and quotes the text.
 * @throws rmm::logic_error if the maximum is below the initial size, or is 0 (a maximum of 0
 * would refuse every request).
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] inline stream_ordered_allocator_sizes resolve_stream_ordered_allocator_sizes(
    stream_ordered_allocator_config const& config) {
  auto const device = detail::resolve_pool_size_range("device_memory_initial_size",
                                                      config.device_memory_initial_size,
                                                      "device_memory_max_size",
                                                      config.device_memory_max_size);
  RMM_EXPECTS(device.maximum > 0,
              std::string{"device_memory_max_size must not be 0: the allocator would refuse "
                          "every request"});
  std::size_t const threshold =
      config.release_threshold
          ? detail::parse_named_size("release_threshold", *config.release_threshold)
          : sdk_default_release_threshold;
  return {device, threshold};
}

/**
 * @brief A cuda_async_memory_resource configured as the SDK's stream-ordered allocator: a new
 * CUDA memory pool on `dev_id`, primed with device_memory_initial_size, keeping up to
 * release_threshold unused bytes across synchronisations, and limited to device_memory_max_size
 * bytes allocated at once (cuda_async_memory_resource::set_limit(); a request beyond it throws
 * rmm::out_of_memory).
 *
 * Allocation and deallocation are stream-ordered (cudaMallocFromPoolAsync / cudaFreeAsync on the
 * stream given). The pool belongs to `dev_id`: allocate on streams of that device. See
 * cuda_async_memory_resource for the stream semantics, copies and thread-safety (copies share
 * the pool; every member may be called concurrently).
 *
 * @throws rmm::invalid_argument, rmm::logic_error as resolve_stream_ordered_allocator_sizes().
 * @throws rmm::out_of_range if `config.dev_id` is not a visible device.
 * @throws rmm::logic_error if the device does not support memory pools.
 * @throws rmm::out_of_memory if the initial size cannot be reserved.
 */
[[nodiscard]] inline cuda_async_memory_resource make_stream_ordered_allocator(
    stream_ordered_allocator_config const& config = {}) {
  auto const sizes = resolve_stream_ordered_allocator_sizes(config);
  cuda_device_id device{};
  if (config.dev_id) {
    detail::expect_valid_device(*config.dev_id, "make_stream_ordered_allocator");
    device = cuda_device_id{*config.dev_id};
  } else {
    device = get_current_cuda_device();
  }
  cuda_set_device_raii const on_device{device};
  cuda_async_memory_resource mr{sizes.device.initial, sizes.release_threshold};
  mr.set_limit(sizes.device.maximum);
  return mr;
}

}  // namespace rmm::mr
