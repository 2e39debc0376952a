/**
 * @file thrust_allocator_adaptor.hpp
 * @brief rmm::mr::thrust_allocator: a Thrust allocator that takes its memory from a resource, on a
 * stream.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/device_malloc_allocator.h>
#include <thrust/device_ptr.h>
#include <thrust/memory.h>
#include <cuda/memory_resource>

#include <cstddef>
#include <limits>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief An allocator for Thrust containers and algorithms that allocates from a device memory
 * resource, stream-ordered on one stream.
 *
 * Unlike a resource, a thrust_allocator is typed (it allocates objects of type @p T) and can be
 * rebound to any other type; rebound copies share the resource and the stream. It derives from
 * `thrust::device_malloc_allocator<T>` so that Thrust treats its pointers as device pointers
 * (`thrust::device_ptr<T>`), and Thrust dispatches algorithms over them to the CUDA backend.
 *
 * The allocator holds its resource as an owning `cuda::mr::any_resource`: given a resource object
 * it shares it (the value-type resources of this library share state between copies) or copies
 * it; given a reference (the default, or a device_async_resource_ref) it refers to it, and the
 * caller keeps the referenced resource alive for as long as the allocator or memory from it
 * lives.
 *
 * The allocator records the device current at construction and makes it current around every
 * allocate() and deallocate(), so that a container built on one device can be resized or
 * destroyed while another is current. The resource must be valid for that device.
 *
 * Allocations are aligned to at least CUDA_ALLOCATION_ALIGNMENT (and to `alignof(T)` where that
 * is larger).
 *
 * Equality is that of the base class, as in RMM: all thrust_allocators compare equal, whatever
 * their resources and streams, and Thrust containers do not propagate allocators on copy
 * assignment, move assignment or swap. The target of a thrust::device_vector move assignment,
 * and each of two swapped vectors, therefore keeps its own allocator (resource and stream) and
 * later frees the storage it took over through it: move and swap only between vectors whose
 * allocators use the same resource (their streams may differ: the storage is then freed
 * stream-ordered on the keeping vector's stream).
 *
 * Thread-safety: as thread-safe as the resource. A thrust_allocator object is a value; distinct
 * objects (copies included) may be used concurrently.
 *
 * @note Constructing, copying and using the allocator itself works in any translation unit.
 * Containers and algorithms of Thrust's CUDA backend that it is used with (rmm::device_vector,
 * rmm::exec_policy) need CUDA translation units compiled by nvcc: see docs/thrust_and_prefetch.md.
 *
 * @tparam T The type of the objects allocated.
 */
template <typename T>
class thrust_allocator : public thrust::device_malloc_allocator<T> {
 public:
  using Base      = thrust::device_malloc_allocator<T>;  ///< The base type of this allocator.
  using pointer   = typename Base::pointer;              ///< The pointer type (device_ptr<T>).
  using size_type = typename Base::size_type;            ///< The size type.

  /**
   * @brief Provides the type of a thrust_allocator instantiated with another type.
   * @tparam U The other type.
   */
  template <typename U>
  struct rebind {
    using other = thrust_allocator<U>;  ///< The rebound allocator type.
  };

  /**
   * @brief An allocator on the default stream using the current device's resource
   * (rmm::mr::get_current_device_resource_ref(), referred to, not copied).
   * @throws rmm::cuda_error if there is no current device.
   */
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator() : thrust_allocator{cuda_stream_view{}} {}

  /**
   * @brief An allocator on @p stream using the current device's resource.
   * @param stream The stream on which memory is allocated and deallocated.
   * @throws rmm::cuda_error if there is no current device.
   */
  RMM_EXEC_CHECK_DISABLE
  explicit thrust_allocator(cuda_stream_view stream)
      : thrust_allocator{stream, get_current_device_resource_ref()} {}

  /**
   * @brief An allocator on @p stream using @p mr.
   * @param stream The stream on which memory is allocated and deallocated.
   * @param mr The resource that allocates the memory: a resource object (shared or copied) or a
   * reference (which must outlive the allocator, its copies and the memory they allocate).
   * @throws rmm::cuda_error if there is no current device.
   */
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(cuda_stream_view stream, cuda::mr::any_resource<cuda::mr::device_accessible> mr)
      : stream_{stream}, mr_{std::move(mr)}, device_{get_current_cuda_device()} {}

