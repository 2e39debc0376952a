/**
 * @file limiting_resource_adaptor.hpp
 * @brief An adaptor that refuses allocations beyond a byte limit, over any upstream.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/mr/detail/mechanics/limiting_resource_adaptor_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that uses an upstream resource to allocate memory and limits the total
 * allocations possible.
 *
 * Each allocation counts its size rounded up to `alignment` (the granularity in which the
 * upstream is assumed to hand out memory) against `allocation_limit`; a request that would take
 * the count above the limit throws rmm::out_of_memory without reaching the upstream; its report()
 * gives the request, the bytes in use (used_bytes), the limit (maximum_bytes), the stream and the
 * current device with its memory, and its message begins, after the adaptor's name and the
 * request, with RMM's "Exceeded memory limit (failed to allocate ...)". Allocations and
 * deallocations are otherwise forwarded unchanged (stream, size and requested alignment).
 *
 * Thread-safety: every member may be called concurrently. The count is one atomic: a request is
 * charged before the upstream is asked (and refunded if the upstream throws), so concurrent
 * requests never exceed the limit together; get_allocated_bytes() includes requests in flight.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and share one limit and one count.
 */
class limiting_resource_adaptor
    : public cuda::mr::shared_resource<detail::limiting_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::limiting_resource_adaptor_impl>;

 public:
  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(limiting_resource_adaptor const&, cuda::mr::device_accessible) noexcept {
  }

  /**
   * @brief Construct a new limiting resource adaptor using @p upstream to satisfy allocation
   * requests and limiting the total allocation amount possible.
   *
   * @param upstream The resource used for allocating/deallocating device memory
   * @param allocation_limit Maximum memory allowed for this allocator
   * @param alignment Alignment in bytes for the start of each allocated buffer: each allocation
   * counts its size rounded up to a multiple of it
   * @throws rmm::logic_error if @p alignment is not a power of two.
   */
  limiting_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
      : shared_base{cuda::std::in_place_type<detail::limiting_resource_adaptor_impl>,
                    std::move(upstream),
                    allocation_limit,
                    alignment} {}

  ~limiting_resource_adaptor() = default;

  /**
   * @brief device_async_resource_ref to the upstream resource
   * @return device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Query the number of bytes that have been allocated. Note that this can not be used to
   * know how large of an allocation is possible due to both possible fragmentation and also
   * internal page sizes and alignment that is not tracked by this allocator.
   *
   * Counts each live allocation rounded up to the alignment, including requests in flight.
   * Thread-safe.
   * @return std::size_t number of bytes that have been allocated through this allocator.
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const { return state().get_allocated_bytes(); }

  /**
   * @brief Query the maximum number of bytes that this allocator is allowed to allocate. This is
   * the limit on the allocator and not a representation of the underlying device. The device may
   * not be able to support this limit.
   *
   * @return std::size_t max number of bytes allowed for this allocator
   */
  [[nodiscard]] std::size_t get_allocation_limit() const { return state().get_allocation_limit(); }

 private:
  [[nodiscard]] detail::limiting_resource_adaptor_impl& state() const noexcept {
    return detail::shared_state<detail::limiting_resource_adaptor_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<limiting_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
