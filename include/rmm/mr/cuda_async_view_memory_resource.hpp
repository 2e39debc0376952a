/**
 * @file cuda_async_view_memory_resource.hpp
 * @brief Memory resource that allocates with cudaMallocFromPoolAsync / cudaFreeAsync from a CUDA
 * memory pool that the caller owns.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_interface.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>

namespace rmm::mr {

/**
 * @brief Memory resource that uses cudaMallocAsync/cudaFreeAsync for allocation/deallocation.
 *
 * A view of an existing CUDA memory pool (`cudaMemPool_t`), for example a device's default pool
 * (cudaDeviceGetDefaultMemPool) or one made with cudaMemPoolCreate: allocate() calls
 * cudaMallocFromPoolAsync on the given stream, deallocate() cudaFreeAsync. The pool is not owned
 * and must stay valid while any copy of the view is used; its attributes (release threshold,
 * access) are not changed.
 *
 * Besides the members of the specification, it offers the pool statistics and the byte limit
 * of detail::driver_pool_interface. The limit belongs to the pool: every resource of this
 * library over the same pool in this process shares it.
 *
 * Pointers are aligned to at least 256 bytes; a larger alignment, or one that is not a power of
 * two, throws rmm::logic_error. A request of 0 bytes returns nullptr. Out of memory throws
 * rmm::out_of_memory naming the request, the pool's used and reserved bytes, its limit and the
 * device's free memory. A default-constructed view has no pool: allocating from it throws
 * rmm::logic_error.
 *
 * Views compare equal when they refer to the same pool. Thread-safety: every member may be called
 * concurrently.
 */
class cuda_async_view_memory_resource
    : public detail::driver_pool_interface<cuda_async_view_memory_resource> {
 public:
  /**
   * @brief Constructs a cuda_async_view_memory_resource which uses an existing CUDA memory pool.
   * The provided pool is not owned by cuda_async_view_memory_resource and must remain valid
   * during the lifetime of the memory resource.
   *
   * @param pool_handle Handle to a CUDA memory pool which will be used to serve allocation
   * requests. Statistics and set_limit_fraction() refer to the device current at construction.
   * @throws rmm::logic_error if @p pool_handle is null, or if the current device does not support
   * memory pools (cudaDevAttrMemoryPoolsSupported).
   */
  cuda_async_view_memory_resource(cudaMemPool_t pool_handle)  // NOLINT: implicit, as specified
      : core_{make_core(pool_handle)} {}

  cuda_async_view_memory_resource()  = default;  ///< A view of no pool.
  ~cuda_async_view_memory_resource() = default;
  cuda_async_view_memory_resource(cuda_async_view_memory_resource const&) =
      default;  ///< Default copy constructor.
  cuda_async_view_memory_resource(cuda_async_view_memory_resource&&) =
      default;  ///< Default move constructor.
  /// @brief Default copy assignment operator. @return cuda_async_view_memory_resource& *this
  cuda_async_view_memory_resource& operator=(cuda_async_view_memory_resource const&) = default;
  /// @brief Default move assignment operator. @return cuda_async_view_memory_resource& *this
  cuda_async_view_memory_resource& operator=(cuda_async_view_memory_resource&&) = default;

  /**
   * @brief Returns the underlying native handle to the CUDA pool.
   * @return cudaMemPool_t Handle to the underlying CUDA pool (nullptr for a default-constructed
   * view)
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return core_.handle(); }

  /**
   * @brief Allocates memory of size at least @p bytes on @p stream (cudaMallocFromPoolAsync).
   *
   * The returned pointer will have at minimum 256 byte alignment; it may be used on @p stream at
   * once and on other streams after synchronising with it.
   *
   * @param stream Stream on which to perform allocation
   * @param bytes The size of the allocation
   * @param alignment The alignment of the allocation (a power of two, at most 256)
   * @return void* Pointer to the newly allocated memory
   * @throws rmm::logic_error for a bad alignment or a view without a pool.
   * @throws rmm::out_of_memory if the limit would be exceeded or the pool is out of memory.
   * @throws rmm::bad_alloc for any other CUDA failure.
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return core_.allocate(stream, bytes, alignment);
  }

  /**
   * @brief Deallocate memory pointed to by @p ptr on @p stream (cudaFreeAsync).
   *
   * @param stream Stream on which to perform deallocation
   * @param ptr Pointer to be deallocated
   * @param bytes The size in bytes of the allocation. This must be equal to the value of bytes
   * that was passed to the allocate call that returned ptr.
   * @param alignment The alignment that was passed to the allocate call that returned ptr
   */
  void deallocate(
      cuda::stream_ref stream,
      void* ptr,
      std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    core_.deallocate(stream, ptr, bytes);
  }

  /**
   * @brief Allocates memory of size at least @p bytes synchronously: on the default stream,
   * which is then synchronised. Throws as allocate().
   *
   * @param bytes The size of the allocation
   * @param alignment The alignment of the allocation
   * @return void* Pointer to the newly allocated memory
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return core_.allocate_sync(bytes, alignment);
  }

  /**
   * @brief Deallocate memory pointed to by @p ptr synchronously: on the default stream.
   *
   * @param ptr Pointer to be deallocated
   * @param bytes The size in bytes of the allocation
   * @param alignment The alignment that was passed to the allocate call that returned ptr
   */
  void deallocate_sync(
      void* ptr,
      std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    core_.deallocate_sync(ptr, bytes);
  }

  /**
   * @brief Compares two views.
   * @return true If the two resources refer to the same pool
   */
  [[nodiscard]] friend bool operator==(cuda_async_view_memory_resource const& a,
                                       cuda_async_view_memory_resource const& b) noexcept {
    return a.pool_handle() == b.pool_handle();
  }

  /**
   * @brief Compares two views.
   * @return true If the two resources refer to different pools
   */
  [[nodiscard]] friend bool operator!=(cuda_async_view_memory_resource const& a,
                                       cuda_async_view_memory_resource const& b) noexcept {
    return !(a == b);
  }

  /**
   * @brief Enables the cuda::mr::device_accessible property.
   *
   * This property declares that a cuda_async_view_memory_resource provides device accessible
   * memory
   */
  friend void get_property(cuda_async_view_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

 private:
  friend class detail::driver_pool_interface<cuda_async_view_memory_resource>;
  static constexpr char const* name = "cuda_async_view_memory_resource";

  static detail::driver_pool_core make_core(cudaMemPool_t pool) {
    RMM_EXPECTS(pool != nullptr, std::string{name} + ": the pool handle is null");
    int const device = get_current_cuda_device().value();
    detail::expect_memory_pools_supported(device, name);
    return detail::driver_pool_core{
        pool, detail::shared_pool_limit(pool), name, detail::pool_memory_kind::device, device};
  }

  [[nodiscard]] detail::driver_pool_core const& pool_core() const noexcept { return core_; }

  detail::driver_pool_core core_{name};
};

static_assert(
    cuda::mr::resource_with<cuda_async_view_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
