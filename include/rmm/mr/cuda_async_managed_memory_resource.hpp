/**
 * @file cuda_async_managed_memory_resource.hpp
 * @brief Memory resource that allocates managed memory with cudaMallocFromPoolAsync /
 * cudaFreeAsync from the current device's default managed memory pool.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_interface.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of cuda_async_managed_memory_resource. Not for direct use.
class cuda_async_managed_memory_resource_impl
    : public driver_pool_impl_base<cuda_async_managed_memory_resource_impl> {
 public:
  static constexpr char const* name = "cuda_async_managed_memory_resource";

  cuda_async_managed_memory_resource_impl() : driver_pool_impl_base{name} {
    int const device = get_current_cuda_device().value();
#if CUDART_VERSION >= 13000
    expect_memory_pools_supported(device, name);
    RMM_EXPECTS(device_attribute(cudaDevAttrManagedMemory, device) != 0,
                std::string{name} + ": device " + std::to_string(device) +
                    " cannot allocate managed memory (cudaDevAttrManagedMemory is 0)");
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id   = device;
    cudaMemPool_t pool{};
    cudaError_t const status =
        cudaMemGetDefaultMemPool(&pool, &location, cudaMemAllocationTypeManaged);
    if (status != cudaSuccess) {
      rmm::detail::clear_last_cuda_error();
      int driver{0};
      static_cast<void>(cudaDriverGetVersion(&driver));
      rmm::detail::clear_last_cuda_error();
      RMM_FAIL(std::string{name} + ": device " + std::to_string(device) +
               " has no default managed memory pool: cudaMemGetDefaultMemPool(managed) returned " +
               cudaGetErrorName(status) + " (driver version " + std::to_string(driver) +
               "; managed memory pools need CUDA 13 and are not available on Windows)");
    }
    core_ =
        driver_pool_core{pool, shared_pool_limit(pool), name, pool_memory_kind::managed, device};
#else
    RMM_FAIL(std::string{name} + ": this build uses CUDA runtime " +
             std::to_string(CUDART_VERSION) +
             ", which has no managed memory pools (cudaMemGetDefaultMemPool needs CUDA 13); "
             "device " +
             std::to_string(device));
#endif
  }

  cuda_async_managed_memory_resource_impl(cuda_async_managed_memory_resource_impl const&) = delete;
  cuda_async_managed_memory_resource_impl& operator=(
      cuda_async_managed_memory_resource_impl const&) = delete;
  ~cuda_async_managed_memory_resource_impl()          = default;  // the pool is the driver's
};

}  // namespace detail

/**
 * @brief Memory resource that uses cudaMallocFromPoolAsync/cudaFreeFromPoolAsync with a managed
 * memory pool for allocation/deallocation.
 *
 * The pool is the default managed memory pool of the device current at construction
 * (cudaMemGetDefaultMemPool with cudaMemAllocationTypeManaged, CUDA 13). It belongs to the
 * driver: it is neither created nor destroyed here, its attributes (release threshold) are not
 * modified, and code outside this library may use it too. The memory is managed (unified)
 * memory, accessible from the host and the device once the stream-ordered allocation has
 * completed.
 *
 * Besides the members of the specification, it offers the pool statistics and the byte limit
 * of detail::driver_pool_interface; since every instance uses the same pool, they share the
 * limit too.
 *
 * Pointers are aligned to at least 256 bytes; a larger alignment, or one that is not a power of
 * two, throws rmm::logic_error. A request of 0 bytes returns nullptr. Out of memory throws
 * rmm::out_of_memory naming the request, the pool's used and reserved bytes, its limit and the
 * device's free memory.
 *
 * Copies share state and compare equal; instances over the same device's pool compare equal.
 * Thread-safety: every member may be called concurrently.
 */
class cuda_async_managed_memory_resource
    : public cuda::mr::shared_resource<detail::cuda_async_managed_memory_resource_impl>,
      public detail::driver_pool_interface<cuda_async_managed_memory_resource> {
  using shared_base = cuda::mr::shared_resource<detail::cuda_async_managed_memory_resource_impl>;

 public:
  /**
   * @brief Constructs a cuda_async_managed_memory_resource with the default managed memory pool
   * for the current device.
   *
   * The default managed memory pool is the pool that is created when the device is created. Pool
   * properties such as the release threshold are not modified.
   *
   * @throws rmm::logic_error if the CUDA version does not support cudaMallocFromPoolAsync with
   * managed memory pool (a toolkit before CUDA 13, a device without memory pools or managed
   * memory, or a driver that has no default managed pool); the message names the device.
   */
  cuda_async_managed_memory_resource()
      : shared_base{cuda::std::in_place_type<detail::cuda_async_managed_memory_resource_impl>} {}

  ~cuda_async_managed_memory_resource() = default;
  cuda_async_managed_memory_resource(cuda_async_managed_memory_resource const&) =
      default;  ///< Default copy constructor.
  cuda_async_managed_memory_resource(cuda_async_managed_memory_resource&&) =
      default;  ///< Default move constructor.
  /// @brief Default copy assignment operator. @return cuda_async_managed_memory_resource& *this
  cuda_async_managed_memory_resource& operator=(cuda_async_managed_memory_resource const&) =
      default;
  /// @brief Default move assignment operator. @return cuda_async_managed_memory_resource& *this
  cuda_async_managed_memory_resource& operator=(cuda_async_managed_memory_resource&&) = default;

  /**
   * @brief Returns the underlying native handle to the CUDA pool.
   * @return cudaMemPool_t Handle to the underlying CUDA pool
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return state().core().handle(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(cuda_async_managed_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

  /// @brief Enables the cuda::mr::host_accessible property.
  friend void get_property(cuda_async_managed_memory_resource const&,
                           cuda::mr::host_accessible) noexcept {}

 private:
  friend class detail::driver_pool_interface<cuda_async_managed_memory_resource>;

  [[nodiscard]] detail::cuda_async_managed_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::cuda_async_managed_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
  [[nodiscard]] detail::driver_pool_core const& pool_core() const { return state().core(); }
};

static_assert(cuda::mr::resource_with<cuda_async_managed_memory_resource,
                                      cuda::mr::device_accessible,
                                      cuda::mr::host_accessible>);

}  // namespace rmm::mr
