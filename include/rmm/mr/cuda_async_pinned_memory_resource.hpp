/**
 * @file cuda_async_pinned_memory_resource.hpp
 * @brief Stream-ordered memory resource over a CUDA memory pool of pinned (page-locked) host
 * memory, with IPC export/import of the pool and of single allocations, and a process-wide
 * registry of resources by UUID.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/cuda_async_pinned_memory_resource_impl.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_interface.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/resource_uuid.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

namespace rmm::mr {

/**
 * @brief A host-pinned memory resource managing a stream-ordered memory pool.
 *
 * allocate() takes page-locked host memory from a CUDA memory pool with cudaMallocFromPoolAsync
 * on the given stream; deallocate() returns it with cudaFreeAsync. The memory is accessible from
 * the host and from the device that was current when the resource was made (the resource calls
 * cudaMemPoolSetAccess for it); pinned_pool_options::accessible_from_all_devices gives every
 * device access at construction, enable_access_from() one device later.
 *
 * Three ways to make one:
 * - `cuda_async_pinned_memory_resource{pinned_pool_options{...}}`: a new pool owned by the
 *   resource (is_handle_owned()), destroyed by close() or when the last copy is destroyed.
 * - `cuda_async_pinned_memory_resource::current()`: the driver's current pinned host pool
 *   (cudaMemGetMemPool for cudaMemLocationTypeHost; the default pool unless one was set with
 *   cudaMemSetMemPool). Not owned: close() has no effect.
 * - `cuda_async_pinned_memory_resource::from_allocation_handle(fd)`: a pool exported by another
 *   process (is_mapped()). It cannot allocate; it imports that process's allocations with
 *   import_pointer(). The imported pool is owned (close() releases it).
 *
 * IPC: a pool created with `ipc_enabled = true` exports itself as a POSIX file descriptor
 * (get_allocation_handle()) and single allocations as bytes (export_pointer()); see
 * docs/driver_pools.md for the whole protocol. A process-wide registry maps UUIDs to resources
 * (register_resource(), from_registry(), unregister_resource()), so that code that only knows a
 * UUID received from a peer finds the mapped resource.
 *
 * Statistics and the byte limit come from detail::driver_pool_interface; set_limit_fraction()
 * takes a fraction of the host's physical memory. Pointers are aligned to at least 256 bytes; a
 * larger alignment, or one that is not a power of two, throws rmm::logic_error. A request of 0
 * bytes returns nullptr. Out of memory (also: a request above max_size or the limit) throws
 * rmm::out_of_memory naming the request and the pool's use.
 *
 * Copies share state (cuda::mr::shared_resource) and compare equal; resources over the same pool
 * compare equal. Thread-safety: allocation, deallocation, the statistics and the queries may be
 * called concurrently; close() must not run concurrently with any other use of the resource (or
 * of its copies).
 */
