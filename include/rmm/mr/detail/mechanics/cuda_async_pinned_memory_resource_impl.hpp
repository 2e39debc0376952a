/**
 * @file cuda_async_pinned_memory_resource_impl.hpp
 * @brief The shared state of cuda_async_pinned_memory_resource (creating, importing and closing
 * its pool, exporting it) and the host-only placement logic, apart from the public header.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_interface.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/resource_uuid.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief Creation options of a cuda_async_pinned_memory_resource that owns a new pool.
 *
 * Placement: `numa_id` >= 0 places the pool on that host NUMA node
 * (cudaMemLocationTypeHostNuma); -1 leaves placement to the OS (cudaMemLocationTypeHost). Left
 * unset, an IPC-enabled pool goes to the host NUMA node of the current device
 * (cudaDevAttrHostNumaId) and any other pool to the OS. IPC needs a NUMA placement: the driver
 * does not export pools of cudaMemLocationTypeHost.
 */
struct pinned_pool_options {
  bool ipc_enabled{false};              ///< Allow exporting the pool as a POSIX file descriptor.
  std::optional<int> numa_id;           ///< Host NUMA node; -1 for placement by the OS; see above.
  std::optional<std::size_t> max_size;  ///< The pool's maximum size (cudaMemPoolProps::maxSize);
                                        ///< unset: the system's default. Must not be 0.
  std::optional<std::size_t> initial_pool_size;  ///< Primed at construction, as for
                                                 ///< cuda_async_memory_resource.
  std::optional<std::size_t> release_threshold;  ///< Unset: the maximum of std::uint64_t
                                                 ///< (keep freed memory).
  /// Give every device of the process read-write access (cudaMemPoolSetAccess on each), so that
  /// kernels on any device use its memory. Off: only the device current at construction (this
  /// touches no other device); enable_access_from() adds one later.
  bool accessible_from_all_devices{false};
};

/**
 * @brief The exported form of a pool (cuda_async_pinned_memory_resource::get_allocation_handle):
 * a POSIX file descriptor, owned by the exporting resource, and the resource's UUID. Pass the
 * descriptor to another process with SCM_RIGHTS over a Unix socket (or pidfd_getfd); its number
 * means nothing elsewhere.
 */
struct pinned_pool_allocation_handle {
  int fd{-1};                         ///< Valid until the exporting resource is closed.
  std::optional<resource_uuid> uuid;  ///< The exporting resource's UUID.
};

/**
 * @brief The exported form of one allocation (cudaMemPoolExportPointer): trivially copyable
 * bytes, to be sent to the importing process by any means.
 */
struct pinned_pool_pointer_export {
  cudaMemPoolPtrExportData data{};  ///< The driver's opaque export data.
  std::size_t bytes{};              ///< The size given to allocate(), for the importer's use.
};

