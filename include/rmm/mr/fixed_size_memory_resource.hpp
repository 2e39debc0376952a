/**
 * @file fixed_size_memory_resource.hpp
 * @brief A stream-ordered memory resource that hands out blocks of one fixed size.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/fixed_size_core_hooks.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of fixed_size_memory_resource. Not for direct use.
class fixed_size_memory_resource_impl
    : private device_binding,
      public stream_ordered_core<fixed_size_memory_resource_impl>,
      private fixed_size_core_hooks<fixed_size_memory_resource_impl>,
      public stream_resource_base<fixed_size_memory_resource_impl> {
  friend class stream_ordered_core<fixed_size_memory_resource_impl>;
  static constexpr std::size_t prefetch_blocks = one_size_prefetch_blocks;  // blocks of one size
  friend class fixed_size_core_hooks<fixed_size_memory_resource_impl>;
  using fixed_size_core_hooks<fixed_size_memory_resource_impl>::adopt_rest;  // not the core's
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "fixed_size_memory_resource";

 public:
  fixed_size_memory_resource_impl(upstream_t upstream,
                                  std::size_t block_size,
                                  std::size_t blocks_to_preallocate)
      : upstream_{std::move(upstream)},
        block_size_{checked_block_size(block_size)},
        blocks_per_chunk_{blocks_to_preallocate},
        free_list_{block_size_} {
    RMM_EXPECTS(blocks_to_preallocate > 0,
                std::string{name} + ": blocks_to_preallocate must be at least 1, got 0");
    RMM_EXPECTS(blocks_to_preallocate <= std::numeric_limits<std::size_t>::max() / block_size_,
                std::string{name} + ": blocks_to_preallocate " +
                    std::to_string(blocks_to_preallocate) + " times block_size " +
                    std::to_string(block_size_) + " overflows");
    if (!take_chunk(cuda_stream_default)) {
      out_of_memory_report report;
      report.resource        = name;
      report.requested_bytes = blocks_per_chunk_ * block_size_;
      report.reason = "preallocating " + std::to_string(blocks_per_chunk_) + " blocks of " +
                      std::to_string(block_size_) + " bytes failed; " + last_upstream_error_;
      report.reserved_bytes = 0;
      rmm::detail::add_device_memory(report, bound_device());
      throw rmm::out_of_memory(std::move(report));
    }
  }

  fixed_size_memory_resource_impl(fixed_size_memory_resource_impl const&)            = delete;
  fixed_size_memory_resource_impl& operator=(fixed_size_memory_resource_impl const&) = delete;

  // With the resource's device current throughout (device_binding, the first base, restores the
  // caller's device after the core's own teardown).
  ~fixed_size_memory_resource_impl() {
    enter_for_teardown();
    synchronize_for_teardown();
    if (rmm::process_is_exiting()) {
      return;
    }
    for (auto const& [base, bytes] : free_list_.chunks()) {
      upstream_.deallocate(
          cuda_stream_default, reinterpret_cast<void*>(base), bytes, CUDA_ALLOCATION_ALIGNMENT);
    }
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_bound_device(name, "allocate", stream.get());
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    RMM_EXPECTS(bytes <= block_size_,
                std::string{name} + ": cannot allocate " + std::to_string(bytes) +
                    " bytes: larger than the block size " + std::to_string(block_size_),
                rmm::bad_alloc);
    return allocate_on(stream, bytes, block_size_);
  }

  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t, std::size_t) noexcept {
    if (ptr != nullptr) {
      expect_bound_device_noexcept(name, "deallocate", stream.get());
      deallocate_on(stream, ptr, block_size_);
    }
  }

  friend fixed_size_memory_resource_impl* get_property(
      fixed_size_memory_resource_impl const& self,
      state_of<fixed_size_memory_resource_impl>) noexcept {
    return const_cast<fixed_size_memory_resource_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }
  [[nodiscard]] std::size_t block_size() const noexcept { return block_size_; }
  [[nodiscard]] std::size_t capacity_blocks() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.capacity();
  }
  [[nodiscard]] std::size_t free_blocks() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.size() + batched_bytes() / block_size_;  // see stream_ordered_core.md
  }

 private:
  using tag_t = fixed_size_free_list::tag_t;

  static std::size_t checked_block_size(std::size_t block_size) {
    RMM_EXPECTS(block_size > 0, std::string{name} + ": block_size must not be 0");
    RMM_EXPECTS(block_size <= std::numeric_limits<std::size_t>::max() - CUDA_ALLOCATION_ALIGNMENT,
                std::string{name} + ": block_size " + std::to_string(block_size) + " is too large");
    return align_up(block_size, CUDA_ALLOCATION_ALIGNMENT);
  }

  // A chunk of blocks_per_chunk_ blocks. The blocks are fresh (owned by no stream), so the
  // upstream allocation is made complete before any stream may take one.
  bool take_chunk(cuda::stream_ref stream) {
    std::size_t const bytes = block_size_ * blocks_per_chunk_;
    try {
      void* base = upstream_.allocate(stream, bytes, CUDA_ALLOCATION_ALIGNMENT);
      try {
        free_list_.add_chunk(reinterpret_cast<std::uintptr_t>(base), blocks_per_chunk_);
      } catch (...) {
        upstream_.deallocate(stream, base, bytes, CUDA_ALLOCATION_ALIGNMENT);
        throw;
      }
      stream.sync();
      return true;
    } catch (std::bad_alloc const& e) {
      last_upstream_error_ = "upstream failed to allocate " + std::to_string(bytes) +
                             " bytes: " + rmm::detail::upstream_failure(e);
      return false;
    }
  }

  // --- the other hooks of stream_ordered_core (called with the lock held) ---
  bool grow(std::size_t, cuda::stream_ref stream, tag_t) { return take_chunk(stream); }
  void release_free_upstream() noexcept {}

  // Every block is in use (the core has synchronised and taken back every free block) and a new
  // chunk could not be had. Lock held.
  [[nodiscard]] out_of_memory_report oom_report(std::size_t requested, std::size_t) const {
    std::size_t const held = free_list_.capacity() * block_size_;
    std::size_t const free = free_list_.size() * block_size_ + batched_bytes();
    out_of_memory_report report;
    report.resource        = name;
    report.requested_bytes = requested;
    report.reason          = "all " + std::to_string(free_list_.capacity()) + " blocks of " +
                    std::to_string(block_size_) + " bytes are in use, and growing by " +
                    std::to_string(blocks_per_chunk_) + " blocks failed; " + last_upstream_error_;
    report.reserved_bytes     = held;
    report.used_bytes         = held - free;
    report.free_bytes         = free;
    report.largest_free_block = free > 0 ? block_size_ : 0;
    if (bound_device() >= 0) {
      report.device = bound_device();
    }
    return report;
  }

  upstream_t mutable upstream_;
  std::size_t block_size_;
  std::size_t blocks_per_chunk_;
  fixed_size_free_list free_list_;
  std::string last_upstream_error_;
};

}  // namespace detail

/**
 * @brief A memory resource which allocates memory blocks of a single fixed size.
 *
 * Supports only allocations of size smaller than the configured block_size (which is rounded up
 * to a multiple of 256 bytes); a larger request throws rmm::bad_alloc naming both sizes.
 * Blocks come from chunks of `blocks_to_preallocate` blocks taken from upstream, one at
 * construction and one more each time every block is in use; all chunks go back upstream when
 * the last copy is destroyed (unless rmm::process_is_exiting()).
 *
 * Stream semantics as for pool_memory_resource (see detail/mechanics/stream_ordered_core.hpp): a
 * block freed on a stream is reused on that stream at once; other streams take it after an event
 * wait. With two or more streams (blocks of at most 1 MiB), each stream sets aside up to 31 free
 * blocks in its batch: an allocation that takes the shared lock fills it to 16, and a free that
 * fills it to 32 returns the oldest 16 to the stream's list, so that the stream's other
 * allocations and frees need only its own lock. Other streams reach set-aside blocks once they
 * return to the list, or when memory runs out (detail/mechanics/stream_ordered_core.md,
 * "Prefetch"). free_blocks() counts them. When every block is in use and a new chunk cannot be had,
 * rmm::out_of_memory's report() gives the request, the bytes held (reserved), used and free, the
 * largest request a free block serves, the stream, the device, and as reason the upstream's
 * failure.
 *
 * Allocation and deallocation are thread-safe. This class is copyable and shares ownership of
 * its internal state, allowing multiple instances to safely reference the same underlying pool.
 */
