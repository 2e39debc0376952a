/**
 * @file detail/container_device_guard.hpp
 * @brief Internals of the containers (device_buffer, device_uvector, device_scalar): switching to
 * the device that owns an allocation for the duration of one operation.
 *
 * Thread-safety: the guards affect the calling thread's current device only.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

namespace rmm::detail {

/**
 * @brief Makes @p device current for the guard's lifetime if it is a real device (id >= 0) and
 * not already current; restores the previous device afterwards. Never throws.
 *
 * The containers free memory in destructors and move assignments, which are noexcept; a device
 * switch that fails there cannot be reported, and the free is then attempted on the current
 * device (what the resource does with a pointer of another device is its own affair). A negative
 * id (a moved-from container, which owns nothing) switches nothing.
 */
class device_guard_noexcept {
 public:
  explicit device_guard_noexcept(cuda_device_id device) noexcept {
    if (device.value() < 0) {
      return;
    }
    int current{-1};
    if (cudaGetDevice(&current) != cudaSuccess) {
      clear_last_cuda_error();
      return;
    }
    if (current != device.value()) {
      if (cudaSetDevice(device.value()) == cudaSuccess) {
        previous_ = current;
      } else {
        clear_last_cuda_error();
      }
    }
  }

  ~device_guard_noexcept() noexcept {
    if (previous_ >= 0) {
      RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaSetDevice(previous_));
    }
  }

  device_guard_noexcept(device_guard_noexcept const&)            = delete;
  device_guard_noexcept& operator=(device_guard_noexcept const&) = delete;
  device_guard_noexcept(device_guard_noexcept&&)                 = delete;
  device_guard_noexcept& operator=(device_guard_noexcept&&)      = delete;

 private:
  int previous_{-1};  ///< The device to restore, or -1 where nothing was switched.
};

}  // namespace rmm::detail
