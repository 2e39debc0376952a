/**
 * @file driver_pool_interface.hpp
 * @brief What every resource over a CUDA driver pool adds to its public interface: the pool's
 * statistics, this library's byte limit, trimming, and access from other devices.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace rmm::mr::detail {

/// @brief Throws rmm::out_of_range naming @p device unless it is a device of the process.
inline void expect_existing_device(int device, char const* name) {
  int const count = get_num_cuda_devices();
  RMM_EXPECTS(device >= 0 && device < count,
              std::string{name} + ": device " + std::to_string(device) +
                  " does not exist (the process sees " + std::to_string(count) + " device(s))",
              rmm::out_of_range);
}

/// @brief Throws rmm::logic_error if @p core has no pool (default-constructed view, closed).
inline void expect_pool_handle(driver_pool_core const& core) {
  RMM_EXPECTS(core.handle() != nullptr,
              std::string{core.name()} +
                  ": the resource has no memory pool (default-constructed, moved-from or closed)");
}

/**
 * @brief Whether @p device may read and write @p core's pool (cudaMemPoolGetAccess; always true
 * for a managed pool, whose memory every device reaches).
 * @throws rmm::out_of_range if @p device does not exist; rmm::cuda_error if CUDA refuses.
 */
[[nodiscard]] inline bool pool_accessible_from(driver_pool_core const& core, int device) {
  expect_pool_handle(core);
  expect_existing_device(device, core.name());
  if (core.kind() == pool_memory_kind::managed) {
    return true;
  }
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id   = device;
  cudaMemAccessFlags flags{cudaMemAccessFlagsProtNone};
  RMM_CUDA_TRY(cudaMemPoolGetAccess(&flags, core.handle(), &location));
  return flags == cudaMemAccessFlagsProtReadWrite;
}

/**
 * @brief Gives @p device read-write access to @p core's pool, for its present and future
 * allocations (cudaMemPoolSetAccess). A no-op for the pool's own device, for a managed pool and
 * where access is already given.
 * @throws rmm::out_of_range if @p device does not exist.
 * @throws rmm::logic_error naming both devices if @p device cannot access the pool's device
 * (cudaDeviceCanAccessPeer says no).
 * @throws rmm::cuda_error if CUDA refuses.
 */
inline void enable_pool_access_from(driver_pool_core const& core, int device) {
  expect_pool_handle(core);
  expect_existing_device(device, core.name());
  if (core.kind() == pool_memory_kind::managed || device == core.device()) {
    return;
  }
  if (core.kind() == pool_memory_kind::device) {
    int can{0};
    RMM_CUDA_TRY(cudaDeviceCanAccessPeer(&can, device, core.device()));
    RMM_EXPECTS(can != 0,
                std::string{core.name()} + ": device " + std::to_string(device) +
                    " cannot access the memory of device " + std::to_string(core.device()) +
                    " (cudaDeviceCanAccessPeer), so the pool cannot be shared with it");
  }
  enable_device_access(core.handle(), device);
}

/**
 * @brief CRTP base of the driver-pool resources: pool statistics, a byte limit and trimming.
 *
 * `Resource` provides `detail::driver_pool_core const& pool_core() const` (and befriends this
 * class). The statistics are the pool's own attributes, so they count every user of the pool
 * (for a device's default pools, code outside this library too); they change as stream-ordered
 * operations execute, so synchronise the streams involved before reading them for exact values.
 *
 * The limit is this library's: every resource of this library over the same pool in this
 * process shares one limit and one count of the bytes it handed out and has not yet been given
 * back (requested sizes, counted when allocate() returns and when deallocate() is called).
 * Allocations made around the library (cudaMallocAsync on the same pool) are not counted.
 *
 * Thread-safety: every member may be called concurrently with each other and with allocation.
 * Every member throws rmm::logic_error if the resource has no pool (default-constructed view,
 * closed pinned resource) and rmm::cuda_error if a CUDA call fails.
 */
template <typename Resource>
class driver_pool_interface {
 public:
  /// @brief Bytes of the pool in use by allocations (cudaMemPoolAttrUsedMemCurrent).
  [[nodiscard]] std::size_t used_bytes() const { return core().used_bytes(); }

