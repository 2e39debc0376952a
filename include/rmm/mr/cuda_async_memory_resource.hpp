/**
 * @file cuda_async_memory_resource.hpp
 * @brief Memory resource that owns a CUDA memory pool and allocates from it with
 * cudaMallocFromPoolAsync / cudaFreeAsync (the driver's stream-ordered allocator).
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_interface.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of cuda_async_memory_resource: the pool it created. Not for direct use.
class cuda_async_memory_resource_impl
    : public driver_pool_impl_base<cuda_async_memory_resource_impl> {
 public:
  static constexpr char const* name = "cuda_async_memory_resource";

  cuda_async_memory_resource_impl(std::optional<std::size_t> initial_pool_size,
                                  std::optional<std::size_t> release_threshold,
                                  int export_handle_type)
      : driver_pool_impl_base{name} {
    int const device = get_current_cuda_device().value();
    expect_memory_pools_supported(device, name);
    expect_handle_types_supported(export_handle_type, device, name);
    cudaMemPoolProps props{};
    props.allocType     = cudaMemAllocationTypePinned;
    props.handleTypes   = static_cast<cudaMemAllocationHandleType>(export_handle_type);
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = device;
    pool_guard guard{create_pool_with_hw_decompress(props, device)};
    cudaMemPool_t const pool = guard.get();
    set_release_threshold(pool,
                          release_threshold.value_or(std::numeric_limits<std::uint64_t>::max()));
    if (initial_pool_size.value_or(0) > 0) {
      prime_pool(pool, *initial_pool_size, name, device);
    }
    auto limit = fresh_pool_limit(pool);
    core_ =
        driver_pool_core{guard.release(), std::move(limit), name, pool_memory_kind::device, device};
  }

  cuda_async_memory_resource_impl(cuda_async_memory_resource_impl const&)            = delete;
  cuda_async_memory_resource_impl& operator=(cuda_async_memory_resource_impl const&) = delete;

  /// @brief True if the pool was created with `cudaMemPoolCreateUsageHwDecompress` in its usage
  /// (so that its memory can be a buffer of hardware decompression where the device has it).
  [[nodiscard]] bool hw_decompress_usage() const noexcept { return hw_decompress_usage_; }

  ~cuda_async_memory_resource_impl() {
    cudaMemPool_t const pool = core_.handle();
    core_.reset();  // drop the limit before the handle can be reused
    if (pool == nullptr || rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the pool to the driver
    }
    // Outstanding allocations and pending frees keep the pool's memory until they complete.
    RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaMemPoolDestroy(pool));
  }

 private:
  /**
   * @brief Creates the pool asking for hardware-decompression usage when the driver accepts the
   * flag (rmm::detail::hwdecompress, as RMM does), so that its memory can feed the decompression
   * engine of the devices that have one. Should a driver still refuse the flag for this pool
   * (not supported / invalid value), the pool is created without it rather than failing: the
   * usage is an optimisation RMM asks for by default, never something the caller requested.
   */
  [[nodiscard]] cudaMemPool_t create_pool_with_hw_decompress(cudaMemPoolProps props, int device) {
    std::string const what = "on device " + std::to_string(device);
    if (rmm::detail::hwdecompress::is_supported()) {
      props.usage = cudaMemPoolCreateUsageHwDecompress;
      cudaMemPool_t pool{};
      cudaError_t const status = cudaMemPoolCreate(&pool, &props);
      if (status == cudaSuccess) {
        hw_decompress_usage_ = true;
        return pool;
      }
      rmm::detail::clear_last_cuda_error();
      if (status != cudaErrorNotSupported && status != cudaErrorInvalidValue) {
        return create_pool(props, name, what);  // not about the flag: report it as ever
      }
      props.usage = 0;
    }
    return create_pool(props, name, what);
  }

  bool hw_decompress_usage_{false};
};

}  // namespace detail

/**
 * @brief Memory resource that uses cudaMallocAsync/cudaFreeAsync for allocation/deallocation.
 *
 * Each independently constructed instance creates its own CUDA memory pool (`cudaMemPool_t`) of
 * device memory on the device current at construction, and allocates from it with
 * cudaMallocFromPoolAsync on the stream given to allocate(); deallocate() frees with
 * cudaFreeAsync on its stream. Memory freed on a stream is reused by the driver in stream order
 * (and, following the pool's reuse policies, on other streams after an event dependency).
 * The pool is destroyed when the last copy is destroyed (not during process exit, see
 * rmm::process_is_exiting()); allocations still outstanding then keep their memory until freed.
 *
 * Besides the members of the specification, it offers the pool statistics and the byte limit
 * of detail::driver_pool_interface (used_bytes(), reserved_bytes(), free_bytes(), the peaks,
 * set_limit(), set_limit_fraction(), get_limit(), release(), free_all_blocks()).
 *
 * Where the driver accepts it (CUDA 12.8 or later, rmm::detail::hwdecompress), the pool is
 * created with `cudaMemPoolCreateUsageHwDecompress` in its usage, as RMM does, so that its memory
 * can be a buffer of hardware-accelerated decompression on devices that have the engine.
 *
 * Pointers are aligned to at least 256 bytes; a larger alignment, or one that is not a power of
 * two, throws rmm::logic_error. A request of 0 bytes returns nullptr. Out of memory throws
 * rmm::out_of_memory naming the request, the pool's used and reserved bytes, its limit and the
 * device's free memory; other CUDA failures throw rmm::bad_alloc.
 *
 * Copies share the pool (cuda::mr::shared_resource) and compare equal; independently
 * constructed instances compare unequal. Thread-safety: every member may be called
 * concurrently; the resource is compatible with the per-thread default stream.
 */
