/**
 * @file driver_pool_oom.hpp
 * @brief The out-of-memory reports of the driver-pool resources (cuda_async_*): a request above
 * the limit or the pool's max_size, a failed cudaMallocFromPoolAsync, a failed priming, each
 * with the pool's use as data. Nothing here is for direct use.
 *
 * Thread-safety: every function may be called concurrently (CUDA's pool queries are thread-safe).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/// @brief "0x..." for a pool handle in messages.
[[nodiscard]] inline std::string pool_address(cudaMemPool_t pool) {
  std::ostringstream out;
  out << static_cast<void const*>(pool);
  return out.str();
}

/**
 * @brief The start of a driver pool's report: @p resource, the request, the stream (none for a
 * constructor's request: pass std::nullopt) and @p device (the current one if negative) with its
 * memory.
 */
[[nodiscard]] inline out_of_memory_report pool_oom_report(char const* resource,
                                                          std::size_t bytes,
                                                          std::optional<cudaStream_t> stream,
                                                          int device) {
  out_of_memory_report report;
  report.resource        = resource;
  report.requested_bytes = bytes;
  if (stream) {
    report.stream = reinterpret_cast<std::uintptr_t>(*stream);
  }
  rmm::detail::add_device_memory(report, device);
  return report;
}

/**
 * @brief Sets @p report's reserved, used and free bytes from @p pool's attributes
 * (cudaMemPoolAttrReservedMemCurrent, cudaMemPoolAttrUsedMemCurrent). Never throws for CUDA
 * failures: the fields stay empty and the error slot is cleared.
 * @return whether the attributes could be read.
 */
inline bool add_pool_usage(out_of_memory_report& report, cudaMemPool_t pool) noexcept {
  std::uint64_t used{0};
  std::uint64_t reserved{0};
  bool const ok =
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess;
  rmm::detail::clear_last_cuda_error();
  if (ok) {
    report.reserved_bytes = static_cast<std::size_t>(reserved);
    report.used_bytes     = static_cast<std::size_t>(used);
    report.free_bytes     = static_cast<std::size_t>(reserved > used ? reserved - used : 0);
  }
  return ok;
}

/// @brief The smaller of a limit and a max_size, 0 meaning none; empty if neither is set.
[[nodiscard]] inline std::optional<std::size_t> pool_maximum(std::size_t limit,
                                                             std::size_t max_size) noexcept {
  if (limit == 0 && max_size == 0) {
    return std::nullopt;
  }
  if (limit == 0 || max_size == 0) {
    return limit == 0 ? max_size : limit;
  }
  return limit < max_size ? limit : max_size;
}

/**
 * @brief Throws the out_of_memory of a request of @p bytes above the pool's @p max_size (the
 * driver is not asked): the max_size as maximum, the pool's use, the stream and the device.
 */
[[noreturn]] inline void throw_above_max_size(char const* resource,
                                              cudaMemPool_t pool,
                                              std::size_t bytes,
                                              cudaStream_t stream,
                                              int device,
                                              std::size_t max_size) {
  out_of_memory_report report = pool_oom_report(resource, bytes, stream, device);
  report.reason = "larger than the pool's max_size of " + std::to_string(max_size) + " bytes";
  add_pool_usage(report, pool);
  report.maximum_bytes = max_size;
  throw rmm::out_of_memory{std::move(report)};
}

/**
 * @brief Throws the out_of_memory of a request of @p bytes that would take the bytes in use
 * through this library's resources over @p pool (@p observed) beyond @p limit: the limit as
 * maximum, @p observed as used, the pool's reserved bytes, the stream and the device.
 */
[[noreturn]] inline void throw_above_limit(char const* resource,
                                           cudaMemPool_t pool,
                                           std::size_t bytes,
                                           cudaStream_t stream,
                                           int device,
                                           std::size_t limit,
                                           std::size_t observed) {
  out_of_memory_report report = pool_oom_report(resource, bytes, stream, device);
  report.reason = "the limit of " + std::to_string(limit) + " bytes would be exceeded (" +
                  std::to_string(observed) +
                  " bytes used through this library's resources over pool " + pool_address(pool) +
                  ")";
  add_pool_usage(report, pool);
  report.used_bytes    = observed;  // what the limit counts
  report.maximum_bytes = limit;
  throw rmm::out_of_memory{std::move(report)};
}

/**
 * @brief After cudaMallocFromPoolAsync of @p bytes returned @p status: throws out_of_memory for
 * cudaErrorMemoryAllocation, bad_alloc (with the same message) otherwise. The report gives the
 * call and the error, the pool's used and reserved bytes, its limit (0: none) and max_size (0:
 * unknown), the stream and the device with its memory. Clears the error slot.
 */
[[noreturn]] inline void throw_pool_allocation_error(cudaError_t status,
                                                     char const* resource,
                                                     cudaMemPool_t pool,
                                                     std::size_t bytes,
                                                     cudaStream_t stream,
                                                     int device,
                                                     std::size_t limit,
                                                     std::size_t max_size) {
  rmm::detail::clear_last_cuda_error();
  out_of_memory_report report = pool_oom_report(resource, bytes, stream, device);
  report.reason = std::string{"cudaMallocFromPoolAsync returned "} + cudaGetErrorName(status) +
                  " (" + cudaGetErrorString(status) + ") from pool " + pool_address(pool) + ": ";
  if (add_pool_usage(report, pool)) {
    report.reason += "pool used " + std::to_string(*report.used_bytes) + " bytes, reserved " +
                     std::to_string(*report.reserved_bytes) + " bytes, ";
  }
  report.reason +=
      limit == 0 ? std::string{"no limit"} : "limit " + std::to_string(limit) + " bytes";
  if (max_size != 0) {
    report.reason += ", max_size " + std::to_string(max_size) + " bytes";
  }
  report.maximum_bytes = pool_maximum(limit, max_size);
  if (status == cudaErrorMemoryAllocation) {
    throw rmm::out_of_memory{std::move(report)};
  }
  throw rmm::bad_alloc{to_string(report)};
}

/**
 * @brief Primes @p pool: allocates @p bytes from it on the default stream and frees them, then
 * waits for both, so that the pool reserves the memory (and keeps it if its release threshold
 * allows). @p device is the pool's device (-1 for host memory: the current device is reported).
 * @throws rmm::out_of_memory (its report: the size, the device and its memory) if the memory
 * cannot be had, rmm::bad_alloc or rmm::cuda_error for other CUDA failures.
 */
inline void prime_pool(cudaMemPool_t pool,
                       std::size_t bytes,
                       char const* resource_name,
                       int device) {
  void* ptr{nullptr};
  cudaError_t const status = cudaMallocFromPoolAsync(&ptr, bytes, pool, cuda_stream_default);
  if (status != cudaSuccess) {
    rmm::detail::clear_last_cuda_error();
    out_of_memory_report report = pool_oom_report(resource_name, bytes, std::nullopt, device);
    report.reason = "priming the pool with initial_pool_size " + std::to_string(bytes) +
                    " bytes: cudaMallocFromPoolAsync returned " + cudaGetErrorName(status);
    add_pool_usage(report, pool);
    if (status == cudaErrorMemoryAllocation) {
      throw rmm::out_of_memory{std::move(report)};
    }
    throw rmm::bad_alloc{to_string(report)};
  }
  RMM_CUDA_TRY(cudaFreeAsync(ptr, cuda_stream_default));
  cuda_stream_default.synchronize();
}

}  // namespace rmm::mr::detail
