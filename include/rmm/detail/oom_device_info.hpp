/**
 * @file oom_device_info.hpp
 * @brief Fills the device fields of an out_of_memory_report (the device, its free and total
 * memory) without throwing, for the resources and for RMM_CUDA_TRY_ALLOC.
 *
 * Thread-safety: the function may be called concurrently (it changes the calling thread's
 * current device only for the duration of the query, and clears the calling thread's CUDA error
 * slot).
 */
#pragma once

#include <rmm/out_of_memory_report.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::detail {

/**
 * @brief Sets @p report's `device` to @p device (the current device when negative) and its free
 * and total memory to what cudaMemGetInfo reports for that device.
 *
 * Never throws: where the device cannot be named (no device, no driver) the fields stay empty;
 * where its memory cannot be read, only `device` is set. The non-sticky CUDA error that a failed
 * query leaves is cleared, and the caller's current device is restored.
 */
inline void add_device_memory(out_of_memory_report& report, int device = -1) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    current = -1;
  }
  int const dev = device >= 0 ? device : current;
  if (dev < 0) {
    return;
  }
  report.device           = dev;
  bool const other_device = dev != current;
  if (other_device && cudaSetDevice(dev) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return;
  }
  std::size_t free_bytes  = 0;
  std::size_t total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    report.device_free_bytes  = free_bytes;
    report.device_total_bytes = total_bytes;
  }
  static_cast<void>(cudaGetLastError());
  if (other_device && current >= 0) {
    static_cast<void>(cudaSetDevice(current));
    static_cast<void>(cudaGetLastError());
  }
}

}  // namespace rmm::detail