class cuda_async_memory_resource
    : public cuda::mr::shared_resource<detail::cuda_async_memory_resource_impl>,
      public detail::driver_pool_interface<cuda_async_memory_resource> {
  using shared_base = cuda::mr::shared_resource<detail::cuda_async_memory_resource_impl>;

 public:
  /**
   * @brief Flags for specifying memory allocation handle types.
   *
   * @note These values are exact copies from cudaMemAllocationHandleType (checked by
   * static_assert below). See the cudaMemAllocationHandleType docs at
   * https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
   */
  enum class allocation_handle_type : std::int32_t {
    none                  = 0x0,  ///< Does not allow any export mechanism.
    posix_file_descriptor = 0x1,  ///< Allows a file descriptor to be used for exporting.
                                  ///< Permitted only on POSIX systems.
    win32     = 0x2,              ///< Allows a Win32 NT handle to be used for exporting. (HANDLE)
    win32_kmt = 0x4,  ///< Allows a Win32 KMT handle to be used for exporting. (D3DKMT_HANDLE)
    fabric    = 0x8   ///< Allows a fabric handle to be used for exporting. (cudaMemFabricHandle_t)
  };

  /**
   * @brief Flags for specifying memory pool usage.
   *
   * @note These values are exact copies from the runtime API (cudaMemPoolProps::usage;
   * cudaMemPoolCreateUsageHwDecompress, CUDA 12.8). As in RMM, no constructor takes them: the
   * resource sets hw_decompress itself whenever the driver supports it.
   */
  enum class mempool_usage : unsigned short {
    hw_decompress = 0x2  ///< If set indicates that the memory can be used as a buffer for
                         ///< hardware accelerated decompression.
  };

  /**
   * @brief Constructs a cuda_async_memory_resource with the optionally specified initial pool
   * size and release threshold.
   *
   * If the pool size grows beyond the release threshold, unused memory held by the pool will be
   * released at the next synchronization event.
   *
   * @param initial_pool_size Optional initial size in bytes of the pool. If provided, the pool
   * will be primed by allocating and immediately deallocating this amount of memory on the
   * default CUDA stream (the constructor waits for both).
   * @param release_threshold Optional release threshold size in bytes of the pool. If no value
   * is provided, the release threshold is set to the maximum value of std::uint64_t, so that the
   * pool retains memory across synchronization events unless the caller specifies otherwise.
   * @param export_handle_type Optional cudaMemAllocationHandleType that allocations from this
   * resource should support interprocess communication (IPC). Default is
   * cudaMemHandleTypeNone for no IPC support.
   *
   * @throws rmm::logic_error if the current device does not support memory pools
   * (cudaDevAttrMemoryPoolsSupported), if it does not support @p export_handle_type for memory
   * pools (cudaDevAttrMemoryPoolSupportedHandleTypes; win32 handles are never supported on
   * Linux), or if the driver refuses the pool as unsupported or not permitted (fabric handles
   * without an IMEX channel); the message names the handle type and the device.
   * @throws rmm::out_of_memory if priming with @p initial_pool_size fails for lack of memory.
   * @throws rmm::cuda_error if another CUDA call fails.
   */
  cuda_async_memory_resource(std::optional<std::size_t> initial_pool_size             = {},
                             std::optional<std::size_t> release_threshold             = {},
                             std::optional<allocation_handle_type> export_handle_type = {})
      : shared_base{cuda::std::in_place_type<detail::cuda_async_memory_resource_impl>,
                    initial_pool_size,
                    release_threshold,
                    static_cast<int>(export_handle_type.value_or(allocation_handle_type::none))} {}

  ~cuda_async_memory_resource() = default;
  cuda_async_memory_resource(cuda_async_memory_resource const&) =
      default;  ///< Default copy constructor.
  cuda_async_memory_resource(cuda_async_memory_resource&&) =
      default;  ///< Default move constructor.
  /// @brief Default copy assignment operator. @return cuda_async_memory_resource& *this
  cuda_async_memory_resource& operator=(cuda_async_memory_resource const&) = default;
  /// @brief Default move assignment operator. @return cuda_async_memory_resource& *this
  cuda_async_memory_resource& operator=(cuda_async_memory_resource&&) = default;

  /**
   * @brief Returns the underlying native handle to the CUDA pool.
   * @return cudaMemPool_t Handle to the underlying CUDA pool
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return state().core().handle(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(cuda_async_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

 private:
  friend class detail::driver_pool_interface<cuda_async_memory_resource>;

  [[nodiscard]] detail::cuda_async_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::cuda_async_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
  [[nodiscard]] detail::driver_pool_core const& pool_core() const { return state().core(); }
};

static_assert(cuda::mr::resource_with<cuda_async_memory_resource, cuda::mr::device_accessible>);
static_assert(static_cast<int>(cuda_async_memory_resource::allocation_handle_type::none) ==
              cudaMemHandleTypeNone);
static_assert(
    static_cast<int>(cuda_async_memory_resource::allocation_handle_type::posix_file_descriptor) ==
    cudaMemHandleTypePosixFileDescriptor);
static_assert(static_cast<int>(cuda_async_memory_resource::allocation_handle_type::win32) ==
              cudaMemHandleTypeWin32);
static_assert(static_cast<int>(cuda_async_memory_resource::allocation_handle_type::win32_kmt) ==
              cudaMemHandleTypeWin32Kmt);
static_assert(static_cast<int>(cuda_async_memory_resource::allocation_handle_type::fabric) ==
              cudaMemHandleTypeFabric);
static_assert(static_cast<int>(cuda_async_memory_resource::mempool_usage::hw_decompress) ==
              cudaMemPoolCreateUsageHwDecompress);

}  // namespace rmm::mr
