/**
 * @file virtual_memory_resource.hpp
 * @brief Device memory from the CUDA driver's virtual memory management calls: each allocation
 * is an address range reserved large enough to grow, with physical memory mapped for the bytes
 * in use, so that it can grow and shrink in place.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/virtual_memory_state.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <utility>
#include <vector>

namespace rmm::mr {

/**
 * @brief A memory resource that maps physical device memory into reserved virtual address
 * ranges (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), so that an allocation
 * can grow or shrink in place: `try_resize` maps more memory after the current end, or unmaps
 * its tail, and never copies.
 *
 * Allocation: the address range reserved is `reservation_size()` bytes (by default the
 * device's total memory, so that an allocation can grow to anything the device could hold), or
 * the request rounded up to the granularity if that is larger. If the address space cannot hold
 * such a reservation, the allocation falls back to a range of exactly its own (rounded) size,
 * which can then only shrink or grow within that size. Physical memory is mapped in multiples
 * of the device's recommended granularity (`granularity()`, 2 MiB on current GPUs), with
 * read-write access for the owning device and for every peer named at construction, in pieces
 * (one cuMemCreate each) of an eighth of what one call maps and at least one granule. Whole
 * pieces in the middle of an allocation can be unmapped and mapped back (`decommit`, `commit`):
 * the expandable pool uses this for free memory in its middle. Every
 * allocation therefore starts on a granularity boundary, and small allocations waste up to one
 * granule each: this resource is meant as the upstream of a pool (`pool_memory_resource` grows
 * one such range in place; see docs/expandable_pool.md) or for few, large, growing buffers.
 *
 * Stream ordering: new memory is mapped before `allocate` returns and belongs to no stream, so
 * it is usable on any stream at once. Mapping calls are not stream-ordered, so unmapping memory
 * while kernels still use it would fault them: `deallocate(stream, ...)` and a shrinking
 * `try_resize(..., stream)` record an event on @p stream and defer the unmap (and the release of
 * the physical memory and of the address range) until that event has completed. Deferred unmaps
 * are done on later calls into the resource once their event has completed, before an
 * allocation that would otherwise run out of memory (waiting for them), by `flush()`, and by
 * the destructor. An event was chosen over synchronising the stream because synchronisation
 * would stall the calling thread on every free.
 *
 * Errors: construction throws rmm::logic_error if the device does not exist, does not support
 * virtual memory management, or a named peer cannot access it. `allocate` throws
 * rmm::out_of_memory when the device or the address space cannot provide the memory; its
 * report() gives the request, the memory this resource maps (reserved) and hands out (used), the
 * device with its free and total memory, the stream, and as reason the failing driver call and
 * the address space this resource reserves.
 *
 * Thread safety: every member function may be called concurrently (one mutex per resource).
 * The resource is copyable; copies share the same state, and the state is destroyed (leaked
 * allocations unmapped, after a device synchronisation) with the last copy, unless
 * rmm::process_is_exiting().
 */
class virtual_memory_resource : public cuda::mr::shared_resource<detail::virtual_memory_state> {
  using shared_base = cuda::mr::shared_resource<detail::virtual_memory_state>;

 public:
  /// @brief Byte counters of a virtual_memory_resource; see `statistics()`.
  using counters = detail::virtual_memory_counters;

  /**
   * @brief A resource on @p device (default: the current device).
   *
   * @param device The device whose memory is mapped.
   * @param reservation_size Address space reserved per allocation, rounded up to the
   * granularity; 0 (the default) means the device's total memory.
   * @param peer_devices Further devices given read-write access to every mapping.
   * @throws rmm::logic_error if @p device does not exist or lacks virtual memory management,
   * if a peer is @p device itself, does not exist or cannot access @p device, or if the CUDA
   * driver lacks the virtual memory calls.
   * @throws rmm::cuda_error if a driver query fails.
   */
  explicit virtual_memory_resource(cuda_device_id device         = get_current_cuda_device(),
                                   std::size_t reservation_size  = 0,
                                   std::vector<int> peer_devices = {})
      : shared_base{cuda::std::in_place_type<detail::virtual_memory_state>,
                    device,
                    reservation_size,
                    std::move(peer_devices)} {}

  ~virtual_memory_resource() = default;

