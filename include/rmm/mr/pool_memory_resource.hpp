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
#include <rmm/mr/detail/mechanics/pool_memory_resource_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/memory_snapshot.hpp>
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
/**
 * @brief A coalescing best-fit suballocator which uses a pool of memory allocated from an
 * upstream memory_resource.
 *
 * The pool grows from its upstream on demand and gives everything back when the last copy is
 * destroyed (unless rmm::process_is_exiting()). Free space is indexed by a two-level segregated
 * fit free list (detail/algorithms/tlsf_free_list.hpp): O(1) allocation and coalescing
 * deallocation.
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
 *   the request near it). Each chunk stays a region of its own (no block straddles two upstream
 *   allocations). A program that knows its peak can pass it as `initial_pool_size`: one chunk,
 *   and no growth on the way (on speed per call, see docs/resources.md).
 *
 * Stream semantics (see detail/mechanics/stream_ordered_core.hpp): memory freed on a stream is
 * reused on that stream at once with no CUDA call; other streams reuse it after an event wait;
 * device-wide synchronisation happens only as a last resort before reporting out-of-memory and,
 * over a virtual_memory_resource, before growth when enough free memory in the middle of the range
 * can be unmapped instead (set_defragment_threshold). Streams on which memory was freed must
 * outlive the pool or be synchronised before they are destroyed.
 *
 * Out of memory throws rmm::out_of_memory whose report() gives the request, the pool's size
 * (reserved), maximum, free bytes and largest free block (over every shard), the stream, the
 * current device with its memory, and as reason the rounded size, why the pool could not grow
 * (the maximum, or the upstream's own report) and each stream's free bytes.
 *
 * Allocation and deallocation are thread-safe. Threads: until its threads contend for it, the
 * pool is one lock over one free list. Once they do (the lock found taken 1024 times; never over
 * a `virtual_memory_resource`, whose one range must stay whole), it shards: each stream is served
 * by one of up to min(hardware threads, 32) child shards, each with its own lock and free list,
 * holding pieces of the pool's memory (the larger of the request, 16 MiB and an eighth of what
 * the shard holds); a block freed on any stream goes back to the shard that owns it. Sharding
 * trades some memory (each shard's free space serves its own streams first) for throughput that
 * grows with threads; memory free in one shard serves another after a device synchronisation,
 * when memory runs out. `pool_size()` counts every byte taken from upstream, `free_bytes()` and
 * `largest_free_block()` every shard's. See detail/mechanics/pool_shards.md. Also, this class is
 * compatible with CUDA per-thread default stream: once a thread has exited, what its per-thread
 * stream freed serves the next new thread's per-thread stream, whose first use synchronises the
 * device once (detail/mechanics/stream_ordered_core.md, "Finished threads").
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
   * @brief Every chunk the pool holds and every block in it (offset, size, allocated or free,
   * the stream that owns a free block), for pictures and for diagnosing fragmentation: see
   * memory_snapshot and tools/pictures/render_snapshot.py.
   *
   * Takes each shard's lock in turn (not one consistent moment across shards). Over a
   * virtual_memory_resource, free blocks include unmapped holes. Not part of RMM's API.
   * Thread-safe. @throws std::bad_alloc.
   */
  [[nodiscard]] memory_snapshot snapshot() const { return state().snapshot(); }

  /**
   * @brief Gives memory back: synchronises the device, gives every fully free upstream chunk
   * back to the upstream and, over a virtual_memory_resource, unmaps the whole free granules at
   * the end of the growing range (and waits for those unmaps). Memory in use is not touched.
   *
   * Thread-safe; other threads' calls wait for it. Costs a device synchronisation.
   * @throws rmm::cuda_error if the upstream's unmapping fails, or if the device synchronisation
   * fails (for example while another thread captures a CUDA graph in global mode): then nothing
   * is given back, since no free block is known to be idle, and the pool keeps serving.
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

  /**
   * @brief Over a virtual_memory_resource: before the pool maps memory that would take it above
   * the most it has held (growth past its peak), if at least @p bytes of free memory in the
   * middle of its ranges could be unmapped (whole pieces of physical memory inside free
   * blocks), the pool synchronises the device, unmaps that memory (it is mapped back when a
   * request needs it) and then grows. The device memory the pool holds at its peak then stays
   * nearer what is live, at the cost of one device synchronisation per such growth; a loop that
   * repeats its peak stops defragmenting (GPT-2 training log, host simulation: 13,376 MiB
   * instead of 13,874 for 12,964 MiB live, 3 synchronisations in 30 steps; see
   * docs/expandable_pool.md).
   *
   * The default is 64 MiB; std::numeric_limits<std::size_t>::max() turns it off (a pool that
   * must never synchronise in allocate, e.g. while another thread captures a CUDA graph in
   * global mode: the synchronisation would invalidate that capture; a request on a stream that
   * is being captured never defragments). Ignored over other upstreams. Not part of RMM's API.
   *
   * Thread-safe.
   */
  void set_defragment_threshold(std::size_t bytes) noexcept {
    state().set_defragment_threshold(bytes);
  }

  /// @brief The defragmentation threshold (see set_defragment_threshold).
  [[nodiscard]] std::size_t defragment_threshold() const noexcept {
    return state().defragment_threshold();
  }

  /// @brief How many times the pool has defragmented (each a device synchronisation). Not part
  /// of RMM's API. Thread-safe.
  [[nodiscard]] std::size_t defragmentations() const noexcept { return state().defragmentations(); }

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
