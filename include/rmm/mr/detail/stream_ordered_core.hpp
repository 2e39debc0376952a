/**
 * @file stream_ordered_core.hpp
 * @brief The stream-ordered allocation protocol shared by the pool and fixed-size resources:
 * per-stream free lists, event-ordered reuse across streams, growth, and the last-resort
 * synchronise-and-coalesce step. The free-list algorithms themselves are host structures
 * (tlsf_free_list, fixed_size_free_list) reached through the derived class.
 *
 * Stream contract (documented on every resource that uses this core):
 * - A block freed on stream S goes to S's free list. A later allocation on S may take it at once,
 *   with no CUDA call: stream order already puts the new user's work after the old one's.
 * - Memory never handed out belongs to no stream and is taken by any stream without ordering.
 * - An allocation on S that its own list cannot serve takes a block from the free list of another
 *   stream O that can serve it, after making S wait (cudaStreamWaitEvent) on O's event; the
 *   pool also moves the rest of that free block to S, which the wait has made safe there.
 *   While the resource has seen two or more streams, each free records O's event on O (one
 *   cudaEventRecord), so the event follows every free made on O, and stays valid even after O is
 *   destroyed. A resource used from a single stream records nothing: the common single-stream
 *   program pays no CUDA call at all. When a second stream first needs blocks that the only
 *   stream freed without a record, the core synchronises the device once and turns every free
 *   block into memory owned by no stream.
 * - Only when neither the other streams' lists nor growth from upstream can serve a request does
 *   the core synchronise the device, merge every list (which coalesces neighbours that different
 *   streams freed), give fully free upstream chunks back, grow once more, and retry once; then
 *   it throws rmm::out_of_memory.
 * - Streams may be destroyed at any time after their last use with the resource, with one
 *   hazard that every allocator keyed by stream handle shares: CUDA may give a new stream the
 *   handle of a destroyed one, and the new stream then reuses, with no ordering, blocks that the
 *   old one freed. If kernels using such blocks may still be running, synchronise the stream
 *   before destroying it.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/spin_mutex.hpp>
#include <rmm/mr/detail/stream_key.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Stream bookkeeping and the allocation protocol; the derived class owns the free list.
 *
 * Derived must provide (all called with the core's mutex held):
 * - `std::optional<void*> try_allocate(std::size_t size, tag_t tag)`: a block of @p size bytes
 *   (already rounded by `round_size`) from the free blocks of @p tag, or nullopt;
 * - `void free_block(void* ptr, std::size_t size, tag_t tag)`: returns a block to @p tag
 *   (noexcept in practice: it reports misuse by throwing, which the core logs and swallows);
 * - `bool tag_may_fit(tag_t tag, std::size_t size) const`: whether @p tag's free blocks could
 *   serve @p size (cheap, exact or conservative);
 * - `void retag(tag_t from, tag_t to)`: moves every free block of @p from to @p to;
 * - `std::size_t tag_free_bytes(tag_t tag) const`;
 * - `bool grow(std::size_t size, cuda::stream_ref stream, tag_t tag)`: adds memory from
 *   upstream, allocated on @p stream and owned by @p tag (an upstream may itself be
 * stream-ordered), so that @p size can be served; false if it cannot (a cap, or the upstream
 * failed: keep its message for the report);
 * - `void release_free_upstream()`: gives fully free upstream chunks back (may do nothing);
 * - optionally `bool grow_after_synchronize(std::size_t size, cuda::stream_ref stream, tag_t tag)`,
 *   the last growth attempt, made after a device synchronisation when no stream can still use a
 *   free block (the core's own calls `grow`);
 * - optionally `void adopt_rest(void* block, std::size_t size, tag_t from, tag_t to) noexcept`,
 *   called after `try_allocate(size, from)` served stream `to` from another stream's list (after
 *   the event wait): may give what is left of that free block to `to` (the core's own does
 *   nothing);
 * - optionally `void after_free(tag_t tag, cuda::stream_ref stream) noexcept`, called after each
 *   `free_block` with the freeing stream (the core's own does nothing);
 * - `std::string describe_oom(std::size_t requested, std::size_t rounded) const`.
 *
 * Tag 0 is memory that no stream owns (never handed out); stream slots use tags 1, 2, ...
 */
template <typename Derived>
class stream_ordered_core {
 public:
  using tag_t = std::uint32_t;

