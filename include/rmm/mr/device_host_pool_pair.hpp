/**
 * @file device_host_pool_pair.hpp
 * @brief A device memory pool and a pinned host memory pool configured together with size
 * strings: the sensor-streaming SDK's RMM allocator, for code that needs both kinds of memory
 * from one allocator.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/detail/mechanics/on_device_resource.hpp>
#include <rmm/mr/detail/mechanics/storage_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/pool_size_strings.hpp>
#include <rmm/mr/storage_type.hpp>

#include <cuda/stream_ref>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief The SDK parameters of device_host_pool_pair. Every member is optional; an absent one
 * takes its default. Size strings follow rmm::parse_memory_size ("512MB", "256 KB", "1.5 GB":
 * powers of 1024, decimals truncated).
 */
struct device_host_pool_config {
  /// Initial size of the device pool. Default: sdk_default_initial_pool_size (16 MiB on x86_64,
  /// 8 MiB on aarch64).
  std::optional<std::string> device_memory_initial_size;
  /// Maximum size of the device pool. Default: twice device_memory_initial_size.
  std::optional<std::string> device_memory_max_size;
  /// Initial size of the pinned host pool. Default: as device_memory_initial_size.
  std::optional<std::string> host_memory_initial_size;
  /// Maximum size of the pinned host pool. Default: twice host_memory_initial_size.
  std::optional<std::string> host_memory_max_size;
  /// The device on which the pools are created. Default: the current device.
  std::optional<int> dev_id;
};

/// @brief The sizes a device_host_pool_config resolves to, in bytes (multiples of 256).
struct device_host_pool_sizes {
  pool_size_range device;  ///< initial and maximum size of the device pool
  pool_size_range host;    ///< initial and maximum size of the pinned host pool
};

/**
 * @brief The pool sizes of @p config, without touching CUDA: each string parsed (or its default
 * taken, see device_host_pool_config), then rounded up to a multiple of 256 bytes because
 * pool_memory_resource requires that ("1000B" becomes 1024 bytes).
 * @throws rmm::invalid_argument if a size string is malformed or overflows; the message starts
 * with the parameter's name and quotes the text.
 * @throws rmm::logic_error if a maximum is below its initial size (the message names both
 * parameters and values).
 * @note Thread-safety: a pure function; safe to call concurrently.
 */
[[nodiscard]] inline device_host_pool_sizes resolve_device_host_pool_sizes(
    device_host_pool_config const& config) {
  return {detail::resolve_pool_size_range("device_memory_initial_size",
                                          config.device_memory_initial_size,
                                          "device_memory_max_size",
                                          config.device_memory_max_size),
          detail::resolve_pool_size_range("host_memory_initial_size",
                                          config.host_memory_initial_size,
                                          "host_memory_max_size",
                                          config.host_memory_max_size)};
}

/**
 * @brief Two pool_memory_resource instances made together: a device pool over
 * cuda_memory_resource and a pinned host pool over pinned_host_memory_resource, both on one
 * device, sized by SDK-style size strings (the SDK's RMM allocator).
 *
 * Each pool starts at its initial size and grows on demand up to its maximum, a hard cap: a
 * request that would take a pool past it throws rmm::out_of_memory (pool_memory_resource's
 * report). Both pools make `dev_id` current while they allocate from or free to their upstream,
 * so that they grow on that device whichever device is current; allocate() and deallocate() here
 * also make it current around the pool call. Use streams of that device.
 *
 * The host pool's memory is pinned host memory and so host accessible, but, like every
 * pool_memory_resource, the pool declares only the device_accessible property.
 *
 * Stream semantics and thread-safety are those of pool_memory_resource: all member functions
 * may be called concurrently. Copies share both pools and compare equal.
 */
class device_host_pool_pair {
 public:
  /**
   * @brief Creates both pools as @p config says (see resolve_device_host_pool_sizes()).
   * @throws rmm::invalid_argument, rmm::logic_error as resolve_device_host_pool_sizes().
   * @throws rmm::out_of_range if `config.dev_id` is not a visible device.
   * @throws rmm::out_of_memory if an initial pool cannot be allocated.
   */
  explicit device_host_pool_pair(device_host_pool_config const& config = {})
      : device_host_pool_pair{make_parts(config)} {}

