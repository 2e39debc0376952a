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
#include <rmm/mr/detail/driver_pool.hpp>
#include <rmm/mr/detail/driver_pool_interface.hpp>
#include <rmm/mr/detail/shared_state.hpp>
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
 * @brief A 128-bit universally unique identifier (RFC 4122 layout), naming an IPC-enabled
 * resource across processes and keying the registry of cuda_async_pinned_memory_resource.
 *
 * A value type; thread-safe (generate() uses a local std::random_device).
 */
class resource_uuid {
 public:
  /// @brief The 16 bytes, in the order of the textual form.
  using bytes_type = std::array<std::uint8_t, 16>;

  /// @brief The nil UUID (all zero).
  constexpr resource_uuid() noexcept = default;

  /// @brief The UUID with these bytes.
  constexpr explicit resource_uuid(bytes_type const& bytes) noexcept : bytes_{bytes} {}

  /// @brief A random (version 4) UUID.
  /// @throws std::exception if std::random_device fails.
  [[nodiscard]] static resource_uuid generate() {
    std::random_device source;
    bytes_type bytes{};
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
      auto const word = static_cast<std::uint32_t>(source());
      for (std::size_t j = 0; j < 4; ++j) {
        bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
      }
    }
    bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0FU) | 0x40U);  // version 4
    bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3FU) | 0x80U);  // RFC 4122 variant
    return resource_uuid{bytes};
  }

  /**
   * @brief Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex digits in either case).
   * @throws rmm::logic_error naming the text if it is not of that form.
   */
  [[nodiscard]] static resource_uuid from_string(std::string_view text) {
    auto const fail = [&] {
      RMM_FAIL("resource_uuid: '" + std::string{text} +
               "' is not a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
    };
    if (text.size() != 36) {
      fail();
    }
    bytes_type bytes{};
    std::size_t out = 0;
    for (std::size_t i = 0; i < text.size();) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (text[i] != '-') {
          fail();
        }
        ++i;
        continue;
      }
      int const high = hex_value(text[i]);
      int const low  = hex_value(text[i + 1]);
      if (high < 0 || low < 0) {
        fail();
      }
      bytes[out++] = static_cast<std::uint8_t>(high * 16 + low);
      i += 2;
    }
    return resource_uuid{bytes};
  }

  /// @brief The 16 bytes.
  [[nodiscard]] constexpr bytes_type const& bytes() const noexcept { return bytes_; }

  /// @brief True for the nil UUID.
  [[nodiscard]] constexpr bool is_nil() const noexcept {
    for (auto byte : bytes_) {
      if (byte != 0) {
        return false;
      }
    }
    return true;
  }

  /// @brief "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex.
  [[nodiscard]] std::string to_string() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) {
        out += '-';
      }
      out += digits[bytes_[i] >> 4U];
      out += digits[bytes_[i] & 0x0FU];
    }
    return out;
  }

  /// @name Comparisons by value (the order is that of the bytes)
  ///@{
  friend constexpr bool operator==(resource_uuid const& a, resource_uuid const& b) noexcept {
    for (std::size_t i = 0; i < a.bytes_.size(); ++i) {
      if (a.bytes_[i] != b.bytes_[i]) {
        return false;
      }
    }
    return true;
  }
  friend constexpr bool operator!=(resource_uuid const& a, resource_uuid const& b) noexcept {
    return !(a == b);
  }
  friend constexpr bool operator<(resource_uuid const& a, resource_uuid const& b) noexcept {
    for (std::size_t i = 0; i < a.bytes_.size(); ++i) {
      if (a.bytes_[i] != b.bytes_[i]) {
        return a.bytes_[i] < b.bytes_[i];
      }
    }
    return false;
  }
  ///@}

 private:
  static constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  bytes_type bytes_{};
};

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
  bool accessible_from_all_devices{false};       ///< Give every device of the process read-write
                                                 ///< access (cudaMemPoolSetAccess on each), so that
                                            ///< kernels on any device use its memory. Off: only
                                            ///< the device current at construction (this
                                            ///< touches no other device);
                                            ///< enable_access_from() adds one later.
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
