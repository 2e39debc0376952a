/**
 * @file aligned_resource_adaptor.hpp
 * @brief An adaptor that gives allocations from any upstream a larger alignment than the
 * upstream's 256 bytes.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/aligned_resource_adaptor_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that adapts an upstream resource to allocate memory with a specified alignment.
 *
 * If the requested alignment is smaller than CUDA_ALLOCATION_ALIGNMENT (256 bytes) it is
 * increased to CUDA_ALLOCATION_ALIGNMENT. An optional threshold controls the minimum size from
 * which the custom alignment is applied: allocations of at least `alignment_threshold` bytes are
 * aligned to `alignment`; smaller ones go to the upstream unchanged (256-byte aligned). The
 * default threshold, 0, aligns every allocation.
 *
 * How: an aligned allocation of `bytes` asks the upstream for `align_up(bytes, alignment) +
 * (alignment - 256)` bytes and returns the first `alignment`-aligned address in it, so that the
 * whole span `[ptr, ptr + align_up(bytes, alignment))` is backed. When that address differs from
 * the upstream's pointer the pair is kept in a map (under a mutex) until deallocation, which
 * gives the upstream its own pointer and size back. Deallocation must therefore pass the same
 * `bytes` and alignment as the allocation (as every resource requires).
 *
 * The alignment argument of allocate() is honoured too: any power of two up to `alignment` (at
 * least 256) is served, also below the threshold; larger ones are refused with rmm::logic_error.
 *
 * Cost: below the threshold, none. At or above it, up to `alignment - 256` bytes of padding plus
 * the rounding of the size to a multiple of `alignment`, and a map insertion and lookup (one
 * mutex each) whenever the upstream's pointer was not already aligned.
 *
 * Thread-safety: as thread-safe as the upstream; the adaptor's own map is protected by a mutex.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal (and may free each other's allocations),
 * independently constructed adaptors do not.
 */
class aligned_resource_adaptor
    : public cuda::mr::shared_resource<detail::aligned_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::aligned_resource_adaptor_impl>;

 public:
  /// @brief The default alignment threshold used by the adaptor (0 = always align).
  static constexpr std::size_t default_alignment_threshold =
      detail::aligned_resource_adaptor_impl::default_alignment_threshold;

  /**
   * @brief Construct an aligned resource adaptor using @p upstream to satisfy allocation requests.
   *
   * @param upstream The resource used for allocating/deallocating device memory; any
   * device-accessible resource whose allocations are 256-byte aligned (every resource of this
   * library), held by value. A resource_ref is held as a reference: its resource must outlive the
   * adaptor.
   * @param alignment The size used for allocation alignment (raised to CUDA_ALLOCATION_ALIGNMENT
   * if smaller).
   * @param alignment_threshold Only allocations of at least this many bytes are aligned to
   * @p alignment.
   * @throws rmm::logic_error if @p alignment is not a power of 2; the message gives the value.
   */
  explicit aligned_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                    std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT,
                                    std::size_t alignment_threshold = default_alignment_threshold)
      : shared_base{cuda::std::in_place_type<detail::aligned_resource_adaptor_impl>,
                    std::move(upstream),
                    alignment,
                    alignment_threshold} {}

  ~aligned_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   * @pre Not moved-from.
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return detail::shared_state<detail::aligned_resource_adaptor_impl>(
               static_cast<shared_base const&>(*this))
        .get_upstream_resource();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(aligned_resource_adaptor const&, cuda::mr::device_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<aligned_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