  /**
   * @brief Allocates @p bytes from the pool for @p storage on @p stream.
   * @throws rmm::logic_error if @p storage is storage_type::system (this pair holds device and
   * pinned host pools only) or not an enumerator, or as pool_memory_resource::allocate.
   * @throws rmm::out_of_memory if the pool cannot serve the request within its maximum.
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 storage_type storage,
                 std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    cuda_set_device_raii const on_device{device_};
    return pool_for(storage).allocate(stream, bytes, alignment);
  }

  /**
   * @brief Frees @p ptr, which allocate() returned for the same @p bytes and @p storage. A
   * @p storage that allocate() refuses is logged at error level and ignored.
   */
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  storage_type storage,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    try {
      cuda_set_device_raii const on_device{device_};
      pool_for(storage).deallocate(stream, ptr, bytes, alignment);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error,
               std::string{"device_host_pool_pair: deallocate ignored: "} + e.what());
    }
  }

  /// @brief The device pool (a copy that shares it).
  [[nodiscard]] pool_memory_resource device_memory_resource() const { return device_pool_; }

  /// @brief The pinned host pool (a copy that shares it).
  [[nodiscard]] pool_memory_resource host_memory_resource() const { return host_pool_; }

  /// @brief The device the pools were created on.
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// @brief The sizes the configuration resolved to.
  [[nodiscard]] device_host_pool_sizes sizes() const noexcept { return sizes_; }

  /// @brief Copies share both pools. @return true if @p other shares this pair's pools.
  friend bool operator==(device_host_pool_pair const& a, device_host_pool_pair const& b) noexcept {
    return a.device_pool_ == b.device_pool_ && a.host_pool_ == b.host_pool_;
  }
  /// @brief Negation of ==.
  friend bool operator!=(device_host_pool_pair const& a, device_host_pool_pair const& b) noexcept {
    return !(a == b);
  }

 private:
  static constexpr char const* name = "device_host_pool_pair";

  struct parts {
    device_host_pool_sizes sizes;
    cuda_device_id device;
    pool_memory_resource device_pool;
    pool_memory_resource host_pool;
  };

  explicit device_host_pool_pair(parts&& p)
      : sizes_{p.sizes},
        device_{p.device},
        device_pool_{std::move(p.device_pool)},
        host_pool_{std::move(p.host_pool)} {}

  static parts make_parts(device_host_pool_config const& config) {
    auto const sizes = resolve_device_host_pool_sizes(config);
    cuda_device_id device{};
    if (config.dev_id) {
      detail::expect_valid_device(*config.dev_id, name);
      device = cuda_device_id{*config.dev_id};
    } else {
      device = get_current_cuda_device();
    }
    cuda_set_device_raii const on_device{device};
    return parts{sizes,
                 device,
                 pool_memory_resource{detail::on_device_resource<cuda_memory_resource>{
                                          cuda_memory_resource{}, device},
                                      sizes.device.initial,
                                      sizes.device.maximum},
                 pool_memory_resource{detail::on_device_resource<pinned_host_memory_resource>{
                                          pinned_host_memory_resource{}, device},
                                      sizes.host.initial,
                                      sizes.host.maximum}};
  }

  pool_memory_resource& pool_for(storage_type storage) {
    switch (storage) {
      case storage_type::device:
        return device_pool_;
      case storage_type::pinned_host:
        return host_pool_;
      case storage_type::system:
        break;
    }
    RMM_FAIL(std::string{name} + ": storage_type " + storage_type_name(storage) +
             " is not served: the pair holds a device pool and a pinned_host pool");
  }

  device_host_pool_sizes sizes_;
  cuda_device_id device_;
  pool_memory_resource device_pool_;
  pool_memory_resource host_pool_;
};

}  // namespace rmm::mr
