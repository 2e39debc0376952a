/**
 * @file device_binding.hpp
 * @brief The device a resource was made on: the debug check of every call against it, and the
 * device switch around the resource's teardown.
 *
 * The rule (docs/multi-gpu.md): a resource that holds device memory or CUDA events serves the
 * device that was current when it was constructed, and must be called only while that device is
 * current, on streams of that device. Builds with RMM_CHECK_DEVICE=1 (the default where NDEBUG is
 * not defined) check every allocate and deallocate: a wrong device on allocate throws
 * rmm::logic_error naming both devices; on deallocate (noexcept) the same message is written to
 * stderr and the process aborts, because a free on the wrong device cannot be undone or reported
 * otherwise. Release builds (RMM_CHECK_DEVICE=0) make no check and pay nothing; a call on another
 * device is then undefined behaviour (in practice: a pool grows with the other device's memory,
 * or an event of one device is recorded on another device's stream and CUDA refuses it).
 *
 * Destructors are exempt from the rule: a resource is destroyed with its own device current,
 * whichever device the destroying thread has current, and the thread's device is restored.
 */
#pragma once

#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#ifndef RMM_CHECK_DEVICE
#ifdef NDEBUG
#define RMM_CHECK_DEVICE 0
#else
#define RMM_CHECK_DEVICE 1
#endif
#endif

namespace rmm::mr::detail {

/// @brief The calling thread's current device, or -1 where CUDA cannot say (no device or no
/// driver); the runtime's error is cleared. Never throws.
[[nodiscard]] inline int current_device_or_none() noexcept {
  int device{-1};
  if (cudaGetDevice(&device) != cudaSuccess) {
    rmm::detail::clear_last_cuda_error();
    return -1;
  }
  return device;
}

/// @brief The device @p stream belongs to (the current device for the default streams), or
/// @p fallback where CUDA cannot say. Never throws.
[[nodiscard]] inline int stream_device_or(cudaStream_t stream, int fallback) noexcept {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    return fallback;
  }
  int device{-1};
  if (cudaStreamGetDevice(stream, &device) != cudaSuccess) {
    rmm::detail::clear_last_cuda_error();
    return fallback;
  }
  return device;
}

/// @brief "rmm::mr::NAME::CALL: made on device A, but device B is current" and the remedy.
[[nodiscard]] inline std::string device_mismatch_message(char const* resource,
                                                         char const* call,
                                                         int owner,
                                                         int current,
                                                         cudaStream_t stream,
                                                         int stream_device) {
  std::ostringstream out;
  out << "rmm::mr::" << resource << "::" << call << ": the resource was made on device " << owner;
  if (current != owner) {
    out << ", but device " << current << " is current";
  } else {
    out << ", but stream " << static_cast<void const*>(stream) << " belongs to device "
        << stream_device;
  }
  out << ". A resource serves only the device current at its construction: call it with device "
      << owner << " current (rmm::cuda_set_device_raii) and on a stream of device " << owner
      << ", or use the resource made for device " << current
      << " (rmm::mr::get_per_device_resource_ref)";
  return out.str();
}

/**
 * @brief In checked builds (RMM_CHECK_DEVICE), throws rmm::logic_error naming both devices if
 * @p owner (>= 0) is not the current device or @p stream belongs to another device. A negative
 * @p owner is never checked. No-op in release builds.
 */
inline void check_device([[maybe_unused]] int owner,
                         [[maybe_unused]] char const* resource,
                         [[maybe_unused]] char const* call,
                         [[maybe_unused]] cudaStream_t stream) {
#if RMM_CHECK_DEVICE
  if (owner < 0) {
    return;
  }
  int const current = current_device_or_none();
  int const on      = stream_device_or(stream, current);
  if (current != owner || on != owner) {
    throw rmm::logic_error(device_mismatch_message(resource, call, owner, current, stream, on));
  }
#endif
}

/**
 * @brief check_device() for noexcept calls (deallocate): in checked builds a mismatch writes the
 * message to stderr and aborts the process. No-op in release builds.
 */
inline void check_device_noexcept([[maybe_unused]] int owner,
                                  [[maybe_unused]] char const* resource,
                                  [[maybe_unused]] char const* call,
                                  [[maybe_unused]] cudaStream_t stream) noexcept {
#if RMM_CHECK_DEVICE
  try {
    check_device(owner, resource, call, stream);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "rmm: fatal: %s\n", e.what());
    std::fflush(stderr);
    std::abort();
  }
#endif
}

/**
 * @brief The device current at a resource state's construction (-1 where there was none, for
 * example over the simulated upstream on a machine without a GPU: such a state is never checked),
 * its checks, and the device switch for teardown.
 *
 * Make it the state's FIRST base class so that it is constructed before, and destroyed after,
 * everything that holds device memory or events; call enter_for_teardown() at the start of the
 * state's destructor. Not copyable (states are not). Thread-safety: the checks read only the
 * recorded device; teardown happens on one thread.
 */
class device_binding {
 public:
  /// @brief Records the calling thread's current device.
  device_binding() noexcept : bound_device_{current_device_or_none()} {}

  device_binding(device_binding const&)            = delete;
  device_binding& operator=(device_binding const&) = delete;
  device_binding(device_binding&&)                 = delete;
  device_binding& operator=(device_binding&&)      = delete;

  /// @brief Restores the device that was current before enter_for_teardown() switched.
  ~device_binding() {
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) {
      rmm::detail::clear_last_cuda_error();
    }
  }

  /// @brief The recorded device, or -1.
  [[nodiscard]] int bound_device() const noexcept { return bound_device_; }

  /// @brief check_device() against the recorded device.
  void expect_bound_device(char const* resource, char const* call, cudaStream_t stream) const {
    check_device(bound_device_, resource, call, stream);
  }

  /// @brief check_device_noexcept() against the recorded device.
  void expect_bound_device_noexcept(char const* resource,
                                    char const* call,
                                    cudaStream_t stream) const noexcept {
    check_device_noexcept(bound_device_, resource, call, stream);
  }

  /**
   * @brief Makes the recorded device current for the rest of the owner's destruction (restored by
   * this base's destructor, which runs last). Never throws; a failed switch is ignored.
   */
  void enter_for_teardown() noexcept {
    if (bound_device_ < 0) {
      return;
    }
    int const current = current_device_or_none();
    if (current >= 0 && current != bound_device_) {
      if (cudaSetDevice(bound_device_) == cudaSuccess) {
        previous_ = current;
      } else {
        rmm::detail::clear_last_cuda_error();
      }
    }
  }

 private:
  int bound_device_;
  int previous_{-1};
};

}  // namespace rmm::mr::detail