  /**
   * @brief Grows or shrinks the allocation at @p ptr in place, keeping its address and its first
   * `min(old_bytes, new_bytes)` bytes.
   *
   * Growing maps new physical memory after the mapped end: the difference, rounded up to the
   * granularity, in pieces of at most 16 granules (one cuMemCreate and cuMemMap each, then one
   * cuMemSetAccess for the new range). Nothing is copied, and the cost grows with the memory
   * mapped, not with the allocation's size.
   * Growing within memory already mapped costs no driver call. Shrinking unmaps the pieces of
   * physical memory that lie wholly beyond the new end (rounded up to the granularity), after
   * the work queued so far on @p stream (see the class's stream-ordering note); pieces that
   * straddle the new end stay mapped until the allocation is freed.
   *
   * @param ptr An allocation of this resource.
   * @param old_bytes Its current size (what it was allocated or last resized to).
   * @param new_bytes The size wanted; non-zero.
   * @param stream Work queued on it may still use the tail being unmapped by a shrink.
   * @return true if the allocation now has @p new_bytes bytes; false, leaving it unchanged, if it
   * cannot grow (beyond its reservation, or the device is out of memory).
   * @throws rmm::logic_error if @p ptr is not a live allocation of this resource, @p old_bytes is
   * not its size, or @p new_bytes is 0.
   * @throws std::bad_alloc if host bookkeeping cannot grow, rmm::cuda_error if the device cannot
   * be made current; the allocation is then unchanged.
   */
  bool try_resize(void* ptr,
                  std::size_t old_bytes,
                  std::size_t new_bytes,
                  cuda::stream_ref stream = cuda_stream_view{}) {
    return state().try_resize(ptr, old_bytes, new_bytes, stream);
  }

  /// @brief The mapped end of the allocation at @p ptr: memory is mapped from @p ptr up to this
  /// many bytes (a multiple of the granularity), except in ranges given back by `decommit`.
  /// @throws rmm::logic_error if @p ptr is not a live allocation.
  [[nodiscard]] std::size_t mapped_size(void const* ptr) const { return state().mapped_size(ptr); }

  /**
   * @brief The runs `(offset, bytes)` inside [@p offset, @p offset + @p bytes) of the allocation
   * at @p ptr that `decommit` can unmap: whole pieces of physical memory (each `cuMemCreate`
   * maps at most an eighth of what one call maps, and at least one granule), in increasing
   * order. The piece holding the mapped end is never included, so the mapped end stays put.
   * @throws rmm::logic_error if @p ptr is not a live allocation.
   */
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> decommittable(
      void const* ptr, std::size_t offset, std::size_t bytes) const {
    return state().decommittable(ptr, offset, bytes);
  }

  /**
   * @brief Unmaps and releases [@p offset, @p offset + @p bytes) in the middle of the allocation
   * at @p ptr, after the work queued so far on @p stream (the unmap is deferred like a free's),
   * leaving a hole in its address range that nobody may touch until `commit` maps it again. The
   * address range and the rest of the allocation are unchanged.
   *
   * @pre The range is one of the runs `decommittable` reported (or a run of whole pieces inside
   * one), and the caller no longer uses it.
   * @throws rmm::logic_error if @p ptr is not a live allocation or the range is not whole mapped
   * pieces below the mapped end; nothing is changed then.
   */
  void decommit(void* ptr,
                std::size_t offset,
                std::size_t bytes,
                cuda::stream_ref stream = cuda_stream_view{}) {
    state().decommit(ptr, offset, bytes, stream);
  }

  /**
   * @brief Maps new physical memory into every hole left by `decommit` in [@p offset, @p offset +
   * @p bytes) of the allocation at @p ptr (ranges already mapped are left as they are), with the
   * same access as the rest. Its contents are undefined. The memory belongs to no stream.
   *
   * @return true if the whole range is now mapped; false, with nothing changed, if the device
   * cannot provide the memory.
   * @throws rmm::logic_error if @p ptr is not a live allocation or the range is not whole granules
   * below `mapped_size(ptr)`.
   */
  bool commit(void* ptr, std::size_t offset, std::size_t bytes) {
    return state().commit(ptr, offset, bytes);
  }

  /// @brief Address space reserved for the allocation at @p ptr: the most it can grow to.
  /// @throws rmm::logic_error if @p ptr is not a live allocation.
  [[nodiscard]] std::size_t reserved_size(void const* ptr) const {
    return state().reserved_size(ptr);
  }

  /// @brief Waits for every deferred unmap's event, then unmaps and releases that memory.
  void flush() { state().flush(); }

  /// @brief The counters (bytes reserved, mapped, in use, peak mapped; live allocations), after
  /// giving back deferred memory whose event has completed.
  [[nodiscard]] counters statistics() const { return state().counters(); }

  /// @brief Address space reserved by live allocations and by frees whose deferred release is
  /// still waiting for its event.
  [[nodiscard]] std::size_t reserved_bytes() const { return statistics().reserved; }
  /// @brief Physical memory mapped, including deferred unmaps not yet done.
  [[nodiscard]] std::size_t mapped_bytes() const { return statistics().mapped; }
  /// @brief Bytes asked for by live allocations (at their current sizes).
  [[nodiscard]] std::size_t used_bytes() const { return statistics().used; }

  /// @brief The unit of mapping: the device's recommended allocation granularity.
  [[nodiscard]] std::size_t granularity() const noexcept { return state().granularity(); }
  /// @brief Address space reserved per allocation (unless the request is larger).
  [[nodiscard]] std::size_t reservation_size() const noexcept { return state().reservation_size(); }
  /// @brief The device whose memory this resource maps.
  [[nodiscard]] cuda_device_id device() const noexcept { return state().device(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(virtual_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  [[nodiscard]] detail::virtual_memory_state& state() const noexcept {
    return detail::shared_state<detail::virtual_memory_state>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<virtual_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