  stream_ordered_core()                                      = default;
  stream_ordered_core(stream_ordered_core const&)            = delete;
  stream_ordered_core& operator=(stream_ordered_core const&) = delete;
  stream_ordered_core(stream_ordered_core&&)                 = delete;
  stream_ordered_core& operator=(stream_ordered_core&&)      = delete;

  ~stream_ordered_core() { destroy_events(); }

 protected:
  // Allocates `rounded` bytes usable on `stream`; `requested` is the caller's size for messages.
  void* allocate_on(cuda::stream_ref stream, std::size_t requested, std::size_t rounded) {
    stream_key const key = stream_key::of(stream);
    std::lock_guard<spin_mutex> lock(mtx_);
    tag_t const tag = slot_of(key);
    if (auto p = derived().try_allocate(rounded, tag)) {
      return *p;
    }
    if (auto p = from_unowned(rounded, tag)) {
      return *p;
    }
    if (auto p = from_other_streams(key, rounded, tag)) {
      return *p;
    }
    if (derived().grow(rounded, stream, tag)) {
      if (auto p = derived().try_allocate(rounded, tag)) {
        return *p;
      }
    }
    if (auto p = last_resort(rounded, tag, stream)) {
      return *p;
    }
    int device{-1};
    cudaGetDevice(&device);
    throw rmm::out_of_memory(derived().describe_oom(requested, rounded) + " [device " +
                             std::to_string(device) + ", stream " +
                             std::to_string(reinterpret_cast<std::uintptr_t>(key.handle)) +
                             "; streams with free lists: " + describe_streams() + "]");
  }

  // Returns a block freed on `stream`. Never throws: misuse is logged by the derived class.
  void deallocate_on(cuda::stream_ref stream, void* ptr, std::size_t rounded) noexcept {
    stream_key const key = stream_key::of(stream);
    std::lock_guard<spin_mutex> lock(mtx_);
    tag_t tag = 0;
    try {
      tag = slot_of(key);
    } catch (...) {
      tag = 0;
    }
    if (tag == 0) {
      // No slot could be made (out of host memory or events): make the block safe for anyone.
      cudaStreamSynchronize(key.handle);
    }
    derived().free_block(ptr, rounded, tag);
    derived().after_free(tag, stream);
    if (tag == 0) {
      return;
    }
    // With one stream there is nobody to order against; a per-thread stream can be named only
    // from its own thread, so it records even then.
    slot& s = slots_[tag];
    if (slots_.size() <= 2 && !key.per_thread()) {
      s.covered = false;
      return;
    }
    if (cudaEventRecord(s.event, key.handle) != cudaSuccess) {
      cudaGetLastError();
      cudaStreamSynchronize(key.handle);
    }
    s.covered = true;
  }

  // Waits for all work, so that the derived destructor can give memory back.
  void synchronize_for_teardown() noexcept {
    if (!rmm::process_is_exiting()) {
      cudaDeviceSynchronize();
      cudaGetLastError();
    }
  }

  // The lock, for derived read-only queries.
  spin_mutex& mutex() const noexcept { return mtx_; }

  // Hook called (with the lock held) after every free, with the freeing stream; the derived class
  // may hide it, e.g. to give memory back above a threshold. Must not throw.
  void after_free(std::uint32_t /*tag*/, cuda::stream_ref /*stream*/) noexcept {}

  // Waits for all work, makes every free block memory owned by no stream (merging what different
  // streams freed), then calls `give_back()` with the lock held: for a resource's release().
  template <typename F>
  void synchronize_and_release(F&& give_back) {
    std::lock_guard<spin_mutex> lock(mtx_);
    synchronize_and_disown();
    give_back();
  }

  // Slot keys in a readable form, for out-of-memory reports and dumps.
  [[nodiscard]] std::string describe_streams() const {
    std::ostringstream out;
    for (std::size_t t = 1; t < slots_.size(); ++t) {
      out << (t > 1 ? ", " : "") << "stream " << static_cast<void*>(slots_[t].key.handle);
      if (slots_[t].key.per_thread()) {
        out << " (per-thread, thread " << slots_[t].key.owner << ")";
      }
      out << ": " << derived().tag_free_bytes(static_cast<tag_t>(t)) << " free";
    }
    return out.str();
  }

