/**
 * @file binning_memory_resource.hpp
 * @brief Routes each allocation to a bin resource by size; sizes above every bin go upstream.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of binning_memory_resource. Not for direct use.
class binning_memory_resource_impl : private device_binding,
                                     public stream_resource_base<binning_memory_resource_impl> {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "binning_memory_resource";
  /// The largest allocation_size that rounds up to a multiple of the alignment without wrapping.
  static constexpr std::size_t max_bin_size =
      std::numeric_limits<std::size_t>::max() - (CUDA_ALLOCATION_ALIGNMENT - 1);

 public:
  explicit binning_memory_resource_impl(upstream_t upstream) : upstream_{std::move(upstream)} {}

  binning_memory_resource_impl(upstream_t upstream,
                               std::int8_t min_size_exponent,
                               std::int8_t max_size_exponent)
      : upstream_{std::move(upstream)} {
    RMM_EXPECTS(min_size_exponent >= 0 && max_size_exponent < 63,
                std::string{name} + ": bin exponents must lie in [0, 62], got [" +
                    std::to_string(min_size_exponent) + ", " + std::to_string(max_size_exponent) +
                    "]");
    RMM_EXPECTS(min_size_exponent <= max_size_exponent,
                std::string{name} + ": min_size_exponent " + std::to_string(min_size_exponent) +
                    " exceeds max_size_exponent " + std::to_string(max_size_exponent));
    for (auto e = min_size_exponent; e <= max_size_exponent; ++e) {
      add_bin(std::size_t{1} << static_cast<unsigned>(e), std::nullopt);
    }
  }

  binning_memory_resource_impl(binning_memory_resource_impl const&)            = delete;
  binning_memory_resource_impl& operator=(binning_memory_resource_impl const&) = delete;

  // The bins it owns are destroyed with its device current.
  ~binning_memory_resource_impl() { enter_for_teardown(); }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_bound_device(name, "allocate", stream.get());
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    // A 0-byte request goes where any other size goes (the smallest bin, or the upstream when
    // there is no bin): that resource decides what an empty allocation is (the bins here return
    // nullptr), so routing needs no special case.
    return target(bytes).allocate(stream, bytes, alignment);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    // Handed to the resource that allocate() chose, nullptr included (every resource accepts
    // back what it returned).
    if (ptr != nullptr) {
      expect_bound_device_noexcept(name, "deallocate", stream.get());
    }
    target(bytes).deallocate(stream, ptr, bytes, alignment);
  }

  friend binning_memory_resource_impl* get_property(
      binning_memory_resource_impl const& self, state_of<binning_memory_resource_impl>) noexcept {
    return const_cast<binning_memory_resource_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  void add_bin(std::size_t allocation_size, std::optional<device_async_resource_ref> bin_resource) {
    RMM_EXPECTS(allocation_size > 0, std::string{name} + ": a bin's allocation_size must not be 0");
    RMM_EXPECTS(allocation_size <= max_bin_size,
                std::string{name} + ": allocation_size " + std::to_string(allocation_size) +
                    " cannot be rounded up to a multiple of " +
                    std::to_string(CUDA_ALLOCATION_ALIGNMENT));
    // As in RMM, a bin's size is rounded up to the allocation alignment: add_bin(100) makes the
    // 256-byte bin, which then serves every request of up to 256 bytes.
    allocation_size = align_up(allocation_size, CUDA_ALLOCATION_ALIGNMENT);
    if (bins_.count(allocation_size) != 0) {
      return;
    }
    if (bin_resource) {
      bins_.emplace(allocation_size, *bin_resource);
      return;
    }
    // Bins draw on the upstream through a non-owning reference: this state owns both.
    auto& owned = owned_bins_.emplace_back(upstream_t{get_upstream_resource()}, allocation_size);
    bins_.emplace(allocation_size, device_async_resource_ref{owned});
  }

  /// @brief The resource that serves @p bytes: the smallest bin holding it, else upstream.
  [[nodiscard]] device_async_resource_ref target(std::size_t bytes) const noexcept {
    auto const it = bins_.lower_bound(bytes);
    return it == bins_.end() ? get_upstream_resource() : it->second;
  }

  [[nodiscard]] std::map<std::size_t, device_async_resource_ref> const& bins() const noexcept {
    return bins_;
  }

 private:
  upstream_t mutable upstream_;
  std::list<fixed_size_memory_resource> owned_bins_;  // stable addresses for the refs
  std::map<std::size_t, device_async_resource_ref> bins_;
};

}  // namespace detail

/**
 * @brief Allocates memory from upstream resources associated with bin sizes.
 *
 * An allocation of `bytes` goes to the bin with the smallest allocation size >= `bytes`; larger
 * allocations go to the upstream. A request of 0 bytes is routed like any other size: to the
 * smallest bin (or the upstream when there is no bin), which returns what it returns for an empty
 * request (a fixed_size_memory_resource bin: nullptr); the deallocation goes to the same place.
 * Bin sizes are multiples of 256
 * bytes (rmm::CUDA_ALLOCATION_ALIGNMENT): add_bin rounds the size it is given up, as RMM does.
 * Deallocation finds the same resource from the size, so `deallocate` must be given the size passed
 * to `allocate` (as the resource concept requires). The stream semantics are those of each bin
 * resource and of the upstream.
 *
 * Allocation and deallocation are thread-safe if the bins and the upstream are; `add_bin` is not
 * thread-safe and must not run concurrently with any other member.
 *
 * This class is copyable and shares ownership of its internal state, allowing multiple instances
 * to safely reference the same underlying bins.
 */
