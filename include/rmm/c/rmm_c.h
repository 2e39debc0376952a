/**
 * @file rmm_c.h
 * @brief C interface of librmm_c: the library's memory resources behind plain C functions, with
 * the signatures PyTorch's CUDAPluggableAllocator and CuPy's CFunctionAllocator call.
 *
 * Pure C (C99), no CUDA header needed. Every allocation goes through the per-device resource
 * registry (rmm::mr::get_per_device_resource_ref). On the first allocation for a device, the
 * configured resource is created on that device and installed in the registry
 * (rmm::mr::set_per_device_resource). The configuration comes from rmm_c_configure() or, if that
 * was never called, from the environment, read once at the first allocation:
 *
 * | variable | meaning | default |
 * | --- | --- | --- |
 * | `RMM_C_RESOURCE` | `cuda`, `cuda_async`, `pool`, `expandable`, `arena` or `binning` | `pool` |
 * | `RMM_C_INITIAL_POOL_SIZE` | size string ("512MB", "2 GB") or percentage of the device's total
 * memory ("50%") | resource's default | | `RMM_C_MAXIMUM_POOL_SIZE` | same; a hard cap on the pool
 * | no cap |
 *
 * An invalid configuration is reported once on stderr and by rmm_c_last_error(); every
 * allocation then fails. See docs/c-library.md.
 *
 * Thread safety: every function may be called concurrently from any thread.
 */
#ifndef RMM_C_RMM_C_H
#define RMM_C_RMM_C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#if defined(_WIN32)
#define RMM_C_API __declspec(dllexport)
#else
#define RMM_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A CUDA stream handle: pass a `cudaStream_t` (it is a pointer, `struct CUstream_st*`, so
 * the calling convention is the same). NULL is the legacy default stream.
 */
typedef void* rmm_c_stream_t;

/**
 * @brief Allocates @p size bytes on device @p device, ordered on @p stream (PyTorch
 * CUDAPluggableAllocator's `alloc_fn`).
 *
 * If @p device is not the calling thread's current device, it is made current for the call and
 * the previous one restored afterwards. The memory is 256-byte aligned and may be used on
 * @p stream at once, on other streams after synchronising with it.
 *
 * @param size Bytes to allocate; 0 returns NULL without an error.
 * @param device A device id in [0, number of devices).
 * @param stream The stream the allocation is ordered on.
 * @return The allocation, or NULL on failure: invalid configuration, negative size, invalid
 * device, out of memory or a CUDA error. The reason is then available from rmm_c_last_error().
 * @note The first call fixes the configuration (rmm_c_configure() then fails).
 */
RMM_C_API void* rmm_c_alloc(ssize_t size, int device, rmm_c_stream_t stream);

/**
 * @brief Frees @p ptr (PyTorch CUDAPluggableAllocator's `free_fn`).
 *
 * @pre @p ptr was returned by rmm_c_alloc() with the same @p size and @p device, and not freed
 * since. @p stream is the stream the memory was last used on (PyTorch passes the allocation's
 * stream); the memory may be reused on that stream at once, on others after it completes.
 * NULL is ignored. Never fails: a CUDA error is reported by rmm_c_last_error() (and on stderr).
 */
RMM_C_API void rmm_c_free(void* ptr, ssize_t size, int device, rmm_c_stream_t stream);

/**
 * @brief CuPy CFunctionAllocator's malloc: allocates @p size bytes on @p device.
 *
 * Ordered on the legacy default stream (CuPy does not pass its current stream), which
 * synchronises with CuPy's blocking streams; see docs/c-library.md for non-blocking streams.
 * The size is remembered (in a sharded map) for rmm_c_cupy_free(), which gets none.
 *
 * @param param Ignored (CuPy passes the `param` given to CFunctionAllocator).
 * @return The device address, or 0 on failure (reason in rmm_c_last_error()). 0 for size 0.
 */
RMM_C_API intptr_t rmm_c_cupy_malloc(intptr_t param, size_t size, int device);