namespace detail {

/// @brief A pool's location as cudaMemPoolCreate takes it.
struct pinned_location {
  cudaMemLocationType type;
  int id;
};

/**
 * @brief Where a pool with @p options goes, given the current device's host NUMA node
 * @p device_host_numa_id (read only when needed; pass -1 otherwise) and the device's id for
 * messages. Host-only logic.
 * @throws rmm::logic_error naming the value for a numa_id below -1, a max_size of 0, an
 * initial_pool_size above max_size, or an IPC-enabled pool without a NUMA node.
 */
[[nodiscard]] inline pinned_location resolve_pinned_location(pinned_pool_options const& options,
                                                             int device_host_numa_id,
                                                             int device) {
  constexpr char const* name = "cuda_async_pinned_memory_resource";
  if (options.numa_id) {
    RMM_EXPECTS(*options.numa_id >= -1,
                std::string{name} + ": numa_id " + std::to_string(*options.numa_id) +
                    " is invalid: give a host NUMA node id >= 0, or -1 for placement by the OS");
  }
  if (options.max_size) {
    RMM_EXPECTS(
        *options.max_size != 0,
        std::string{name} + ": max_size must not be 0 (leave it unset for the system's default)");
    RMM_EXPECTS(options.initial_pool_size.value_or(0) <= *options.max_size,
                std::string{name} + ": initial_pool_size " +
                    std::to_string(options.initial_pool_size.value_or(0)) + " exceeds max_size " +
                    std::to_string(*options.max_size));
  }
  int const id =
      options.numa_id ? *options.numa_id : (options.ipc_enabled ? device_host_numa_id : -1);
  if (id < 0) {
    RMM_EXPECTS(
        !options.ipc_enabled,
        std::string{name} +
            ": an IPC-enabled pinned pool needs a host NUMA node (the driver exports no "
            "pool of cudaMemLocationTypeHost), but " +
            (options.numa_id
                 ? std::string{"numa_id is -1"}
                 : "device " + std::to_string(device) + " reports host NUMA id " +
                       std::to_string(device_host_numa_id) + " (no NUMA support); give numa_id"));
    return {cudaMemLocationTypeHost, 0};
  }
  return {cudaMemLocationTypeHostNuma, id};
}

/// @brief @throws rmm::logic_error naming @p device unless it supports host memory pools of
/// the given kind (cudaDevAttrHostNumaMemoryPoolsSupported / cudaDevAttrHostMemoryPoolsSupported).
inline void expect_host_pools_supported(bool numa, int device, char const* resource_name) {
  expect_memory_pools_supported(device, resource_name);
  cudaDeviceAttr const attr =
      numa ? cudaDevAttrHostNumaMemoryPoolsSupported : cudaDevAttrHostMemoryPoolsSupported;
  RMM_EXPECTS(device_attribute(attr, device) != 0,
              std::string{resource_name} + ": device " + std::to_string(device) +
                  " does not support pinned host memory pools " +
                  (numa ? "on a host NUMA node (cudaDevAttrHostNumaMemoryPoolsSupported is 0)"
                        : "(cudaDevAttrHostMemoryPoolsSupported is 0)"));
}

/// @brief Selects the constructor of the current (driver-owned) host pool.
struct pinned_current_pool_tag {};
/// @brief Selects the constructor that imports a pool from another process.
struct pinned_import_tag {};

/// @brief Shared state of cuda_async_pinned_memory_resource. Not for direct use.
class cuda_async_pinned_memory_resource_impl
    : public driver_pool_impl_base<cuda_async_pinned_memory_resource_impl> {
 public:
  static constexpr char const* name = "cuda_async_pinned_memory_resource";

  explicit cuda_async_pinned_memory_resource_impl(pinned_pool_options const& options)
      : driver_pool_impl_base{name} {
    int const device = get_current_cuda_device().value();
    expect_memory_pools_supported(device, name);
    int const device_numa          = options.ipc_enabled && !options.numa_id
                                         ? device_attribute(cudaDevAttrHostNumaId, device)
                                         : -1;
    pinned_location const location = resolve_pinned_location(options, device_numa, device);
    bool const numa                = location.type == cudaMemLocationTypeHostNuma;
    expect_host_pools_supported(numa, device, name);
    if (options.ipc_enabled) {
      expect_handle_types_supported(cudaMemHandleTypePosixFileDescriptor, device, name);
    }
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes =
        options.ipc_enabled ? cudaMemHandleTypePosixFileDescriptor : cudaMemHandleTypeNone;
    props.location.type = location.type;
    props.location.id   = location.id;
    props.maxSize       = options.max_size.value_or(0);
    pool_guard guard{create_pool(
        props,
        name,
        numa ? "on host NUMA node " + std::to_string(location.id) : std::string{"on the host"})};
    enable_device_access(guard.get(), device);
    if (options.accessible_from_all_devices) {
      for (int d = 0, n = get_num_cuda_devices(); d < n; ++d) {
        enable_device_access(guard.get(), d);
      }
    }
    set_release_threshold(
        guard.get(), options.release_threshold.value_or(std::numeric_limits<std::uint64_t>::max()));
    if (options.initial_pool_size.value_or(0) > 0) {
      prime_pool(guard.get(), *options.initial_pool_size, name, -1);
    }
    if (options.ipc_enabled) {
      uuid_ = resource_uuid::generate();
    }
    auto limit = fresh_pool_limit(guard.get());
    core_      = driver_pool_core{guard.release(),
                             std::move(limit),
                             name,
                             pool_memory_kind::pinned_host,
                             -1,
                             options.max_size.value_or(0)};
    owned_     = true;
    ipc_       = options.ipc_enabled;
    numa_id_   = numa ? location.id : -1;
  }

  explicit cuda_async_pinned_memory_resource_impl(pinned_current_pool_tag)
      : driver_pool_impl_base{name} {
    int const device = get_current_cuda_device().value();
#if CUDART_VERSION >= 13000
    expect_host_pools_supported(false, device, name);
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeHost;
    location.id   = 0;
    cudaMemPool_t pool{};
    RMM_CUDA_TRY(cudaMemGetMemPool(&pool, &location, cudaMemAllocationTypePinned));
    enable_device_access(pool, device);
    core_ =
        driver_pool_core{pool, shared_pool_limit(pool), name, pool_memory_kind::pinned_host, -1};
#else
    RMM_FAIL(std::string{name} + ": this build uses CUDA runtime " +
             std::to_string(CUDART_VERSION) +
             ", which has no current host memory pool (cudaMemGetMemPool needs CUDA 13); device " +
             std::to_string(device));
#endif
  }

  cuda_async_pinned_memory_resource_impl(pinned_import_tag,
                                         int fd,
                                         std::optional<resource_uuid> uuid)
      : driver_pool_impl_base{name} {
    RMM_EXPECTS(fd >= 0,
                std::string{name} + ": from_allocation_handle: file descriptor " +
                    std::to_string(fd) + " is invalid");
    int const device = get_current_cuda_device().value();
    expect_memory_pools_supported(device, name);
    cudaMemPool_t pool{};
    RMM_CUDA_TRY(cudaMemPoolImportFromShareableHandle(
        &pool,
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor,
        0));
    pool_guard guard{pool};
    enable_device_access(pool, device);
    auto limit = fresh_pool_limit(pool);
    core_      = driver_pool_core{
        guard.release(), std::move(limit), name, pool_memory_kind::pinned_host, -1};
    owned_  = true;
    ipc_    = true;
    mapped_ = true;
    uuid_   = uuid;
  }

  cuda_async_pinned_memory_resource_impl(cuda_async_pinned_memory_resource_impl const&) = delete;
  cuda_async_pinned_memory_resource_impl& operator=(cuda_async_pinned_memory_resource_impl const&) =
      delete;

  ~cuda_async_pinned_memory_resource_impl() { close(); }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_allocatable();
    return core_.allocate(stream, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    expect_allocatable();
    return core_.allocate_sync(bytes, alignment);
  }

  /// Destroys an owned pool and closes the exported descriptor; nothing for a pool not owned.
  void close() noexcept {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!owned_ || closed_) {
      return;
    }
    closed_ = true;
    if (export_fd_ >= 0) {
      static_cast<void>(::close(export_fd_));
      export_fd_ = -1;
    }
    cudaMemPool_t const pool = core_.handle();
    core_.reset();  // drop the limit before the handle can be reused
    if (pool != nullptr && !rmm::process_is_exiting()) {
      RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaMemPoolDestroy(pool));
    }
  }

  [[nodiscard]] pinned_pool_allocation_handle allocation_handle() const {
    std::lock_guard<std::mutex> guard{mutex_};
    expect_open();
    RMM_EXPECTS(ipc_ && !mapped_,
                std::string{name} + ": get_allocation_handle: " +
                    (mapped_ ? "the pool was imported from another process and cannot be "
                               "exported again"
                             : "IPC is not enabled (construct with pinned_pool_options::"
                               "ipc_enabled = true)"));
    if (export_fd_ < 0) {
      int fd{-1};
      RMM_CUDA_TRY(cudaMemPoolExportToShareableHandle(
          &fd, core_.handle(), cudaMemHandleTypePosixFileDescriptor, 0));
      export_fd_ = fd;
    }
    return pinned_pool_allocation_handle{export_fd_, uuid_};
  }

  [[nodiscard]] pinned_pool_pointer_export export_pointer(void const* ptr,
                                                          std::size_t bytes) const {
    expect_open();
    RMM_EXPECTS(
        ipc_ && !mapped_,
        std::string{name} + ": export_pointer needs an IPC-enabled pool created by this process");
    RMM_EXPECTS(ptr != nullptr, std::string{name} + ": export_pointer: the pointer is null");
    pinned_pool_pointer_export out{};
    out.bytes = bytes;
    RMM_CUDA_TRY(cudaMemPoolExportPointer(&out.data, const_cast<void*>(ptr)));
    return out;
  }

  [[nodiscard]] void* import_pointer(pinned_pool_pointer_export const& exported) const {
    expect_open();
    RMM_EXPECTS(
        mapped_,
        std::string{name} + ": import_pointer needs a resource made by from_allocation_handle()");
    cudaMemPoolPtrExportData data = exported.data;
    void* ptr{nullptr};
    RMM_CUDA_TRY(cudaMemPoolImportPointer(&ptr, core_.handle(), &data));
    return ptr;
  }

  [[nodiscard]] bool owned() const noexcept { return owned_; }
  [[nodiscard]] bool ipc() const noexcept { return ipc_; }
  [[nodiscard]] bool mapped() const noexcept { return mapped_; }
  [[nodiscard]] int numa_id() const noexcept { return numa_id_; }
  [[nodiscard]] std::optional<resource_uuid> uuid() const noexcept { return uuid_; }

 private:
  void expect_open() const {
    RMM_EXPECTS(core_.handle() != nullptr, std::string{name} + ": the resource is closed");
  }

  void expect_allocatable() const {
    RMM_EXPECTS(!mapped_,
                std::string{name} +
                    ": cannot allocate: the pool was imported from another process "
                    "(is_mapped() is true) and CUDA does not allocate from imported pools; use "
                    "import_pointer() for the exporter's allocations");
  }

  bool owned_{false};
  bool ipc_{false};
  bool mapped_{false};
  bool closed_{false};
  int numa_id_{-1};
  std::optional<resource_uuid> uuid_;
  mutable std::mutex mutex_;
  mutable int export_fd_{-1};
};

}  // namespace detail

}  // namespace rmm::mr