class fixed_size_memory_resource
    : public cuda::mr::shared_resource<detail::fixed_size_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::fixed_size_memory_resource_impl>;

 public:
  /// @brief Default allocation block size.
  static constexpr std::size_t default_block_size = 1 << 20;

  /// @brief The number of blocks that the pool starts out with, and also the number of blocks by
  /// which the pool grows when all of its current blocks are allocated
  static constexpr std::size_t default_blocks_to_preallocate = 128;

  /**
   * @brief Construct a new fixed_size_memory_resource that allocates memory from upstream.
   *
   * When the pool of blocks is all allocated, grows the pool by allocating
   * blocks_to_preallocate more blocks from upstream.
   *
   * @param upstream The resource from which to allocate blocks for the pool.
   * @param block_size The size of blocks to allocate (rounded up to a multiple of 256).
   * @param blocks_to_preallocate The number of blocks to allocate to initialize the pool.
   * @throws rmm::logic_error if block_size or blocks_to_preallocate is 0, or their product
   * overflows.
   * @throws rmm::out_of_memory if the initial blocks cannot be allocated.
   */
  explicit fixed_size_memory_resource(
      cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
      std::size_t block_size            = default_block_size,
      std::size_t blocks_to_preallocate = default_blocks_to_preallocate)
      : shared_base{cuda::std::in_place_type<detail::fixed_size_memory_resource_impl>,
                    std::move(upstream),
                    block_size,
                    blocks_to_preallocate} {}

  ~fixed_size_memory_resource() = default;

  /**
   * @brief device_async_resource_ref to the upstream resource
   * @return device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Get the size of blocks allocated by this memory resource.
   * @return std::size_t size in bytes of allocated blocks.
   */
  [[nodiscard]] std::size_t get_block_size() const noexcept { return state().block_size(); }

  /// @brief Number of blocks held (free or in use).
  [[nodiscard]] std::size_t capacity_blocks() const noexcept { return state().capacity_blocks(); }

  /// @brief Number of blocks free (in every stream's list, or never handed out).
  [[nodiscard]] std::size_t free_blocks() const noexcept { return state().free_blocks(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(fixed_size_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

 private:
  [[nodiscard]] detail::fixed_size_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::fixed_size_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<fixed_size_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
