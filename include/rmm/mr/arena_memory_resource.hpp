/**
 * @file arena_memory_resource.hpp
 * @brief A suballocator that emphasizes fragmentation avoidance and scalable concurrency support:
 * a fixed global arena cut into superblocks, and one arena per stream suballocating them.
 *
 * Stream contract (see detail/algorithms/arena.md for the full argument):
 * - A block freed on stream S is immediately reusable by allocations on S, with no CUDA call:
 *   work on S is ordered, so the next user of the block runs after the previous one.
 * - Memory only moves between streams as whole superblocks through the global arena. When stream
 *   arena A returns a superblock it records A's event on A's stream (on the freeing thread, so a
 *   per-thread default stream is named correctly); an arena that later takes any byte of that
 *   superblock makes its own stream wait on that event (cudaStreamWaitEvent). No device-wide
 *   synchronisation on the normal path. While only one stream has used the resource, its
 *   returned superblocks carry no event (no CUDA call on any free); the first superblock a second
 *   stream then takes synchronises the device once (so do not make that first allocation during
 *   CUDA graph capture).
 * - A large block (2 MiB or more, taken exactly from the global arena), freed: while one stream
 *   arena exists, goes back to the global arena with no event; with several, stays in the freeing
 *   stream's arena as an entirely free superblock while that arena's share has room (no CUDA
 *   call; it moves on like any superblock), else goes back ordered by that arena's event; freed
 *   on a stream that has no arena in this resource, the free waits for that stream instead.
 *   Keeping them spares a CUDA call per large block (with several threads on their own streams
 *   drawing up to 64 MiB, about 100x the throughput) at a price in memory: in a host model of a
 *   training log on 2 to 16 streams the arena had to be 3-11 % larger (arena.md, "Large
 *   requests").
 * - A block freed on a stream other than the one whose arena owns it (a cross-stream free) is the
 *   slow path: the freeing stream is synchronised, then the block goes back to its owner's arena.
 * - Out of memory: memory other streams returned is already in the global arena (taken
 *   event-ordered, as above). Then (1) the entirely free superblocks cached by the calling
 *   stream's arena and the legacy default stream's arena are returned (event-ordered) and the
 *   request retried; (2) as a last resort the device is synchronised, every entirely free
 *   superblock of every arena returned and the request retried once; (3) rmm::out_of_memory is
 *   thrown (after logging a dump if dump_log_on_failure), whose report() gives the arena size
 *   (reserved and maximum), the free bytes and largest free block over every arena, the stream
 *   and the device (detail/mechanics/arena_oom.hpp). The global arena never grows.
 * - The resource only ever names the stream passed to the current call (or the legacy default
 *   stream): a stream may be destroyed once the work on its blocks is done; it is never used
 *   again by the resource unless a new stream gets the same handle (see arena.md, limits).
 * - Works with the legacy default stream (one shared arena) and with per-thread default streams
 *   (one arena per thread), see rmm::mr::detail::stream_key. When a thread exits, its arena passes
 *   to the next new thread's per-thread default stream, which synchronises the device once to be
 *   ordered after the finished thread's work (not while that stream is being captured: it then
 *   gets a new arena).
 */
#pragma once

#include <rmm/mr/detail/mechanics/arena_memory_resource_impl.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <memory>
#include <optional>