class cuda_async_pinned_memory_resource
    : public cuda::mr::shared_resource<detail::cuda_async_pinned_memory_resource_impl>,
      public detail::driver_pool_interface<cuda_async_pinned_memory_resource> {
  using shared_base = cuda::mr::shared_resource<detail::cuda_async_pinned_memory_resource_impl>;
  using impl        = detail::cuda_async_pinned_memory_resource_impl;

 public:
  /**
   * @brief Creates a new pool of pinned host memory with @p options, owned by the resource.
   *
   * @throws rmm::logic_error for invalid options (see pinned_pool_options; the message names the
   * value), if the current device does not support host memory pools
   * (cudaDevAttrHostMemoryPoolsSupported, or cudaDevAttrHostNumaMemoryPoolsSupported for a NUMA
   * placement) or IPC with POSIX file descriptors, or if the driver refuses the pool.
   * @throws rmm::out_of_memory if priming with initial_pool_size fails for lack of memory.
   * @throws rmm::cuda_error if another CUDA call fails.
   */
  explicit cuda_async_pinned_memory_resource(pinned_pool_options const& options)
      : shared_base{cuda::std::in_place_type<impl>, options} {}

  /**
   * @brief The driver's current pinned host pool (the default one unless another was made
   * current), not owned: close() has no effect. Makes it accessible from the current device.
   * @throws rmm::logic_error if the device does not support host memory pools.
   * @throws rmm::cuda_error if a CUDA call fails.
   */
  [[nodiscard]] static cuda_async_pinned_memory_resource current() {
    return cuda_async_pinned_memory_resource{detail::pinned_current_pool_tag{}};
  }

  /**
   * @brief Imports a pool that another process exported with get_allocation_handle().
   *
   * The resulting resource is_mapped(): it cannot allocate, but imports the exporter's
   * allocations with import_pointer(). The pool is made accessible from the current device and is
   * owned (close() releases it). It is the caller's responsibility to close @p fd (it may be
   * closed right after this call).
   *
   * @param fd the POSIX file descriptor received from the exporting process.
   * @param uuid the exporter's UUID (get_allocation_handle().uuid), if known: uuid() returns it.
   * @throws rmm::logic_error if @p fd is negative or the device does not support memory pools.
   * @throws rmm::cuda_error if CUDA cannot import the pool.
   */
  [[nodiscard]] static cuda_async_pinned_memory_resource from_allocation_handle(
      int fd, std::optional<resource_uuid> uuid = std::nullopt) {
    return cuda_async_pinned_memory_resource{detail::pinned_import_tag{}, fd, uuid};
  }

  /**
   * @brief The resource registered under @p uuid in this process.
   * @throws rmm::logic_error naming @p uuid if none is registered.
   * Thread-safety: the registry is guarded by a mutex.
   */
  [[nodiscard]] static cuda_async_pinned_memory_resource from_registry(resource_uuid const& uuid);

  /**
   * @brief Removes the resource registered under @p uuid, if any (the registry's copy is
   * destroyed; the pool lives on while other copies exist).
   * @return true if one was registered.
   */
  static bool unregister_resource(resource_uuid const& uuid);

  ~cuda_async_pinned_memory_resource() = default;
  cuda_async_pinned_memory_resource(cuda_async_pinned_memory_resource const&) =
      default;  ///< Default copy constructor.
  cuda_async_pinned_memory_resource(cuda_async_pinned_memory_resource&&) =
      default;  ///< Default move constructor.
  /// @brief Default copy assignment operator. @return cuda_async_pinned_memory_resource& *this
  cuda_async_pinned_memory_resource& operator=(cuda_async_pinned_memory_resource const&) = default;
  /// @brief Default move assignment operator. @return cuda_async_pinned_memory_resource& *this
  cuda_async_pinned_memory_resource& operator=(cuda_async_pinned_memory_resource&&) = default;

  /**
   * @brief Registers this resource under @p uuid in the process-wide registry unless one is
   * registered there already.
   *
   * The registry holds a copy, which keeps the pool alive until unregister_resource(); copies
   * still registered at exit are leaked (their pools go with the process).
   *
   * @return the registered resource: *this, or the one registered before under @p uuid.
   */
  cuda_async_pinned_memory_resource register_resource(resource_uuid const& uuid) const;

  /**
   * @brief Closes the resource: destroys the pool if it is owned (allocations still outstanding
   * keep their memory until freed) and closes the exported file descriptor. Afterwards every
   * member that needs the pool throws rmm::logic_error. No effect for a pool that is not owned,
   * nor when called again. Not thread-safe with respect to other uses of the resource.
   */
  void close() noexcept { state().close(); }

  /// @brief Whether the resource owns its pool (created or imported it). If false, close() has
  /// no effect.
  [[nodiscard]] bool is_handle_owned() const noexcept { return state().owned(); }

  /// @brief Whether the pool can be shared with other processes (created with ipc_enabled, or
  /// imported).
  [[nodiscard]] bool is_ipc_enabled() const noexcept { return state().ipc(); }

  /// @brief Whether the pool was imported from another process. If true, allocation is not
  /// permitted.
  [[nodiscard]] bool is_mapped() const noexcept { return state().mapped(); }

  /// @brief The host NUMA node of the pool, or -1 for placement by the OS (also for the current
  /// pool and for imported pools, whose node is not known here).
  [[nodiscard]] int numa_id() const noexcept { return state().numa_id(); }

  /// @brief -1: pinned memory is host memory and is not associated with a specific device.
  [[nodiscard]] int device_id() const noexcept { return -1; }

  /// @brief The resource's UUID: generated for IPC-enabled pools, given to
  /// from_allocation_handle() for imported ones; std::nullopt otherwise.
  [[nodiscard]] std::optional<resource_uuid> uuid() const noexcept { return state().uuid(); }

  /**
   * @brief Returns the underlying native handle to the CUDA pool.
   * @return cudaMemPool_t Handle to the underlying CUDA pool (nullptr once closed)
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return state().core().handle(); }

  /**
   * @brief Exports the pool to be shared with another process (requires IPC). The handle's file
   * descriptor is made on the first call, cached and owned by the resource (closed by close());
   * later calls return the same one. Thread-safe.
   * @throws rmm::logic_error if IPC is not enabled, the pool was imported, or it is closed.
   * @throws rmm::cuda_error if cudaMemPoolExportToShareableHandle fails.
   */
  [[nodiscard]] pinned_pool_allocation_handle get_allocation_handle() const {
    return state().allocation_handle();
  }

  /**
   * @brief Exports one allocation of this (IPC-enabled, not imported) resource
   * (cudaMemPoolExportPointer). The allocation must be complete (synchronise its stream) before
   * the importer uses it, and must not be freed here before every importer has freed its import.
   * @param ptr a pointer returned by allocate() of this resource.
   * @param bytes its size, passed on for the importer's convenience.
   * @throws rmm::logic_error if IPC is not enabled, the pool was imported or closed, or @p ptr is
   * null; rmm::cuda_error if CUDA refuses.
   */
  [[nodiscard]] pinned_pool_pointer_export export_pointer(void const* ptr,
                                                          std::size_t bytes) const {
    return state().export_pointer(ptr, bytes);
  }

  /**
   * @brief Imports an allocation exported by the process that exported this (mapped) pool
   * (cudaMemPoolImportPointer). Free it with free_imported_pointer() before the exporter frees
   * the allocation.
   * @throws rmm::logic_error unless is_mapped(), or when closed; rmm::cuda_error if CUDA refuses.
   */
  [[nodiscard]] void* import_pointer(pinned_pool_pointer_export const& exported) const {
    return state().import_pointer(exported);
  }

  /**
   * @brief Releases an imported allocation on @p stream (cudaFreeAsync). The release must have
   * completed (synchronise @p stream) before the exporting process frees the allocation.
   */
  void free_imported_pointer(cuda::stream_ref stream, void* ptr) const noexcept {
    if (ptr != nullptr) {
      RMM_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream.get()));
    }
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(cuda_async_pinned_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

  /// @brief Enables the cuda::mr::host_accessible property.
  friend void get_property(cuda_async_pinned_memory_resource const&,
                           cuda::mr::host_accessible) noexcept {}

 private:
  friend class detail::driver_pool_interface<cuda_async_pinned_memory_resource>;

  explicit cuda_async_pinned_memory_resource(detail::pinned_current_pool_tag tag)
      : shared_base{cuda::std::in_place_type<impl>, tag} {}
  cuda_async_pinned_memory_resource(detail::pinned_import_tag tag,
                                    int fd,
                                    std::optional<resource_uuid> uuid)
      : shared_base{cuda::std::in_place_type<impl>, tag, fd, uuid} {}

  [[nodiscard]] impl& state() const noexcept {
    return detail::shared_state<impl>(static_cast<shared_base const&>(*this));
  }
  [[nodiscard]] detail::driver_pool_core const& pool_core() const { return state().core(); }
};