  /**
   * @brief Copies the resource handle, the stream and the recorded device of @p other.
   * @throws what copying the type-erased resource throws (std::bad_alloc).
   */
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(thrust_allocator const& other)
      : Base{other}, stream_{other.stream_}, mr_{other.mr_}, device_{other.device_} {}

  /**
   * @brief Takes over the resource handle of @p other and copies its stream and device.
   *
   * @p other is left without a resource: it may be assigned to or destroyed, and allocate() on
   * it throws rmm::logic_error.
   */
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(thrust_allocator&& other) noexcept
      : Base{std::move(other)},
        stream_{other.stream_},
        mr_{std::move(other.mr_)},
        device_{other.device_} {}

  /**
   * @brief Rebinding copy: an allocator of T with the resource, stream and device of @p other.
   * @throws what copying the type-erased resource throws (std::bad_alloc).
   */
  RMM_EXEC_CHECK_DISABLE
  template <typename U>
  thrust_allocator(thrust_allocator<U> const& other)
      : Base{other}, stream_{other.stream_}, mr_{other.mr_}, device_{other.device_} {}

  /// @brief Copy assignment: takes the resource, stream and device of the other allocator.
  thrust_allocator& operator=(thrust_allocator const&) = default;

  /// @brief Move assignment: takes over the other allocator's resource handle.
  thrust_allocator& operator=(thrust_allocator&&) noexcept = default;

  ~thrust_allocator() = default;

  /**
   * @brief Allocates uninitialised storage for @p num objects of type T, stream-ordered on
   * stream(), with the recorded device current.
   * @param num The number of objects.
   * @return A device pointer to the storage.
   * @throws rmm::bad_alloc if `num * sizeof(T)` overflows (the message names @p num).
   * @throws rmm::logic_error if this allocator was moved from.
   * @throws what the resource throws (rmm::out_of_memory, rmm::bad_alloc), and rmm::cuda_error if
   * the recorded device cannot be made current.
   */
  pointer allocate(size_type num) {
    RMM_EXPECTS(num <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                "thrust_allocator: " + std::to_string(num) + " objects of " +
                    std::to_string(sizeof(T)) + " bytes overflow std::size_t",
                rmm::bad_alloc);
    RMM_EXPECTS(mr_.has_value(), "thrust_allocator: allocate() on a moved-from allocator");
    cuda_set_device_raii const on_device{device_};
    return thrust::device_pointer_cast(
        static_cast<T*>(mr_.allocate(stream_, num * sizeof(T), alignment)));
  }

  /**
   * @brief Deallocates storage returned by allocate(), stream-ordered on stream(), with the
   * recorded device current.
   * @param ptr The pointer allocate(num) returned, through an allocator using the same resource.
   * @param num The count given to that allocate().
   * @pre The recorded device can be made current (a failure terminates: this is noexcept).
   */
  void deallocate(pointer ptr, size_type num) noexcept {
    cuda_set_device_raii const on_device{device_};
    mr_.deallocate(stream_, thrust::raw_pointer_cast(ptr), num * sizeof(T), alignment);
  }

  /**
   * @brief A reference to the resource this allocator allocates from; valid while this allocator
   * lives.
   */
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept {
    return rmm::device_async_resource_ref{mr_};
  }

  /// @brief The stream on which this allocator allocates and deallocates.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  /**
   * @brief Declares that a thrust_allocator provides device-accessible memory.
   */
  friend void get_property(thrust_allocator const&, cuda::mr::device_accessible) noexcept {}

 private:
  template <typename U>
  friend class thrust_allocator;

  static constexpr std::size_t alignment = alignof(T) > CUDA_ALLOCATION_ALIGNMENT
                                               ? alignof(T)
                                               : CUDA_ALLOCATION_ALIGNMENT;

  cuda_stream_view stream_;
  // mutable: allocating through the type-erased handle needs a non-const object, and
  // get_upstream_resource() const hands out a reference to it; which resource the allocator
  // uses never changes through it.
  mutable cuda::mr::any_resource<cuda::mr::device_accessible> mr_;
  cuda_device_id device_;
};

}  // namespace rmm::mr
