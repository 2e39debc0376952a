/**
 * @file cuda_memory_resource.hpp
 * @brief Memory resource that uses cudaMalloc/cudaFree for allocation/deallocation.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>

namespace rmm::mr {

/**
 * @brief Memory resource that uses cudaMalloc/cudaFree for allocation/deallocation.
 *
 * Stateless: all instances are interchangeable and compare equal. Allocation is synchronous;
 * the stream argument of allocate() and deallocate() is ignored (the CUDA call itself orders
 * the operation with respect to the device). A request of 0 bytes returns nullptr, and
 * deallocating nullptr does nothing. Returned pointers are aligned to at least
 * CUDA_ALLOCATION_ALIGNMENT (256) bytes; larger alignments are refused.
 *
 * Thread-safety: all member functions may be called concurrently.
 */
class cuda_memory_resource {
 public:
  cuda_memory_resource()                            = default;
  ~cuda_memory_resource()                           = default;
  cuda_memory_resource(cuda_memory_resource const&) = default;  ///< Default copy constructor.
  cuda_memory_resource(cuda_memory_resource&&)      = default;  ///< Default move constructor.
  cuda_memory_resource& operator=(cuda_memory_resource const&) =
      default;                                                        ///< Default copy assignment.
  cuda_memory_resource& operator=(cuda_memory_resource&&) = default;  ///< Default move assignment.

  /**
   * @brief Allocates at least @p bytes bytes. The stream argument is ignored.
   * @throws rmm::logic_error if @p alignment is not a power of two or exceeds 256.
   * @throws rmm::out_of_memory if CUDA reports out-of-memory; the message gives the requested
   * bytes, the device and its free memory.
   * @throws rmm::bad_alloc if the allocation fails for any other reason.
   */
  void* allocate([[maybe_unused]] cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return allocate_sync(bytes, alignment);
  }

  /// @brief Frees @p ptr, which a call with the same @p bytes returned. The stream is ignored.
  void deallocate([[maybe_unused]] cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  /// @brief Allocates at least @p bytes bytes synchronously. Throws as allocate().
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    rmm::detail::expect_supported_alignment(
        alignment, rmm::CUDA_ALLOCATION_ALIGNMENT, "cuda_memory_resource");
    if (bytes == 0) {
      return nullptr;
    }
    void* ptr{nullptr};
    RMM_CUDA_TRY_ALLOC(cudaMalloc(&ptr, bytes), bytes);
    return ptr;
  }

  /// @brief Frees @p ptr synchronously. @p bytes and @p alignment are those given at allocation.
  void deallocate_sync(
      void* ptr,
      [[maybe_unused]] std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr != nullptr) {
      RMM_ASSERT_CUDA_SUCCESS(cudaFree(ptr));
    }
  }

  /// @brief All instances are equivalent. @return true
  bool operator==(cuda_memory_resource const&) const noexcept { return true; }
  /// @brief All instances are equivalent. @return false
  bool operator!=(cuda_memory_resource const&) const noexcept { return false; }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(cuda_memory_resource const&, cuda::mr::device_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<cuda_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
