/**
 * @file cuda_device.hpp
 * @brief Strongly typed device ids and queries on the current device.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

namespace rmm {

/**
 * @brief Strong type for a CUDA device id, so that a device is never confused with a count or an
 * index of something else. A value type; thread-safe.
 */
struct cuda_device_id {
  /// @brief The underlying integer type.
  using value_type = int;

  /// @brief Device 0.
  constexpr cuda_device_id() noexcept = default;

  /// @brief Wraps device id @p dev_id. No range check is made here.
  constexpr explicit cuda_device_id(value_type dev_id) noexcept : id_{dev_id} {}

  /// @brief The wrapped id.
  [[nodiscard]] constexpr value_type value() const noexcept { return id_; }

  /// @name Comparisons by value
  ///@{
  [[nodiscard]] constexpr friend bool operator==(cuda_device_id a, cuda_device_id b) noexcept {
    return a.value() == b.value();
  }
  [[nodiscard]] constexpr friend bool operator!=(cuda_device_id a, cuda_device_id b) noexcept {
    return !(a == b);
  }
  [[nodiscard]] constexpr friend bool operator<(cuda_device_id a, cuda_device_id b) noexcept {
    return a.value() < b.value();
  }
  ///@}

 private:
  value_type id_{};
};

/**
 * @brief The device current on the calling thread (`cudaGetDevice`).
 * @throws rmm::cuda_error if CUDA cannot report it (for example no device or no driver).
 */
[[nodiscard]] inline cuda_device_id get_current_cuda_device() {
  cuda_device_id::value_type dev_id{-1};
  RMM_CUDA_TRY(cudaGetDevice(&dev_id));
  return cuda_device_id{dev_id};
}

/**
 * @brief The number of CUDA devices visible to the process; 0 where there is no device or no
 * driver (the runtime's error is cleared, not thrown). Thread-safe.
 */
[[nodiscard]] inline int get_num_cuda_devices() noexcept {
  int count{0};
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    detail::clear_last_cuda_error();
    return 0;
  }
  return count;
}

/**
 * @brief Free and total memory of the current device, in bytes (`cudaMemGetInfo`).
 * @throws rmm::cuda_error if CUDA cannot report them.
 */
[[nodiscard]] inline std::pair<std::size_t, std::size_t> available_device_memory() {
  std::size_t free{};
  std::size_t total{};
  RMM_CUDA_TRY(cudaMemGetInfo(&free, &total));
  return {free, total};
}

/**
 * @brief @p percent percent of the current device's free memory, rounded down to a multiple of
 * CUDA_ALLOCATION_ALIGNMENT.
 * @throws rmm::out_of_range if @p percent is not in [0, 100] (the message names it).
 * @throws rmm::cuda_error if CUDA cannot report the free memory.
 */
[[nodiscard]] inline std::size_t percent_of_free_device_memory(int percent) {
  RMM_EXPECTS(percent >= 0 && percent <= 100,
              "percent must be in [0, 100], got " + std::to_string(percent),
              rmm::out_of_range);
  auto const free = available_device_memory().first;
  // Divide first: free * percent could overflow for very large memories only in theory, but the
  // order costs nothing and keeps the arithmetic obviously safe.
  auto const share = (free / 100) * static_cast<std::size_t>(percent) +
                     (free % 100) * static_cast<std::size_t>(percent) / 100;
  return align_down(share, CUDA_ALLOCATION_ALIGNMENT);
}

/**
 * @brief Makes a device current for the lifetime of this object and restores the previously
 * current device on destruction. Does nothing if the device is already current.
 *
 * Not copyable or movable. Thread-safety: affects the calling thread only.
 */
struct cuda_set_device_raii {
  /**
   * @brief Makes @p dev_id current, remembering the current device.
   * @throws rmm::cuda_error if either device cannot be queried or set.
   */
  explicit cuda_set_device_raii(cuda_device_id dev_id)
      : old_device_{get_current_cuda_device()}, needs_reset_{old_device_ != dev_id} {
    if (needs_reset_) {
      RMM_CUDA_TRY(cudaSetDevice(dev_id.value()));
    }
  }

  /// @brief Restores the previously current device.
  ~cuda_set_device_raii() noexcept {
    if (needs_reset_) {
      RMM_ASSERT_CUDA_SUCCESS(cudaSetDevice(old_device_.value()));
    }
  }

  cuda_set_device_raii(cuda_set_device_raii const&)            = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii const&) = delete;
  cuda_set_device_raii(cuda_set_device_raii&&)                 = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii&&)      = delete;

 private:
  cuda_device_id old_device_;
  bool needs_reset_;
};

}  // namespace rmm
