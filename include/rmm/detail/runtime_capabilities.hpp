/**
 * @file detail/runtime_capabilities.hpp
 * @brief What the CUDA driver, runtime and device in use support, asked at run time: the queries
 * RMM offers here (runtime_async_alloc, export_handle_type, hwdecompress,
 * concurrent_managed_access, runtime_async_managed_alloc, device_integrated_memory), each a struct
 * with a static `is_supported()`.
 *
 * Differences from RMM (docs/compatibility.md): answers about a device are cached per device
 * rather than once per process for whichever device was current first; every query is noexcept
 * and answers false when CUDA cannot be asked (no device, no driver), where RMM throws; each
 * device query also has an overload taking the device.
 *
 * Thread-safety: every function may be called concurrently. The caches are lock-free: two
 * threads that miss at once both ask CUDA and store the same answer.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>

/// @brief The CUDA driver (and runtime) version from which pools accept
/// `cudaMemPoolCreateUsageHwDecompress` (12.8).
#define RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION 12080

/// @brief The CUDA driver and runtime version from which stream-ordered pools of managed memory
/// exist (13.0).
#define RMM_MIN_ASYNC_MANAGED_ALLOC_CUDA_VERSION 13000

namespace rmm::detail {

/// @brief The device current on the calling thread, or nothing if CUDA cannot say (the error is
/// cleared).
[[nodiscard]] inline std::optional<int> current_device_or_none() noexcept {
  int device{-1};
  if (cudaGetDevice(&device) != cudaSuccess) {
    clear_last_cuda_error();
    return std::nullopt;
  }
  return device;
}

/// @brief `cudaDeviceGetAttribute(attr, device)`, or nothing if it fails (the error is cleared).
[[nodiscard]] inline std::optional<int> device_attribute_or_none(cudaDeviceAttr attr,
                                                                 int device) noexcept {
  int value{0};
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    clear_last_cuda_error();
    return std::nullopt;
  }
  return value;
}

/// @brief `cudaDriverGetVersion`, or 0 if it fails (0 is also what it reports without a driver).
[[nodiscard]] inline int cuda_driver_version() noexcept {
  int version{0};
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    clear_last_cuda_error();
    return 0;
  }
  return version;
}

/// @brief `cudaRuntimeGetVersion`, or 0 if it fails.
[[nodiscard]] inline int cuda_runtime_version() noexcept {
  int version{0};
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
    clear_last_cuda_error();
    return 0;
  }
  return version;
}

/**
 * @brief A yes/no answer per device, computed on first use by `Query::compute(device)` (which
 * returns std::optional<bool>: nothing when CUDA could not be asked, which is not cached so that
 * a later call asks again). Devices beyond the first `max_cached_devices` are asked every time.
 * One cache per Query type.
 */
template <typename Query>
class per_device_answer {
 public:
  /// @brief How many device ids the cache holds.
  static constexpr int max_cached_devices = 128;

  /// @brief The answer for @p device; false when CUDA cannot be asked.
  [[nodiscard]] static bool get(int device) noexcept {
    if (device < 0) {
      return false;
    }
    if (device >= max_cached_devices) {
      return Query::compute(device).value_or(false);
    }
    auto& slot        = slots()[static_cast<std::size_t>(device)];
    auto const cached = slot.load(std::memory_order_acquire);
    if (cached != unknown) {
      return cached == yes;
    }
    std::optional<bool> const answer = Query::compute(device);
    if (!answer.has_value()) {
      return false;
    }
    slot.store(*answer ? yes : no, std::memory_order_release);
    return *answer;
  }

 private:
  static constexpr signed char unknown = 0;
  static constexpr signed char no      = 1;
  static constexpr signed char yes     = 2;

  static std::array<std::atomic<signed char>, max_cached_devices>& slots() noexcept {
    static std::array<std::atomic<signed char>, max_cached_devices> table{};  // all unknown
    return table;
  }
};

/// @brief The answer of `Query` for the current device; false when there is none.
template <typename Query>
[[nodiscard]] bool answer_for_current_device() noexcept {
  std::optional<int> const device = current_device_or_none();
  return device.has_value() && per_device_answer<Query>::get(*device);
}

/**
 * @brief Whether the device supports the stream-ordered allocator (cudaMallocAsync and memory
 * pools, cudaDevAttrMemoryPoolsSupported). Cached per device.
 */
struct runtime_async_alloc {
  /// @brief For the current device; false if there is none.
  [[nodiscard]] static bool is_supported() noexcept {
    return answer_for_current_device<runtime_async_alloc>();
  }
  /// @brief For @p device; false if CUDA cannot be asked about it.
  [[nodiscard]] static bool is_supported(cuda_device_id device) noexcept {
    return per_device_answer<runtime_async_alloc>::get(device.value());
  }
  /// @brief The uncached query (used by the cache).
  [[nodiscard]] static std::optional<bool> compute(int device) noexcept {
    auto const value = device_attribute_or_none(cudaDevAttrMemoryPoolsSupported, device);
    return value.has_value() ? std::optional<bool>{*value == 1} : std::nullopt;
  }
};

