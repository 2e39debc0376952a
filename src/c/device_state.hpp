/**
 * @file device_state.hpp
 * @brief librmm_c's per-device state: the byte counters, and the resource installed in the
 * per-device registry on a device's first allocation.
 */
#pragma once

#include "config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rmm::c {

/// @brief Devices librmm_c serves: ids in [0, max_devices) (and below the device count).
inline constexpr int max_devices = 64;

/**
 * @brief Byte counters of one device, updated with relaxed atomics (each counter is exact; a set
 * of them read together is not a snapshot). One cache line per device.
 */
struct alignas(64) device_counters {
  std::atomic<std::size_t> in_use{0};         ///< bytes allocated through the C functions
  std::atomic<std::size_t> peak_in_use{0};    ///< most in_use has been since the last reset
  std::atomic<std::size_t> reserved{0};       ///< bytes the pool took from cudaMalloc
  std::atomic<std::size_t> peak_reserved{0};  ///< most reserved has been since the last reset
  std::atomic<std::uint64_t> allocations{0};  ///< successful allocations
  std::atomic<std::uint64_t> failed{0};       ///< failed allocations
};

/// @brief The counters of @p device. @pre 0 <= device < max_devices.
[[nodiscard]] device_counters& counters(int device) noexcept;

/// @brief Raises @p peak to @p value if it is below (relaxed).
inline void raise_peak(std::atomic<std::size_t>& peak, std::size_t value) noexcept {
  std::size_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

/**
 * @brief Makes sure @p device has the resource @p cfg names installed in the registry: on the
 * first call for @p device, creates it (with @p device current: the caller's duty) and calls
 * rmm::mr::set_per_device_resource. A failure (out of memory for the initial pool, no virtual
 * memory support, ...) is remembered: every later call for @p device fails with the same message.
 *
 * @pre 0 <= device < max_devices, and @p device is the current device.
 * @return nullptr on success, else the failure's message (valid for the process' lifetime).
 * Thread-safe: concurrent first calls install once; the fast path is one acquire load.
 */
[[nodiscard]] char const* ensure_installed(int device, config const& cfg);

/**
 * @brief Where @p device's allocation log goes: "" without RMM_C_LOG; else its value with
 * "{device}" replaced by the id, or, without that marker, the path itself for device 0 and the
 * path with ".device<N>" before its extension for device N.
 */
[[nodiscard]] std::string log_path(int device);

/// @brief Flushes every installed device's allocation log; false if one failed. Thread-safe.
bool flush_logs() noexcept;

/**
 * @brief Reserved bytes of @p device and their peak (see rmm_c_stats); zeros if nothing is
 * installed there. Sets the device current for the queries that need it.
 * @throws rmm::cuda_error if a CUDA query fails.
 */
void reserved_bytes(int device, std::size_t& reserved, std::size_t& peak);

/// @brief Sets @p device's peaks to the current values (in_use, reserved; cuda_async's driver
/// high-water mark). Best effort: CUDA errors are ignored.
void reset_peaks(int device) noexcept;

/**
 * @brief Gives @p device's free pool memory back (see rmm_c_release); nothing if no resource
 * is installed there. @throws rmm::cuda_error (or what release() throws) on failure.
 */
void release(int device);

/**
 * @brief Makes a device current for a scope and restores the previous one; does nothing when it
 * already is current (one cudaGetDevice, a thread-local read).
 */
class device_guard {
 public:
  /// @throws rmm::cuda_error if the current device cannot be read or set.
  explicit device_guard(int device);
  ~device_guard();
  device_guard(device_guard const&)            = delete;
  device_guard& operator=(device_guard const&) = delete;
  device_guard(device_guard&&)                 = delete;
  device_guard& operator=(device_guard&&)      = delete;

 private:
  int previous_{-1};
};

}  // namespace rmm::c