/**
 * @brief CuPy CFunctionAllocator's free: frees @p ptr, returned by rmm_c_cupy_malloc() for
 * @p device, on the legacy default stream. 0 is ignored; an address not from
 * rmm_c_cupy_malloc() is reported on stderr and by rmm_c_last_error(), and not freed.
 */
RMM_C_API void rmm_c_cupy_free(intptr_t param, intptr_t ptr, int device);

/**
 * @brief Sets the configuration, overriding the environment variables (which are then not
 * read). NULL for an argument means that setting's default.
 *
 * @param resource One of "cuda", "cuda_async", "pool", "expandable", "arena", "binning".
 * @param initial_size Size string ("1GB") or percentage ("50%") of the device's total memory.
 * @param maximum_size The same, a hard cap for the pool resources.
 * @return 0 on success; nonzero if a value is invalid or if an allocation already happened (the
 * configuration is fixed at the first allocation). The message is then in rmm_c_last_error()
 * and the previous configuration stays.
 */
RMM_C_API int rmm_c_configure(const char* resource,
                              const char* initial_size,
                              const char* maximum_size);

/**
 * @brief The message of the last failure in this thread, or "" if none. Thread-local; the
 * pointer stays valid until the next failing call of this thread.
 */
RMM_C_API const char* rmm_c_last_error(void);

/** @brief Byte counters of rmm_c_get_stats(). */
typedef struct rmm_c_stats {
  /** Bytes allocated through this library and not yet freed (as requested). */
  size_t bytes_in_use;
  /** The most bytes_in_use has been since start or the last rmm_c_reset_peak(). */
  size_t peak_bytes_in_use;
  /** Device memory the resource holds: the pool's memory for pool/binning/arena/expandable,
   * the driver pool's reserved memory for cuda_async, bytes_in_use for cuda. */
  size_t reserved_bytes;
  /** The most reserved_bytes has been (expandable: since start; rmm_c_reset_peak() does not
   * reset it). */
  size_t peak_reserved_bytes;
  /** Successful allocations since start (not reset). */
  uint64_t allocations;
  /** Failed allocations since start (not reset). */
  uint64_t failed_allocations;
} rmm_c_stats;

/**
 * @brief Fills @p out with the counters of @p device, or, for @p device == -1, their sums over
 * all devices (a sum of per-device peaks is an upper bound of the process-wide peak).
 * @return 0 on success; nonzero if @p out is NULL or @p device is invalid (see
 * rmm_c_last_error()). Counters are read with relaxed ordering: a consistent snapshot is not
 * guaranteed while other threads allocate.
 */
RMM_C_API int rmm_c_get_stats(int device, rmm_c_stats* out);

/** @brief Resets peak_bytes_in_use and peak_reserved_bytes of every device to their current
 * values (see rmm_c_stats for expandable). */
RMM_C_API void rmm_c_reset_peak(void);

/**
 * @brief Gives free memory back to the device on every device with an installed resource:
 * pool_memory_resource::release() for pool, expandable and binning (synchronises the device),
 * cudaMemPoolTrimTo(0) for cuda_async; nothing for cuda and arena.
 * @return 0 on success; nonzero on a CUDA error (see rmm_c_last_error()).
 */
RMM_C_API int rmm_c_release(void);

/**
 * @brief Writes out what the allocation logs (RMM_C_LOG) have buffered. The logs are also flushed
 * at normal process exit (atexit); call this before a process ends otherwise (os._exit) or to
 * read a log while the process runs. A no-op without RMM_C_LOG.
 *
 * RMM_C_LOG=PATH (read when a device's resource is installed, at its first allocation) records
 * every allocation and free of each device to a CSV in the trace format
 * (Thread,Time,Action,Pointer,Size,Stream), which rmm-replay replays: PATH itself for device 0,
 * PATH with ".deviceN" before its extension for device N, or PATH with "{device}" replaced.
 * @return 0 on success; nonzero if a log could not be written (see rmm_c_last_error()).
 */
RMM_C_API int rmm_c_flush_log(void);

/**
 * @brief The resource name in effect ("pool", ...), or NULL while the configuration is invalid.
 * Reading it does not fix the configuration. The string is static.
 */
RMM_C_API const char* rmm_c_resource_name(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RMM_C_RMM_C_H */