 private:
  struct slot {
    stream_key key{};
    cudaEvent_t event{};
    bool covered{true};  // the event follows every free made on this stream so far
  };

  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
  Derived const& derived() const noexcept { return static_cast<Derived const&>(*this); }

  static constexpr std::size_t recycle_threshold = 64;

  // The tag of `key`, made on first use. Linear search with a one-entry cache: a handful of
  // streams is the common case, and tags of streams whose lists are empty are recycled.
  tag_t slot_of(stream_key const& key) {
    if (last_ < slots_.size() && slots_[last_].key == key) {
      return last_;
    }
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t].key == key) {
        last_ = t;
        return t;
      }
    }
    tag_t const t = new_slot(key);
    last_         = t;
    return t;
  }

  tag_t new_slot(stream_key const& key) {
    if (slots_.size() >= recycle_threshold) {
      for (tag_t t = 1; t < slots_.size(); ++t) {
        if (derived().tag_free_bytes(t) == 0) {
          slots_[t].key     = key;  // the event is re-recorded before any later wait on it
          slots_[t].covered = true;
          return t;
        }
      }
    }
    slot s{key, nullptr, true};
    RMM_CUDA_TRY(cudaEventCreateWithFlags(&s.event, cudaEventDisableTiming));
    try {
      slots_.push_back(s);
    } catch (...) {
      cudaEventDestroy(s.event);
      throw;
    }
    return static_cast<tag_t>(slots_.size() - 1);
  }

  // Memory never handed out: no ordering needed. Merge it into the stream's list so that it
  // coalesces with the stream's own free neighbours.
  std::optional<void*> from_unowned(std::size_t size, tag_t tag) {
    if (derived().tag_free_bytes(0) == 0) {
      return std::nullopt;
    }
    if (auto p = derived().try_allocate(size, 0)) {
      return p;
    }
    derived().retag(0, tag);
    return derived().try_allocate(size, tag);
  }

  // Makes `key`'s stream wait for everything freed so far on slot `t`'s stream.
  bool order_after(tag_t t, stream_key const& key) {
    if (cudaStreamWaitEvent(key.handle, slots_[t].event, 0) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }

  std::optional<void*> from_other_streams(stream_key const& key, std::size_t size, tag_t tag) {
    bool uncovered = false;
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (t == tag || !derived().tag_may_fit(t, size)) {
        continue;
      }
      if (!slots_[t].covered) {
        uncovered = true;  // freed while it was the only stream: no event to wait on
        continue;
      }
      if (!order_after(t, key)) {
        continue;
      }
      // Take one free block, whole: after the wait all of it is safe on this stream, and what
      // is left of it after the request would otherwise make this stream wait again soon.
      // (Moving whole lists instead makes streams that share a pool steal back and forth.)
      if (auto p = derived().try_allocate(size, t)) {
        derived().adopt_rest(*p, size, t, tag);
        return p;
      }
    }
    if (!uncovered) {
      return std::nullopt;
    }
    // Happens once, when a second stream first needs the first stream's memory.
    synchronize_and_disown();
    return from_unowned(size, tag);
  }

  // After a device synchronisation no free block has pending work: all become unowned.
  void synchronize_and_disown() {
    if (cudaDeviceSynchronize() != cudaSuccess) {
      cudaGetLastError();
    }
    for (tag_t t = 1; t < slots_.size(); ++t) {
      derived().retag(t, 0);
      slots_[t].covered = true;
    }
  }

  std::optional<void*> last_resort(std::size_t size, tag_t tag, cuda::stream_ref stream) {
    synchronize_and_disown();
    if (auto p = from_unowned(size, tag)) {
      return p;
    }
    derived().release_free_upstream();
    if (derived().grow_after_synchronize(size, stream, tag)) {
      return derived().try_allocate(size, tag);
    }
    return std::nullopt;
  }

  bool grow_after_synchronize(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    return derived().grow(size, stream, tag);
  }

  void adopt_rest(void* /*block*/, std::size_t /*size*/, tag_t /*from*/, tag_t /*to*/) noexcept {}

  void destroy_events() noexcept {
    for (std::size_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t].event != nullptr && !rmm::process_is_exiting()) {
        cudaEventDestroy(slots_[t].event);
      }
    }
  }

  mutable spin_mutex mtx_;
  std::vector<slot> slots_{slot{}};  // slot 0: memory owned by no stream
  tag_t last_{0};
};

}  // namespace rmm::mr::detail
