/**
 * @file pool_memory_resource.hpp
 * @brief A coalescing, stream-ordered suballocator over a pool grown from an upstream resource.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/expandable_range.hpp>
#include <rmm/mr/detail/shared_state.hpp>
#include <rmm/mr/detail/stream_ordered_core.hpp>
#include <rmm/mr/detail/stream_resource_base.hpp>
#include <rmm/mr/detail/tlsf_free_list.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of pool_memory_resource. Not for direct use.
class pool_memory_resource_impl : public stream_ordered_core<pool_memory_resource_impl>,
                                  public stream_resource_base<pool_memory_resource_impl> {
  friend class stream_ordered_core<pool_memory_resource_impl>;
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "pool_memory_resource";

 public:
  pool_memory_resource_impl(upstream_t upstream,
                            std::size_t initial_pool_size,
                            std::optional<std::size_t> maximum_pool_size)
      : upstream_{std::move(upstream)},
        range_{cuda::mr::resource_cast<virtual_memory_resource>(&upstream_)},
        maximum_{maximum_pool_size.value_or(std::numeric_limits<std::size_t>::max())} {
    RMM_EXPECTS(initial_pool_size % CUDA_ALLOCATION_ALIGNMENT == 0,
                std::string{name} + ": initial_pool_size " + std::to_string(initial_pool_size) +
                    " is not a multiple of " + std::to_string(CUDA_ALLOCATION_ALIGNMENT) +
                    " bytes");
    if (maximum_pool_size) {
      RMM_EXPECTS(*maximum_pool_size % CUDA_ALLOCATION_ALIGNMENT == 0,
                  std::string{name} + ": maximum_pool_size " + std::to_string(*maximum_pool_size) +
                      " is not a multiple of " + std::to_string(CUDA_ALLOCATION_ALIGNMENT) +
                      " bytes");
      RMM_EXPECTS(*maximum_pool_size >= initial_pool_size,
                  std::string{name} + ": maximum_pool_size " + std::to_string(*maximum_pool_size) +
                      " is below initial_pool_size " + std::to_string(initial_pool_size));
    }
    if (initial_pool_size > 0) {
      if (range_.upstream() != nullptr) {  // whole granules: the cap counts mapped memory
        initial_pool_size = std::min(maximum_, align_up(initial_pool_size, range_.granularity()));
      }
      void* base =
          upstream_.allocate(cuda_stream_default, initial_pool_size, CUDA_ALLOCATION_ALIGNMENT);
      cuda_stream_default.synchronize();  // unowned memory must be usable on every stream
      region_id const id =
          free_list_.insert_region(reinterpret_cast<std::uintptr_t>(base), initial_pool_size, 0);
      if (range_.upstream() != nullptr) {
        range_.adopt(id);
      }
    }
  }

  pool_memory_resource_impl(pool_memory_resource_impl const&)            = delete;
  pool_memory_resource_impl& operator=(pool_memory_resource_impl const&) = delete;

  ~pool_memory_resource_impl() {
    synchronize_for_teardown();
    if (rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the memory to the driver
    }
    free_list_.for_each_region([this](auto, std::uintptr_t base, std::size_t size, bool) {
      upstream_.deallocate(
          cuda_stream_default, reinterpret_cast<void*>(base), size, CUDA_ALLOCATION_ALIGNMENT);
    });
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    if (bytes > max_request) {
      throw rmm::out_of_memory(std::string{name} + ": cannot allocate " + std::to_string(bytes) +
                               " bytes: larger than any pool can hold");
    }
    return allocate_on(stream, bytes, align_up(bytes, CUDA_ALLOCATION_ALIGNMENT));
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t /*alignment*/) noexcept {
    if (ptr == nullptr) {
      return;
    }
    deallocate_on(stream, ptr, align_up(bytes, CUDA_ALLOCATION_ALIGNMENT));
  }

  friend pool_memory_resource_impl* get_property(pool_memory_resource_impl const& self,
                                                 state_of<pool_memory_resource_impl>) noexcept {
    return const_cast<pool_memory_resource_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  [[nodiscard]] std::size_t pool_size() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return mapped_bytes();
  }

  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept {
    if (maximum_ == std::numeric_limits<std::size_t>::max()) {
      return std::nullopt;
    }
    return maximum_;
  }

  [[nodiscard]] std::size_t free_bytes() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.free_bytes() + batched_bytes();  // batches: see stream_ordered_core.md
  }

  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.largest_free_block();
  }

  [[nodiscard]] bool grows_in_place() const noexcept { return range_.upstream() != nullptr; }

  void release() {
    synchronize_and_release([this] {
      release_free_upstream();
      range_.trim(free_list_, 0, cuda_stream_default, std::numeric_limits<std::size_t>::max());
      if (range_.upstream() != nullptr) {
        range_.punch_holes(free_list_, cuda_stream_default);
      }
    });
    if (range_.upstream() != nullptr) {
      range_.upstream()->flush();  // after the synchronisation every deferred unmap is due
    }
  }

  void set_release_threshold(std::size_t bytes) noexcept {
    release_threshold_.store(bytes, std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t release_threshold() const noexcept {
    return release_threshold_.load(std::memory_order_relaxed);
  }

 private:
  using tag_t     = tlsf_free_list::tag_t;
  using region_id = tlsf_free_list::region_id;
  static constexpr std::size_t max_request =
      std::numeric_limits<std::size_t>::max() - CUDA_ALLOCATION_ALIGNMENT;
  // Growth from a plain upstream takes at least this much, or an eighth of the pool's current
  // size if larger (see grow()).
  static constexpr std::size_t min_growth     = std::size_t{32} << 20U;
  static constexpr std::size_t growth_divisor = 8;

  // --- hooks of stream_ordered_core (called with the lock held) ---
  std::optional<void*> try_allocate(std::size_t size, tag_t tag) {
    if (auto p = free_list_.allocate(size, tag)) {
      return reinterpret_cast<void*>(*p);
    }
    return std::nullopt;
  }

  void free_block(void* ptr, std::size_t size, tag_t tag) noexcept {
    try {
      free_list_.deallocate(reinterpret_cast<std::uintptr_t>(ptr), size, tag);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{name} + ": deallocate ignored: " + e.what());
    }
  }

  [[nodiscard]] bool tag_may_fit(tag_t tag, std::size_t size) const {
    return free_list_.largest_free_block(tag) >= size;
  }
  void retag(tag_t from, tag_t to) { free_list_.retag(from, to); }
  [[nodiscard]] std::size_t tag_free_bytes(tag_t tag) const { return free_list_.free_bytes(tag); }

  // Growth policy. Over a growable upstream (virtual_memory_resource): map a hole whose free
  // neighbours make the request fit, or extend the current range in place by the granules still
  // missing after its free tail, so that the pool maps no more than its high-water mark rounded
  // to a granule (detail/expandable_range.hpp). Over any other upstream: a new chunk of the
  // largest of the request, 32 MiB and an eighth of the pool, never beyond the maximum. The
  // eighth keeps the number of upstream calls logarithmic in the pool's size while bounding the
  // overshoot to 12.5% (the earlier "current size" doubled the pool: 4096 MiB for 2822 MiB
  // live on the ResNet-50 log; an eighth measures 0.90 there, see docs/benchmarks.md).
  bool grow(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    std::size_t const current = mapped_bytes();
    std::size_t const room    = current > maximum_ ? 0 : maximum_ - current;
    if (range_.grow(free_list_, size, stream, tag, room, last_upstream_error_)) {
      return true;
    }
    if (size > room) {
      if (range_.upstream() == nullptr) {
        last_upstream_error_ =
            "growing by " + std::to_string(size) + " bytes would exceed the maximum";
      }
      return false;
    }
    if (range_.upstream() != nullptr) {
      return take_from_upstream(std::min(room, align_up(size, range_.granularity())), stream, tag);
    }
    std::size_t const want =
        std::min(room,
                 align_up(std::max({size, current / growth_divisor, min_growth}),
                          CUDA_ALLOCATION_ALIGNMENT));
    return take_from_upstream(want, stream, tag) ||
           (want != size && take_from_upstream(size, stream, tag));
  }

  // The core's last growth attempt, after a device synchronisation: over a growable upstream,
  // free memory in the middle of the ranges is unmapped first if growing alone fails (under the
  // maximum, or when the device is out of memory), since no stream can still use it.
  bool grow_after_synchronize(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    if (grow(size, stream, tag)) {
      return true;
    }
    return range_.upstream() != nullptr && range_.punch_holes(free_list_, stream) > 0 &&
           grow(size, stream, tag);
  }

  // Physical memory the pool holds: its ranges less their unmapped holes.
  [[nodiscard]] std::size_t mapped_bytes() const noexcept {
    return free_list_.total_bytes() - range_.unmapped();
  }

  void adopt_rest(void* block, std::size_t size, tag_t from, tag_t to) noexcept {
    try {
      free_list_.retag_block(reinterpret_cast<std::uintptr_t>(block) + size, from, to);
    } catch (...) {  // out of host memory for a new tag's index: the rest stays where it is
    }
  }

  void after_free(tag_t tag, cuda::stream_ref stream) noexcept {
    if (!range_.region()) {
      return;
    }
    std::size_t const threshold = release_threshold_.load(std::memory_order_relaxed);
    std::size_t const free      = free_list_.free_bytes();
    if (free <= threshold || free - threshold < range_.granularity()) {
      return;
    }
    try {
      range_.trim(free_list_, tag, stream, free - threshold);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{name} + ": trimming failed: " + e.what());
    }
  }

  bool take_from_upstream(std::size_t bytes, cuda::stream_ref stream, tag_t tag) {
    try {
      void* base = upstream_.allocate(stream, bytes, CUDA_ALLOCATION_ALIGNMENT);
      try {
        region_id const id =
            free_list_.insert_region(reinterpret_cast<std::uintptr_t>(base), bytes, tag);
        if (range_.upstream() != nullptr) {
          range_.adopt(id);  // the newest range grows; older ones stay as they are
        }
      } catch (...) {
        upstream_.deallocate(stream, base, bytes, CUDA_ALLOCATION_ALIGNMENT);
        throw;
      }
      return true;
    } catch (std::bad_alloc const& e) {
      last_upstream_error_ =
          "upstream failed to allocate " + std::to_string(bytes) + " bytes: " + e.what();
      return false;
    }
  }

  void release_free_upstream() {
    if (range_.upstream() != nullptr) {
      range_.free_holes_of_idle_ranges(free_list_);
    }
    std::vector<std::pair<region_id, std::uintptr_t>> ids;
    free_list_.for_each_region(
        [&](region_id id, std::uintptr_t base, std::size_t, bool) { ids.emplace_back(id, base); });
    for (auto const& [base, size] : free_list_.take_free_regions()) {
      for (auto const& [id, b] : ids) {
        if (b == base) {
          range_.forget(id);
        }
      }
      upstream_.deallocate(
          cuda_stream_default, reinterpret_cast<void*>(base), size, CUDA_ALLOCATION_ALIGNMENT);
    }
  }

  [[nodiscard]] std::string describe_oom(std::size_t requested, std::size_t rounded) const {
    std::string max = maximum_ == std::numeric_limits<std::size_t>::max()
                          ? std::string{"no maximum"}
                          : "maximum " + std::to_string(maximum_) + " bytes";
    return std::string{name} + ": cannot allocate " + std::to_string(requested) + " bytes (" +
           std::to_string(rounded) + " after rounding): pool size " +
           std::to_string(mapped_bytes()) + " bytes of " + max + ", free " +
           std::to_string(free_list_.free_bytes()) + " bytes, largest free block " +
           std::to_string(free_list_.largest_free_block()) + " bytes; " + last_upstream_error_;
  }

  upstream_t mutable upstream_;
  expandable_range range_;  // the range that grows in place, if the upstream can
  std::atomic<std::size_t> release_threshold_{std::numeric_limits<std::size_t>::max()};
  std::size_t maximum_;
  tlsf_free_list free_list_{CUDA_ALLOCATION_ALIGNMENT};
  std::string last_upstream_error_;
};

}  // namespace detail