/**
 * @brief Whether memory pools on the device can export allocations through a handle type
 * (cudaDevAttrMemoryPoolSupportedHandleTypes). `cudaMemHandleTypeNone` is always supported.
 * Not cached (as in RMM): the attribute is cheap to read.
 */
struct export_handle_type {
  /// @brief For the current device: true if every bit of @p handle_type is supported; false if
  /// not, or if CUDA cannot be asked.
  [[nodiscard]] static bool is_supported(cudaMemAllocationHandleType handle_type) noexcept {
    if (handle_type == cudaMemHandleTypeNone) {
      return true;
    }
    std::optional<int> const device = current_device_or_none();
    return device.has_value() && is_supported(handle_type, cuda_device_id{*device});
  }
  /// @brief For @p device, as above.
  [[nodiscard]] static bool is_supported(cudaMemAllocationHandleType handle_type,
                                         cuda_device_id device) noexcept {
    auto const requested = static_cast<int>(handle_type);
    if (requested == 0) {
      return true;
    }
    auto const mask =
        device_attribute_or_none(cudaDevAttrMemoryPoolSupportedHandleTypes, device.value());
    return mask.has_value() && (*mask & requested) == requested;
  }
};

/**
 * @brief Whether pools accept `cudaMemPoolCreateUsageHwDecompress` in their usage: this library
 * was compiled against CUDA 12.8 or later and the driver is 12.8 or later. It says nothing of
 * whether the device has a decompression engine (the driver accepts the flag either way).
 * Cached for the process (the driver does not change).
 */
struct hwdecompress {
  /// @brief See the struct.
  [[nodiscard]] static bool is_supported() noexcept {
#if defined(CUDART_VERSION) && CUDART_VERSION >= RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION
    static bool const supported = cuda_driver_version() >= RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION;
    return supported;
#else
    return false;
#endif
  }
};

/**
 * @brief Whether the device can access managed memory concurrently with the host
 * (cudaDevAttrConcurrentManagedAccess), which prefetching and managed memory pools need. Cached
 * per device.
 */
struct concurrent_managed_access {
  /// @brief For the current device; false if there is none.
  [[nodiscard]] static bool is_supported() noexcept {
    return answer_for_current_device<concurrent_managed_access>();
  }
  /// @brief For @p device; false if CUDA cannot be asked about it.
  [[nodiscard]] static bool is_supported(cuda_device_id device) noexcept {
    return per_device_answer<concurrent_managed_access>::get(device.value());
  }
  /// @brief The uncached query (used by the cache).
  [[nodiscard]] static std::optional<bool> compute(int device) noexcept {
    auto const value = device_attribute_or_none(cudaDevAttrConcurrentManagedAccess, device);
    return value.has_value() ? std::optional<bool>{*value == 1} : std::nullopt;
  }
};

/**
 * @brief Whether stream-ordered pools of managed memory can be used on the device: it supports
 * concurrent managed access, and both the driver and the runtime are CUDA 13.0 or later. Cached
 * per device.
 */
struct runtime_async_managed_alloc {
  /// @brief For the current device; false if there is none.
  [[nodiscard]] static bool is_supported() noexcept {
    return answer_for_current_device<runtime_async_managed_alloc>();
  }
  /// @brief For @p device; false if CUDA cannot be asked about it.
  [[nodiscard]] static bool is_supported(cuda_device_id device) noexcept {
    return per_device_answer<runtime_async_managed_alloc>::get(device.value());
  }
  /// @brief The uncached query (used by the cache).
  [[nodiscard]] static std::optional<bool> compute(int device) noexcept {
    std::optional<bool> const managed = concurrent_managed_access::compute(device);
    if (!managed.has_value()) {
      return std::nullopt;
    }
    return *managed && cuda_driver_version() >= RMM_MIN_ASYNC_MANAGED_ALLOC_CUDA_VERSION &&
           cuda_runtime_version() >= RMM_MIN_ASYNC_MANAGED_ALLOC_CUDA_VERSION;
  }
};

/**
 * @brief Whether the device is integrated with host memory (cudaDevAttrIntegrated: 1 for the
 * GPUs of Tegra / Jetson-class systems, 0 for discrete GPUs). Cached per device.
 */
struct device_integrated_memory {
  /// @brief For the current device; false if there is none.
  [[nodiscard]] static bool is_supported() noexcept {
    return answer_for_current_device<device_integrated_memory>();
  }
  /// @brief For @p device; false if CUDA cannot be asked about it.
  [[nodiscard]] static bool is_supported(cuda_device_id device) noexcept {
    return per_device_answer<device_integrated_memory>::get(device.value());
  }
  /// @brief The uncached query (used by the cache).
  [[nodiscard]] static std::optional<bool> compute(int device) noexcept {
    auto const value = device_attribute_or_none(cudaDevAttrIntegrated, device);
    return value.has_value() ? std::optional<bool>{*value == 1} : std::nullopt;
  }
};

}  // namespace rmm::detail
