/**
 * @file prefetch.hpp
 * @brief rmm::prefetch: migrate managed memory to a device ahead of its use, on a stream.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <cuda/std/span>

#include <cstddef>

namespace rmm {

/**
 * @brief Prefetches @p size bytes of managed memory at @p ptr to @p device, stream-ordered on
 * @p stream (`cudaMemPrefetchAsync`).
 *
 * The prefetch is a hint that migrates the pages to the device before work on @p stream touches
 * them; it returns without waiting. `cuda_device_id{cudaCpuDeviceId}` prefetches to host memory.
 *
 * This function is a no-op if the memory is not CUDA managed memory (device and pinned memory are
 * recognised with `cudaPointerGetAttributes` and not passed to the runtime; where the runtime
 * still rejects a range with `cudaErrorInvalidValue`, that is cleared and not reported: the same
 * call serves buffers from any resource), if @p size is 0, or if the destination device (the
 * current device when prefetching to the host) does not support concurrent managed access
 * (`cudaDevAttrConcurrentManagedAccess`, e.g. Windows or some virtualised GPUs), where CUDA does
 * not allow prefetching.
 *
 * Memory that the system allocates (malloc) is prefetched as managed memory is on systems where
 * GPUs access pageable memory (HMM, ATS), and ignored elsewhere.
 *
 * Per-thread default stream: @p stream's handle 0 means the default stream of the calling
 * translation unit's mode (see cuda_stream_view), since this function is compiled there.
 *
 * @param ptr The start of the range.
 * @param size The size of the range in bytes.
 * @param device The device to prefetch to.
 * @param stream The stream the prefetch is ordered on.
 * @throws rmm::cuda_error if the prefetch fails for another reason (for example an invalid device
 * or stream); the message names the CUDA error.
 *
 * Thread-safety: thread-safe.
 */
inline void prefetch(void const* ptr,
                     std::size_t size,
                     rmm::cuda_device_id device,
                     rmm::cuda_stream_view stream) {
  if (size == 0) {
    return;
  }
  // Concurrent managed access is required of the destination device, and of the stream's device
  // when prefetching to the host; the current device stands in for the latter.
  auto const is_host     = device.value() == cudaCpuDeviceId;
  auto const attr_device = is_host ? get_current_cuda_device() : device;
  int concurrent_managed = 0;
  RMM_CUDA_TRY(cudaDeviceGetAttribute(
      &concurrent_managed, cudaDevAttrConcurrentManagedAccess, attr_device.value()));
  if (concurrent_managed == 0) {
    return;
  }
  // Ask what the memory is first: prefetching device or pinned memory (or pageable memory where
  // the GPU cannot access it) fails, and a failed call shows up under compute-sanitizer.
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) == cudaSuccess) {
    if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeHost) {
      return;
    }
    if (attributes.type == cudaMemoryTypeUnregistered) {
      int pageable = 0;
      RMM_CUDA_TRY(
          cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, attr_device.value()));
      if (pageable == 0) {
        return;
      }
    }
  } else {
    detail::clear_last_cuda_error();  // unknown: let the prefetch decide, as below
  }
  cudaMemLocation location{};
  location.type            = is_host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  location.id              = is_host ? 0 : device.value();
  constexpr unsigned flags = 0;
  cudaError_t const status = cudaMemPrefetchAsync(ptr, size, location, flags, stream.value());
  if (status == cudaErrorInvalidValue) {
    // Not managed memory: a documented no-op. The error must not surface in a later
    // cudaGetLastError() of unrelated code.
    detail::clear_last_cuda_error();
    return;
  }
  RMM_CUDA_TRY(status);
}

/**
 * @brief Prefetches the memory viewed by @p data to @p device on @p stream: prefetch of
 * `data.data()` and `data.size_bytes()`, with the same no-op cases and errors.
 *
 * @tparam T The element type.
 * @param data The span to prefetch.
 * @param device The device to prefetch to.
 * @param stream The stream the prefetch is ordered on.
 * @throws rmm::cuda_error if the prefetch fails for a reason other than the memory not being
 * managed.
 */
template <typename T>
void prefetch(cuda::std::span<T const> data,
              rmm::cuda_device_id device,
              rmm::cuda_stream_view stream) {
  prefetch(static_cast<void const*>(data.data()), data.size_bytes(), device, stream);
}

}  // namespace rmm
