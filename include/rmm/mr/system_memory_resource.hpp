/**
 * @file system_memory_resource.hpp
 * @brief Memory resource that uses the system allocator (malloc/free), for GPUs that can access
 * system allocated memory (SAM) through HMM or ATS.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>

namespace rmm::mr {

namespace detail {

/**
 * @brief True if @p device can access pageable system memory (HMM on x86 PCIe systems, ATS on
 * Grace Hopper), as reported by `cudaDevAttrPageableMemoryAccess`.
 * @throws rmm::cuda_error if the attribute cannot be queried.
 */
inline bool is_system_memory_supported(cuda_device_id device) {
  int pageable_access{0};
  RMM_CUDA_TRY(
      cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, device.value()));
  return pageable_access != 0;
}

}  // namespace detail

/**
 * @brief Memory resource that uses malloc/free (`std::aligned_alloc`) for allocation and
 * deallocation.
 *
 * The memory is accessible from host and device only where the GPU can access system allocated
 * memory: HMM (CUDA 12.2+ with the open kernel module, Linux 6.1.24+/6.2.11+/6.3+, Turing or
 * newer, x86-64) or ATS (Grace Hopper). The constructor checks this on the current device.
 *
 * Stateless: all instances compare equal. 0 bytes gives nullptr. Alignment is at least 256.
 * Thread-safety: all member functions may be called concurrently.
 */
class system_memory_resource {
 public:
  /**
   * @brief Constructs the resource.
   * @throws rmm::logic_error if the current device cannot access system allocated memory (the
   * message names the device and what is missing).
   * @throws rmm::cuda_error if the device cannot be queried.
   */
  system_memory_resource() {
    auto const device = get_current_cuda_device();
    RMM_EXPECTS(detail::is_system_memory_supported(device),
                "system_memory_resource: device " + std::to_string(device.value()) +
                    " cannot access pageable system memory (cudaDevAttrPageableMemoryAccess is 0); "
                    "it needs HMM or ATS");
  }
  ~system_memory_resource()                                        = default;
  system_memory_resource(system_memory_resource const&)            = default;  ///< Default copy.
  system_memory_resource(system_memory_resource&&)                 = default;  ///< Default move.
  system_memory_resource& operator=(system_memory_resource const&) = default;  ///< Default copy.
  system_memory_resource& operator=(system_memory_resource&&)      = default;  ///< Default move.

  /**
   * @brief Allocates at least @p bytes bytes. The stream argument is ignored.
   * @throws rmm::logic_error if @p alignment is not a power of two or exceeds 4096 bytes.
   * @throws rmm::out_of_memory if the system allocator returns nothing or the request is too
   * large; its report() names the resource, the request and the reason (no device: the memory
   * is pageable host memory).
   */
  void* allocate([[maybe_unused]] cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return allocate_sync(bytes, alignment);
  }

  /// @brief Synchronises @p stream, then frees @p ptr, so that no queued work still uses it.
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(stream.get()));
    deallocate_sync(ptr, bytes, alignment);
  }

  /// @brief Allocates at least @p bytes bytes synchronously. Throws as allocate().
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    rmm::detail::expect_supported_alignment(alignment, max_alignment, "system_memory_resource");
    if (bytes == 0) {
      return nullptr;
    }
    auto const align =
        alignment < CUDA_ALLOCATION_ALIGNMENT ? CUDA_ALLOCATION_ALIGNMENT : alignment;
    if (bytes > SIZE_MAX - align) {
      throw_out_of_memory(
          bytes, "the request is too large to be aligned to " + std::to_string(align) + " bytes");
    }
    // aligned_alloc requires the size to be a multiple of the alignment.
    void* ptr = std::aligned_alloc(align, align_up(bytes, align));
    if (ptr == nullptr) {
      throw_out_of_memory(bytes, "the system allocator (aligned_alloc) returned nothing");
    }
    return ptr;
  }

  /// @brief Frees @p ptr synchronously.
  void deallocate_sync(
      void* ptr,
      [[maybe_unused]] std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    std::free(ptr);
  }

  /// @brief All instances are equivalent. @return true
  friend bool operator==(system_memory_resource const&, system_memory_resource const&) noexcept {
    return true;
  }
  /// @brief All instances are equivalent. @return false
  friend bool operator!=(system_memory_resource const&, system_memory_resource const&) noexcept {
    return false;
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(system_memory_resource const&, cuda::mr::device_accessible) noexcept {}
  /// @brief Enables the cuda::mr::host_accessible property.
  friend void get_property(system_memory_resource const&, cuda::mr::host_accessible) noexcept {}

  /// @brief The largest alignment this resource honours (one page).
  static constexpr std::size_t max_alignment = 4096;

 private:
  // The report names the resource, the request and the reason; pageable host memory belongs to no
  // device, so the device fields stay empty.
  [[noreturn]] static void throw_out_of_memory(std::size_t bytes, std::string reason) {
    out_of_memory_report report;
    report.resource        = "system_memory_resource";
    report.requested_bytes = bytes;
    report.reason          = std::move(reason);
    throw rmm::out_of_memory{std::move(report)};
  }
};

static_assert(cuda::mr::resource_with<system_memory_resource,
                                      cuda::mr::device_accessible,
                                      cuda::mr::host_accessible>);

}  // namespace rmm::mr