class binning_memory_resource
    : public cuda::mr::shared_resource<detail::binning_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::binning_memory_resource_impl>;

 public:
  /**
   * @brief Construct a new binning memory resource object.
   *
   * Initially has no bins, so simply uses the upstream resource until bin resources are added
   * with add_bin.
   *
   * @param upstream The resource used to allocate bin pools.
   */
  explicit binning_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
      : shared_base{cuda::std::in_place_type<detail::binning_memory_resource_impl>,
                    std::move(upstream)} {}

  /**
   * @brief Construct a new binning memory resource object with a range of initial bins.
   *
   * Constructs a new binning memory resource and adds bins backed by fixed_size_memory_resource
   * in the range [2^min_size_exponent, 2^max_size_exponent]. For example if min_size_exponent==18
   * and max_size_exponent==22, creates bins of sizes 256KiB, 512KiB, 1024KiB, 2048KiB and
   * 4096KiB. Exponents below 8 give bins smaller than 256 bytes, which are rounded up to the
   * 256-byte bin (see add_bin).
   *
   * @param upstream The resource used to allocate bin pools.
   * @param min_size_exponent The minimum base-2 exponent bin size.
   * @param max_size_exponent The maximum base-2 exponent bin size.
   * @throws rmm::logic_error if the exponents lie outside [0, 62] or min exceeds max.
   * @throws rmm::out_of_memory if a bin cannot preallocate its blocks.
   */
  binning_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                          std::int8_t min_size_exponent,
                          std::int8_t max_size_exponent)
      : shared_base{cuda::std::in_place_type<detail::binning_memory_resource_impl>,
                    std::move(upstream),
                    min_size_exponent,
                    max_size_exponent} {}

  ~binning_memory_resource() = default;

  /**
   * @brief device_async_resource_ref to the upstream resource
   * @return device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Add a bin allocator to this resource.
   *
   * Adds bin_resource if provided; otherwise constructs and adds a fixed_size_memory_resource
   * (blocks of allocation_size, drawn from this resource's upstream). allocation_size is first
   * rounded up to a multiple of rmm::CUDA_ALLOCATION_ALIGNMENT (256 bytes), as in RMM: a
   * bin_resource given for 100 bytes serves every request of up to 256 bytes.
   *
   * This bin will be used for any allocation smaller than allocation_size that is larger than the
   * next smaller bin's allocation size.
   *
   * If there is already a bin of the specified size nothing is changed.
   *
   * This function is not thread safe.
   *
   * @param allocation_size The maximum size that this bin allocates
   * @param bin_resource The memory resource for the bin (not owned: it must outlive every copy of
   * this resource)
   * @throws rmm::logic_error if allocation_size is 0, or too large to be rounded up.
   */
  void add_bin(std::size_t allocation_size,
               std::optional<device_async_resource_ref> bin_resource = std::nullopt) {
    state().add_bin(allocation_size, bin_resource);
  }

  /// @brief The resource that serves an allocation of @p bytes (a bin, or the upstream).
  [[nodiscard]] device_async_resource_ref get_resource_for(std::size_t bytes) const noexcept {
    return state().target(bytes);
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  ///
  /// This property declares that a binning_memory_resource provides device accessible memory
  friend void get_property(binning_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  [[nodiscard]] detail::binning_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::binning_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<binning_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
