/**
 * @file cuda_memory_resource.hpp
 * @brief Memory resource that uses cudaMalloc/cudaFree for allocation/deallocation.
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/stateless_cuda_resource.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>

#include <cstddef>

namespace rmm::mr {

/**
 * @brief Memory resource that uses cudaMalloc/cudaFree for allocation/deallocation.
 *
 * Stateless: all instances are interchangeable and compare equal. Allocation is synchronous;
 * the stream argument of allocate() and deallocate() is ignored. A request of 0 bytes returns
 * nullptr, and deallocating nullptr does nothing. Pointers are aligned to at least
 * CUDA_ALLOCATION_ALIGNMENT (256) bytes; larger alignments are refused with rmm::logic_error.
 * Out of memory throws rmm::out_of_memory whose report() gives the resource's name, the requested
 * bytes, the current device and its free and total memory, and the CUDA call and error as reason
 * (no stream: it is ignored). The members allocate, deallocate, allocate_sync, deallocate_sync, ==
 * and != come from detail::stateless_cuda_resource, which documents them.
 *
 * Thread-safety: all member functions may be called concurrently.
 */
class cuda_memory_resource : public detail::stateless_cuda_resource<cuda_memory_resource> {
 public:
  cuda_memory_resource()                            = default;
  ~cuda_memory_resource()                           = default;
  cuda_memory_resource(cuda_memory_resource const&) = default;  ///< Default copy constructor.
  cuda_memory_resource(cuda_memory_resource&&)      = default;  ///< Default move constructor.
  cuda_memory_resource& operator=(cuda_memory_resource const&) =
      default;                                                        ///< Default copy assignment.
  cuda_memory_resource& operator=(cuda_memory_resource&&) = default;  ///< Default move assignment.

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(cuda_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  friend class detail::stateless_cuda_resource<cuda_memory_resource>;
  static constexpr char const* name = "cuda_memory_resource";

  static void* do_allocate(std::size_t bytes) {
    void* ptr{nullptr};
    cudaError_t const status = cudaMalloc(&ptr, bytes);
    if (status != cudaSuccess) {
      rmm::detail::throw_resource_cuda_alloc_error(name, status, "cudaMalloc", bytes);
    }
    return ptr;
  }

  static void do_deallocate(void* ptr) noexcept { RMM_ASSERT_CUDA_SUCCESS(cudaFree(ptr)); }
};

static_assert(cuda::mr::resource_with<cuda_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