/**
 * @brief A coalescing best-fit suballocator which uses a pool of memory allocated from an
 * upstream memory_resource.
 *
 * The pool grows from its upstream on demand and gives everything back when the last copy is
 * destroyed (unless rmm::process_is_exiting()). Free space is indexed by a two-level segregated
 * fit free list (detail/tlsf_free_list.hpp): O(1) allocation and coalescing deallocation.
 *
 * Growth depends on the upstream:
 * - Over a `virtual_memory_resource` (detected at construction, also inside an `any_resource`)
 *   the pool is an expandable pool: its memory is one reserved address range that grows in place
 *   at its end, by the granules still missing after its free tail, so that the pool maps no more
 *   than its high-water mark rounded up to the granularity (2 MiB), and free space never splits
 *   between chunks that cannot coalesce. `initial_pool_size` is then rounded up to the
 *   granularity. `release()` and the release threshold unmap whole free granules at the range's
 *   end. See docs/expandable_pool.md.
 * - Over any other upstream each growth takes a new chunk of the largest of the request, 32 MiB
 *   and an eighth of the pool's size, never beyond `maximum_pool_size` (falling back to exactly
 *   the request near it).
 *
 * Stream semantics (see detail/stream_ordered_core.hpp): memory freed on a stream is reused on
 * that stream at once with no CUDA call; other streams reuse it after an event wait; device-wide
 * synchronisation happens only as a last resort before reporting out-of-memory. Streams on which
 * memory was freed must outlive the pool or be synchronised before they are destroyed.
 *
 * Allocation and deallocation are thread-safe (one mutex per pool). Also, this class is
 * compatible with CUDA per-thread default stream.
 *
 * This class is copyable and shares ownership of its internal state, allowing multiple instances
 * to safely reference the same underlying pool.
 */
