/**
 * @file prefetch_resource_adaptor.hpp
 * @brief An adaptor that prefetches every allocation to the current device on the allocating
 * stream, so that managed memory is resident on the GPU before its first kernel touches it.
 */
#pragma once

#include <rmm/mr/detail/mechanics/prefetch_resource_adaptor_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that prefetches all memory allocations.
 *
 * After each allocation from the upstream the adaptor calls rmm::prefetch on the whole
 * allocation, to the device that is current at that moment, on the stream of the allocation
 * (allocate_sync: on the default stream, not waited for). Over managed memory
 * (managed_memory_resource, cuda_async_managed_memory_resource, a pool over either) this
 * populates the pages on the GPU up front instead of faulting them in from the first kernel.
 * As rmm::prefetch documents, memory that is not managed (plain device memory, pinned host
 * memory: CUDA answers cudaErrorInvalidValue, which is cleared) and devices without concurrent
 * managed access make the prefetch a no-op, so the adaptor composes with every resource and
 * every allocation succeeds as the upstream's would. Deallocation goes straight to the upstream.
 *
 * Cost: per allocation, cudaGetDevice, a device attribute query and one cudaMemPrefetchAsync
 * call (microseconds of host time, not a synchronisation); the migration itself runs on the
 * stream. With memory that cannot be prefetched the call returns at once.
 *
 * Allocation throws what the upstream throws, or rmm::cuda_error (after giving the memory back
 * to the upstream) if the prefetch fails for any other reason, such as an invalid stream.
 *
 * Thread-safety: as thread-safe as the upstream; the adaptor holds no mutable state.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal, independently constructed adaptors do not.
 */
class prefetch_resource_adaptor
    : public cuda::mr::shared_resource<detail::prefetch_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::prefetch_resource_adaptor_impl>;

 public:
  /**
   * @brief Construct a new prefetch resource adaptor using @p upstream to satisfy allocation
   * requests.
   *
   * @param upstream The resource used for allocating/deallocating device memory; any
   * device-accessible resource, held by value. A resource_ref is held as a reference: its
   * resource must outlive the adaptor.
   */
  explicit prefetch_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
      : shared_base{cuda::std::in_place_type<detail::prefetch_resource_adaptor_impl>,
                    std::move(upstream)} {}

  ~prefetch_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   * @pre Not moved-from.
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return detail::shared_state<detail::prefetch_resource_adaptor_impl>(
               static_cast<shared_base const&>(*this))
        .get_upstream_resource();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(prefetch_resource_adaptor const&, cuda::mr::device_accessible) noexcept {
  }
};

static_assert(cuda::mr::resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