static_assert(cuda::mr::resource_with<cuda_async_pinned_memory_resource,
                                      cuda::mr::device_accessible,
                                      cuda::mr::host_accessible>);

namespace detail {

/// @brief Registers @p resource under @p uuid unless one is; returns the registered one.
/// Defined once, in librmm.
RMM_EXPORT cuda_async_pinned_memory_resource pinned_registry_insert(
    resource_uuid const& uuid, cuda_async_pinned_memory_resource const& resource);

/// @brief The resource registered under @p uuid, if any.
RMM_EXPORT std::optional<cuda_async_pinned_memory_resource> pinned_registry_find(
    resource_uuid const& uuid);

/// @brief Removes the entry of @p uuid; true if there was one.
RMM_EXPORT bool pinned_registry_erase(resource_uuid const& uuid);

}  // namespace detail

inline cuda_async_pinned_memory_resource cuda_async_pinned_memory_resource::from_registry(
    resource_uuid const& uuid) {
  auto found = detail::pinned_registry_find(uuid);
  RMM_EXPECTS(found.has_value(),
              "cuda_async_pinned_memory_resource: no resource is registered under UUID " +
                  uuid.to_string());
  return *found;
}

inline bool cuda_async_pinned_memory_resource::unregister_resource(resource_uuid const& uuid) {
  return detail::pinned_registry_erase(uuid);
}

inline cuda_async_pinned_memory_resource cuda_async_pinned_memory_resource::register_resource(
    resource_uuid const& uuid) const {
  return detail::pinned_registry_insert(uuid, *this);
}

}  // namespace rmm::mr