  /// @brief Bytes the pool holds from the system, in use or not
  /// (cudaMemPoolAttrReservedMemCurrent); CuPy calls this total_bytes.
  [[nodiscard]] std::size_t reserved_bytes() const { return core().reserved_bytes(); }

  /// @brief reserved_bytes() - used_bytes(): held by the pool and not in use (0 if the two
  /// attributes, read one after the other, cross).
  [[nodiscard]] std::size_t free_bytes() const { return core().free_bytes(); }

  /// @brief High watermark of used_bytes() since creation or reset_peaks()
  /// (cudaMemPoolAttrUsedMemHigh).
  [[nodiscard]] std::size_t peak_used_bytes() const { return core().peak_used_bytes(); }

  /// @brief High watermark of reserved_bytes() since creation or reset_peaks()
  /// (cudaMemPoolAttrReservedMemHigh).
  [[nodiscard]] std::size_t peak_reserved_bytes() const { return core().peak_reserved_bytes(); }

  /// @brief Resets both high watermarks (the driver's reset; they restart from the current use).
  void reset_peaks() { core().reset_peaks(); }

  /**
   * @brief Limits the bytes this library's resources may have allocated from the pool at once;
   * 0 removes the limit. A request that would go beyond it throws rmm::out_of_memory naming the
   * limit, the request and the bytes in use. Lowering the limit below the bytes in use frees
   * nothing; it refuses requests until enough has been deallocated.
   */
  void set_limit(std::size_t bytes) { core().set_limit(bytes); }

  /**
   * @brief set_limit(floor(@p fraction_of_device_memory * total)), where total is the total
   * memory of the pool's device (for the pinned host pool: the host's physical memory).
   * A fraction of 0 removes the limit.
   * @throws rmm::logic_error naming the value unless it is a finite number in [0, 1].
   */
  void set_limit_fraction(double fraction_of_device_memory) {
    core().set_limit_fraction(fraction_of_device_memory);
  }

  /// @brief The limit in bytes; 0 means none.
  [[nodiscard]] std::size_t get_limit() const { return core().get_limit(); }

  /**
   * @brief Gives memory the pool holds but does not use back to the system, keeping at least
   * @p keep_bytes reserved: synchronises the pool's device (the current device for a host pool)
   * so that pending stream-ordered frees complete, then cudaMemPoolTrimTo(keep_bytes). Memory
   * freed on streams of other devices that have not completed yet is not released.
   */
  void release(std::size_t keep_bytes = 0) { core().release(keep_bytes); }

  /**
   * @brief Releases every block not in use (CuPy's free_all_blocks): release(0). Afterwards
   * reserved_bytes() is what live allocations occupy, rounded to the driver's granularity.
   */
  void free_all_blocks() { core().release(0); }

  /**
   * @brief Gives @p device read-write access to the pool's memory, present and future
   * allocations (cudaMemPoolSetAccess), so that kernels on @p device may use pointers from this
   * resource. A no-op for the pool's own device, where access is already given, and for a
   * managed pool (every device reaches managed memory). A device pool can be shared only with a
   * device that can access its device (cudaDeviceCanAccessPeer); a pinned host pool with any
   * device. The access belongs to the pool: every resource over it sees it.
   * @throws rmm::out_of_range if @p device does not exist.
   * @throws rmm::logic_error naming both devices if @p device cannot access the pool's device,
   * or if the resource has no pool.
   * @throws rmm::cuda_error if CUDA refuses.
   */
  void enable_access_from(cuda_device_id device) {
    enable_pool_access_from(core(), device.value());
  }

  /**
   * @brief Whether @p device may read and write the pool's memory (cudaMemPoolGetAccess).
   * @throws rmm::out_of_range if @p device does not exist; rmm::logic_error if the resource has
   * no pool; rmm::cuda_error if CUDA refuses.
   */
  [[nodiscard]] bool is_accessible_from(cuda_device_id device) const {
    return pool_accessible_from(core(), device.value());
  }

 protected:
  driver_pool_interface() = default;

 private:
  [[nodiscard]] driver_pool_core const& core() const {
    return static_cast<Resource const&>(*this).pool_core();
  }
};
}  // namespace rmm::mr::detail