namespace rmm::mr {

/**
 * @brief A suballocator that emphasizes fragmentation avoidance and scalable concurrency support.
 *
 * Allocation and deallocation are thread-safe. Also, this class is compatible with CUDA
 * per-thread default stream.
 *
 * GPU memory is divided into a global arena, per-thread arenas for default streams, and
 * per-stream arenas for non-default streams. Each arena allocates memory from the global arena in
 * chunks called superblocks. A request smaller than 2 MiB that its stream's arena cannot hold
 * takes a batch of 8 superblocks (16 MiB, at most 1/64 of the arena, at least 4 MiB; 2 MiB, or
 * the request alone, if no batch is free) as one superblock, so that the global arena and its
 * lock are touched rarely.
 *
 * Large requests (2 MiB or more), as in real applications rare beside small ones, are handled by
 * the global arena: one that the stream's arena cannot hold in its free blocks takes exactly its
 * size (rounded up to 256 bytes) from the global arena and belongs to no stream arena. Freed
 * while its stream's arena is the only one, it goes back to the global arena at once (no event),
 * so a single-stream program wastes no 2 MiB rounding and keeps no large free range that a
 * differently sized request could use. With several stream arenas, the freeing stream's arena
 * keeps it as an entirely free superblock while its share (below) has room, so that its stream
 * reuses it with no CUDA call; otherwise it goes back, ordered like a returned superblock. Each
 * such allocation, and each free, takes the global arena's lock; the stream arena's lock too only
 * when the stream arena could be involved (its largest free block could hold the request; a
 * superblock it held was as large as the block freed, or several stream arenas exist). The global
 * arena places superblocks and large blocks by two-level segregated good fit (O(1)).
 *
 * Blocks in each stream arena are allocated using address-ordered first fit. When a block is freed,
 * it is coalesced with neighbouring free blocks if the addresses are contiguous. Free superblocks
 * are returned to the global arena once a stream arena's entirely free superblocks exceed its
 * share: the arena size divided by the number of stream arenas, at least 1/64 of the arena (at
 * least 4 MiB). A stream used alone keeps every superblock it frees (large blocks excepted); with
 * more streams, memory one stream keeps reaches another only on that stream's out-of-memory path
 * (step 2 below, one device synchronisation), so give each stream of a many-stream program its
 * own headroom.
 *
 * The global arena is one upstream allocation of fixed size made at construction; it never grows.
 * Sizes are rounded up to 256 bytes; every block is 256-byte aligned. The stream-ordering
 * contract is described at the top of this header and in detail/algorithms/arena.md.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource.
 *
 * allocate(stream, bytes, alignment):
 * - returns nullptr for 0 bytes;
 * - @throws rmm::logic_error if alignment is not a power of two or exceeds 256;
 * - @throws rmm::out_of_memory if the request cannot be met after reclaiming free superblocks;
 *   the message states the requested bytes, the arena size, its free bytes and its largest free
 *   block.
 *
 * deallocate(stream, nullptr, 0, alignment) is a no-op.
 */
class arena_memory_resource : public cuda::mr::shared_resource<detail::arena_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::arena_memory_resource_impl>;

 public:
  /**
   * @brief Constructs an arena memory resource, allocating the whole global arena from
   * @p upstream (on the default stream, then synchronised).
   *
   * @param upstream The resource from which to allocate blocks for the global arena.
   * @param arena_size Size in bytes of the global arena (rounded down to a multiple of 256).
   * Defaults to half of the available memory on the current device (rounded down to 2 MiB), at
   * most about 1 TiB (`detail::arena::chunk_stream_arena::max_arena_size`).
   * @param dump_log_on_failure If true, dump memory log when running out of memory: the state of
   * the global arena and of every stream arena is written through rmm::log at level error.
   * @throws rmm::logic_error naming the size if @p arena_size is below 2 MiB (including 0) or
   * above 2^32 - 1 units of 256 bytes (about 1 TiB).
   * @throws rmm::out_of_memory if the upstream cannot provide the arena (its message appended).
   * @throws rmm::cuda_error if the device cannot be queried or synchronised.
   */
  explicit arena_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure              = false)
      : arena_memory_resource{
            new detail::arena_state{std::move(upstream), arena_size, dump_log_on_failure}} {}

  /// @brief Releases this reference; the last one synchronises the device and returns the arena
  /// to the upstream (skipped while the process is exiting).
  ~arena_memory_resource() = default;

  /**
   * @brief The upstream resource the global arena was allocated from. Valid while any copy of
   * this resource exists.
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state_->upstream_ref();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(arena_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  // Takes ownership of `state` (deleted if building the shared state throws).
  explicit arena_memory_resource(detail::arena_state* state)
      : shared_base{cuda::std::in_place_type<detail::arena_memory_resource_impl>,
                    std::unique_ptr<detail::arena_state>{state}},
        state_{state} {}

  detail::arena_state* state_;  // owned by the shared impl; stable for its lifetime
};

static_assert(cuda::mr::resource_with<arena_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