class pool_memory_resource : public cuda::mr::shared_resource<detail::pool_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::pool_memory_resource_impl>;

 public:
  /**
   * @brief Construct a pool_memory_resource and allocate the initial device memory pool using
   * upstream.
   *
   * @param upstream The resource from which to allocate blocks for the pool.
   * @param initial_pool_size Minimum size, in bytes, of the initial pool (may be 0).
   * @param maximum_pool_size Maximum size, in bytes, that the pool can grow to (a hard cap).
   * Defaults to all of the available memory from the upstream resource.
   * @throws rmm::logic_error if initial_pool_size is not aligned to a multiple of 256 bytes.
   * @throws rmm::logic_error if maximum_pool_size is neither the default nor aligned to a multiple
   * of 256 bytes, or is below initial_pool_size.
   * @throws rmm::out_of_memory (or what the upstream throws) if the initial pool cannot be had.
   */
  explicit pool_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                std::size_t initial_pool_size,
                                std::optional<std::size_t> maximum_pool_size = std::nullopt)
      : shared_base{cuda::std::in_place_type<detail::pool_memory_resource_impl>,
                    std::move(upstream),
                    initial_pool_size,
                    maximum_pool_size} {}

  ~pool_memory_resource() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Computes the size of the current pool. Includes allocated as well as free memory.
   * @return std::size_t The total size of the currently allocated pool.
   */
  [[nodiscard]] std::size_t pool_size() const noexcept { return state().pool_size(); }

  /// @brief The cap given at construction; std::nullopt if none.
  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept {
    return state().maximum_pool_size();
  }

  /// @brief Bytes of the pool not allocated (in every stream's free list).
  [[nodiscard]] std::size_t free_bytes() const noexcept { return state().free_bytes(); }

  /// @brief Size of the largest free block (of any stream).
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    return state().largest_free_block();
  }

  /// @brief True if the upstream is a virtual_memory_resource, so that the pool grows (and
  /// trims) one address range in place.
  [[nodiscard]] bool grows_in_place() const noexcept { return state().grows_in_place(); }

  /**
   * @brief Gives memory back: synchronises the device, gives every fully free upstream chunk
   * back to the upstream and, over a virtual_memory_resource, unmaps the whole free granules at
   * the end of the growing range (and waits for those unmaps). Memory in use is not touched.
   *
   * Thread-safe; other threads' calls wait for it. Costs a device synchronisation.
   * @throws rmm::cuda_error if the upstream's unmapping fails.
   */
  void release() { state().release(); }

  /**
   * @brief Over a virtual_memory_resource: when a deallocation leaves more than @p bytes of the
   * pool free, the whole free granules at the end of the growing range, beyond that many free
   * bytes, are unmapped (after the work queued on the freeing stream; see
   * virtual_memory_resource). The default is no threshold (never trim automatically): a pool
   * that gives memory back at once maps it again on the next peak. Ignored over other upstreams.
   *
   * Thread-safe.
   */
  void set_release_threshold(std::size_t bytes) noexcept { state().set_release_threshold(bytes); }

  /// @brief The release threshold (std::numeric_limits<std::size_t>::max() when none).
  [[nodiscard]] std::size_t release_threshold() const noexcept {
    return state().release_threshold();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(pool_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  [[nodiscard]] detail::pool_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::pool_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<pool_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
