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
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/fixed_size_shard.hpp>
#include <rmm/mr/detail/mechanics/shard_router.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr {
namespace detail {

/**
 * @brief Shared state of fixed_size_memory_resource. Not for direct use.
 *
 * Until threads contend, everything goes to the root shard (the resource as it always was: one
 * lock, one free list, the upstream). Once the root's lock has been found taken `shard_after`
 * times, the resource shards: each new stream is assigned the least used child shard, which
 * borrows whole chunks from the root and serves its streams under its own lock; a deallocation
 * finds the shard that owns the address in a piece map read without a lock
 * (fixed_size_free_list.md, "Shards"; the routing is pool_memory_resource's, pool_shards.md).
 *
 * Thread-safe.
 */
class fixed_size_memory_resource_impl
    : private device_binding,
      public stream_resource_base<fixed_size_memory_resource_impl> {
  using upstream_t                  = fixed_size_shard::upstream_t;
  static constexpr char const* name = fixed_size_shard::name;

 public:
  /// The root's lock must have been found taken this many times before the resource shards.
  /// Fewer than the pool's 1024: the root's chunks cannot be lent while any of their blocks is in
  /// use, so what the root grows to before sharding stays with it unless a child needs memory
  /// once it is free (measured at 16 threads: the root grew to 13.4 GiB of 50.4 with 1024, to
  /// 896 MiB of 39.0 GiB with 64; fixed_size_free_list.md, "Shards").
  static constexpr std::uint32_t shard_after = 64;

  fixed_size_memory_resource_impl(upstream_t upstream,
                                  std::size_t block_size,
                                  std::size_t blocks_to_preallocate)
      : root_{std::move(upstream), block_size, blocks_to_preallocate, bound_device()},
        children_{shard_router<fixed_size_shard>::default_limit()} {}

  fixed_size_memory_resource_impl(fixed_size_memory_resource_impl const&)            = delete;
  fixed_size_memory_resource_impl& operator=(fixed_size_memory_resource_impl const&) = delete;

  // Members go in reverse order: the children first, each giving its chunks back to the root,
  // then the root, which gives every chunk to the upstream; all with the resource's device
  // current (device_binding, the first base, restores the caller's last).
  ~fixed_size_memory_resource_impl() { enter_for_teardown(); }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_bound_device(name, "allocate", stream.get());
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    RMM_EXPECTS(bytes <= root_.block_size(),
                std::string{name} + ": cannot allocate " + std::to_string(bytes) +
                    " bytes: larger than the block size " + std::to_string(root_.block_size()),
                rmm::bad_alloc);
    if (!children_.sharded()) {
      void* p = root_.allocate_block(stream, bytes);
      if (root_.contentions() >= shard_after) {
        enable_sharding();
      }
      return p;
    }
    fixed_size_shard& s = route(stream);
    try {
      return s.allocate_block(stream, bytes);
    } catch (rmm::out_of_memory const& e) {
      return after_shard_oom(s, stream, bytes, e);
    }
  }

  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t, std::size_t) noexcept {
    if (ptr != nullptr) {
      expect_bound_device_noexcept(name, "deallocate", stream.get());
      fixed_size_shard* child = children_.owner_of(ptr);
      (child != nullptr ? *child : root_).deallocate_block(stream, ptr);
    }
  }

  friend fixed_size_memory_resource_impl* get_property(
      fixed_size_memory_resource_impl const& self,
      state_of<fixed_size_memory_resource_impl>) noexcept {
    return const_cast<fixed_size_memory_resource_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return root_.get_upstream_resource();
  }
  [[nodiscard]] std::size_t block_size() const noexcept { return root_.block_size(); }

  // Every shard's, each under its own lock in turn.
  [[nodiscard]] std::size_t capacity_blocks() const noexcept {
    std::size_t n = root_.capacity_blocks();
    children_.for_each_child([&](fixed_size_shard const& c) { n += c.capacity_blocks(); });
    return n;
  }
  [[nodiscard]] std::size_t free_blocks() const noexcept {
    std::size_t n = root_.free_blocks();
    children_.for_each_child([&](fixed_size_shard const& c) { n += c.free_blocks(); });
    return n;
  }

  /// @brief Blocks held by each shard, the root's first, then each child's made so far (for
  /// tests and diagnostics). Thread-safe.
  [[nodiscard]] std::vector<std::size_t> shard_capacities() const {
    std::vector<std::size_t> out{root_.capacity_blocks()};
    children_.for_each_child(
        [&](fixed_size_shard const& c) { out.push_back(c.capacity_blocks()); });
    return out;
  }

  /// @brief Shards now, whatever the contention (for tests and benchmarks). Thread-safe.
  void enable_sharding() { children_.enable(); }

  /// @brief Whether the resource has sharded. Thread-safe.
  [[nodiscard]] bool sharded() const noexcept { return children_.sharded(); }

  /// @brief Child shards made so far. Thread-safe.
  [[nodiscard]] std::size_t num_children() const noexcept { return children_.num_children(); }

 private:
  fixed_size_shard& route(cuda::stream_ref stream) {
    return children_.route(stream, [this](piece_map& pieces, piece_map::owner_t owner) {
      return std::make_unique<fixed_size_shard>(root_, pieces, owner);
    });
  }

  // A child could not serve a request, even after its own last resort: the other children give
  // their free chunks back to the root, then the child and the root itself are tried again
  // (shard_router::retry_after_child_oom). If both fail, the report is the root's with the
  // blocks of every shard, and both reasons.
  void* after_shard_oom(fixed_size_shard& s,
                        cuda::stream_ref stream,
                        std::size_t bytes,
                        rmm::out_of_memory const& first) {
    return children_.retry_after_child_oom(
        s,
        [&] { return s.allocate_block(stream, bytes); },
        [&] { return root_.allocate_block_sharded(stream, bytes); },
        [&](rmm::out_of_memory const& e) {
          out_of_memory_report report = rmm::detail::sharded_report(
              name,
              bytes,
              first,
              e,
              "; after the other shards gave their free chunks back, the root: ",
              rmm::detail::oom_reason(e));
          std::size_t const held    = capacity_blocks() * root_.block_size();
          std::size_t const free    = free_blocks() * root_.block_size();
          report.reserved_bytes     = held;
          report.used_bytes         = held - free;
          report.free_bytes         = free;
          report.largest_free_block = free > 0 ? root_.block_size() : 0;
          return report;
        });
  }

  fixed_size_shard mutable root_;
  shard_router<fixed_size_shard> children_;  // destroyed first: the children give chunks back
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
 * "Prefetch"). free_blocks() counts them. Once a thread has exited, the blocks its per-thread
 * default stream freed or set aside serve the next new thread's per-thread stream, whose first
 * use synchronises the device once (stream_ordered_core.md, "Finished threads").
 *
 * Once threads contend for it (its lock found taken 64 times; never with one thread), the
 * resource shards: each stream is served by a child with its own lock and free list, which
 * borrows whole chunks of `blocks_to_preallocate` blocks (one at least per child, up to one child
 * per hardware thread); frees from any stream go back to the child that owns the block. Chunks
 * left free in one child serve another when the upstream cannot give more (after a device
 * synchronisation per child). capacity_blocks() and free_blocks() count every child's blocks.
 * Design: detail/algorithms/fixed_size_free_list.md, "Shards". When every block is in use and a new
 * chunk cannot be had, rmm::out_of_memory's report() gives the request, the bytes held (reserved),
 * used and free, the largest request a free block serves, the stream, the device, and as reason the
 * upstream's failure.
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
