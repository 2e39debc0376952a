/**
 * @file stream_ordered_core.hpp
 * @brief The stream-ordered allocation protocol shared by the pool and fixed-size resources:
 * per-stream free lists, event-ordered reuse across streams, growth, and the last-resort
 * synchronise-and-coalesce step. The free-list algorithms themselves are host structures
 * (tlsf_free_list, fixed_size_free_list) reached through the derived class. The members that
 * run the per-stream batches (and prefetch) are declared here and defined in
 * stream_ordered_core_batches.hpp, which this header includes at its end.
 *
 * Stream contract (documented on every resource that uses this core; the protocol, its invariant
 * and the argument are in stream_ordered_core.md):
 * - A block freed on stream S goes to S's free list (with two or more streams, first to S's batch
 *   of up to 32 small frees, under S's own lock, with no CUDA call). S may take its own blocks
 *   at once: stream order puts its new work after the old. Memory never handed out belongs to no
 *   stream and is taken by any stream without ordering.
 * - Another stream O takes S's blocks only after cudaStreamWaitEvent(O, S's event). Invariant:
 *   while S's slot is `covered`, the last record of S's event was made, on S, after every block
 *   now in S's list was freed or moved there. A full batch is recorded (by the freeing thread,
 *   which keeps per-thread default streams correct), then returned under the shared lock (all of
 *   it; one-size resources keep its newest half). Blocks in a batch are in no list, so no other
 *   stream sees them. A single-stream resource records
 *   nothing; a second stream that needs the first one's blocks synchronises the device once.
 * - When neither the lists nor growth serve a request, the core synchronises the device, empties
 *   every batch, merges every list, gives fully free upstream chunks back, grows once more and
 *   retries once; then it throws rmm::out_of_memory.
 * - A new thread's per-thread default stream first makes the slots of per-thread streams whose
 *   threads have exited vacant, after one device synchronisation (their streams can no longer be
 *   named): their free and batched blocks become memory owned by no stream, and the new stream
 *   takes a vacant slot (stream_ordered_core.md, "Finished threads").
 * - Streams may be destroyed after their last use, with the hazard every allocator keyed by
 *   stream handle shares: a new stream given a destroyed one's handle reuses its blocks with no
 *   ordering, so synchronise a stream before destroying it if kernels may still use its blocks.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/finished_threads.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_slot.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Stream bookkeeping and the allocation protocol; the derived class owns the free list.
 *
 * Derived provides the free-list hooks (try_allocate, free_block, tag_may_fit, retag,
 * tag_free_bytes, grow, release_free_upstream, oom_report; optionally grow_after_synchronize,
 * adopt_rest, after_free), all called with the core's mutex held: their contracts are in
 * stream_ordered_core.md, "What the derived class provides".
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
  // Blocks of one size only: Derived hides this with a positive count (fixed_size). Its batches
  // are then limited by blocks only, prefetch fills them to this count, and a full batch returns
  // all but its newest this many (stream_ordered_core.md, "Prefetch").
  static constexpr std::size_t prefetch_blocks = 0;

  // Allocates `rounded` bytes usable on `stream`; `requested` is the caller's size for messages.
  void* allocate_on(cuda::stream_ref stream, std::size_t requested, std::size_t rounded) {
    stream_key const key = stream_key::of(stream);
    if (rounded - 1 < batch_limit_.load(std::memory_order_acquire)) {  // batching, small block
      if (auto p = from_own_batch(key, rounded)) {
        return *p;
      }
    }
    spin_lock lock(mtx_);
    tag_t const tag = slot_of(key);
    if (auto p = derived().try_allocate(rounded, tag)) {
      maybe_prefetch(key, rounded, tag);
      return *p;
    }
    return allocate_slow(std::move(lock), stream, key, requested, rounded, tag);
  }

  // The rest of allocate_on after a miss in the stream's own free blocks, with the shared lock
  // (`lock`) held: other streams, growth, the last resort, then the out-of-memory report. Kept
  // out of line so that the hit path above stays small (the report's optional alone cost about
  // 30 instructions per allocation when it lived there).
  [[gnu::noinline]] void* allocate_slow(spin_lock lock,
                                        cuda::stream_ref stream,
                                        stream_key const& key,
                                        std::size_t requested,
                                        std::size_t rounded,
                                        tag_t tag) {
    if (auto p = from_unowned(rounded, tag)) {
      maybe_prefetch(key, rounded, tag);
      return *p;
    }
    if (auto p = from_other_streams(key, rounded, tag)) {
      return *p;
    }
    if (auto p = from_own_returned_batch(key, rounded, tag)) {
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
    auto report = derived().oom_report(requested, rounded);
    if (std::string const streams = describe_streams(); !streams.empty()) {
      report.reason += "; streams with free lists: " + streams;
    }
    lock.unlock();
    // Outside the lock: the device query may take a while.
    report.stream = reinterpret_cast<std::uintptr_t>(stream.get());
    rmm::detail::add_device_memory(report, report.device.value_or(-1));
    throw rmm::out_of_memory(std::move(report));
  }

  // Returns a block freed on `stream`. Never throws: misuse is logged by the derived class.
  void deallocate_on(cuda::stream_ref stream, void* ptr, std::size_t rounded) noexcept {
    stream_key const key = stream_key::of(stream);
    if (rounded - 1 < batch_limit_.load(std::memory_order_acquire)) {  // batching, small block
      if (slot* s = cached_slot(key);
          s != nullptr && free_contended(*s, key, ptr, rounded, stream)) {
        return;
      }
    }
    std::lock_guard<spin_mutex> lock(mtx_);
    tag_t tag = last_;
    if (slots_[tag]->key == key) {  // the stream used last, as in slot_of
      remember_if_batching(key);
    } else {
      tag = tag_for_free(key);
    }
    derived().free_block(ptr, rounded, tag);
    derived().after_free(tag, stream);
    if (tag != 0) {
      cover_after_free(tag, key);
    }
  }

  // The tag that a block freed on `key` goes to when `key` is not the stream used last (shared
  // lock held); 0 if no slot could be made (out of host memory or events), after making the
  // block safe for anyone. Out of line, so that the hit path above stays small.
  [[gnu::noinline]] tag_t tag_for_free(stream_key const& key) noexcept {
    tag_t tag = 0;
    try {
      tag = slot_of(key);
    } catch (...) {
      tag = 0;
    }
    if (tag == 0) {
      cudaStreamSynchronize(key.handle);
    }
    return tag;
  }

  // Waits for all work and returns every batched block (to memory owned by no stream), so that
  // the derived destructor can give memory back.
  void synchronize_for_teardown() noexcept {
    if (!rmm::process_is_exiting()) {
      cudaDeviceSynchronize();
      cudaGetLastError();
    }
    std::lock_guard<spin_mutex> lock(mtx_);
    drain_batches();
  }

  // Returns a block as memory owned by no stream, taken by any stream without ordering: only for
  // a block that no work can still use (after a device synchronisation that followed its last
  // use). Never throws (the derived class logs misuse).
  void free_unowned(void* ptr, std::size_t size) noexcept {
    std::lock_guard<spin_mutex> lock(mtx_);
    derived().free_block(ptr, size, 0);
  }

  // Bytes in the streams' batches: freed, not yet in the free list (counted as free by queries).
  // Shared lock held. Each stream counts its own (a shared counter written by every batched
  // allocation and free was one cache line for all threads).
  [[nodiscard]] std::size_t batched_bytes() const noexcept {
    std::size_t bytes = 0;
    for (auto const& s : slots_) {
      bytes += s->batched.load(std::memory_order_relaxed);
    }
    return bytes;
  }

  // The lock, for derived read-only queries.
  spin_mutex& mutex() const noexcept { return mtx_; }

  // Hook called (with the lock held) after every free, with the freeing stream; the derived class
  // may hide it, e.g. to give memory back above a threshold. Must not throw.
  void after_free(std::uint32_t /*tag*/, cuda::stream_ref /*stream*/) noexcept {}

  // Waits for all work and makes every free block memory owned by no stream (tag 0), merging
  // what different streams freed. Shared lock held. Also the derived class's defragmentation step
  // (pool_shard::grow). If the synchronisation fails (synchronize_device: e.g. another thread
  // captures in global mode), it returns the error and disowns nothing: each batched block goes
  // to its own stream's list, which is then uncovered (a taker must synchronise first, as after a
  // free on a lone stream), and the caller must not treat any free block as idle.
  [[nodiscard]] cudaError_t synchronize_and_disown() {
    // Batches are emptied *before* the synchronisation: a block that another thread puts into
    // its batch meanwhile may be used by work enqueued after the synchronisation began, which
    // the synchronisation does not wait for. (Lists cannot change: the shared lock is held.)
    std::vector<std::size_t> counts;  // blocks taken out of each slot's batch
    std::vector<stream_slot::block> const batched = take_batches(counts);
    cudaError_t const err                         = synchronize_device();
    bool const synchronized                       = err == cudaSuccess;
    std::size_t next                              = 0;
    for (tag_t t = 1; t < slots_.size(); ++t) {
      for (std::size_t j = 0; j < counts[t]; ++j, ++next) {
        derived().free_block(batched[next].ptr, batched[next].size, synchronized ? 0 : t);
      }
      if (!synchronized && counts[t] > 0) {
        slots_[t]->covered = false;  // freed after the slot's last record
      }
    }
    if (!synchronized) {
      return err;
    }
    for (tag_t t = 1; t < slots_.size(); ++t) {
      derived().retag(t, 0);
      slots_[t]->covered = true;
    }
    return cudaSuccess;
  }

  // Waits for all work, makes every free block memory owned by no stream (merging what different
  // streams freed), then calls `give_back()` with the lock held: for a resource's release().
  // Returns the synchronisation's error, without calling `give_back()`, if it failed.
  template <typename F>
  [[nodiscard]] cudaError_t synchronize_and_release(F&& give_back) {
    std::lock_guard<spin_mutex> lock(mtx_);
    if (cudaError_t const err = synchronize_and_disown(); err != cudaSuccess) {
      return err;
    }
    give_back();
    return cudaSuccess;
  }

  // The stream handle that owns free blocks of `tag` (nullptr for tag 0, memory owned by no
  // stream). Shared lock held.
  [[nodiscard]] void* tag_stream(std::uint32_t tag) const noexcept {
    return tag == 0 || tag >= slots_.size() ? nullptr : static_cast<void*>(slots_[tag]->key.handle);
  }

  // Slot keys in a readable form, for out-of-memory reports and dumps.
  [[nodiscard]] std::string describe_streams() const {
    std::ostringstream out;
    char const* sep = "";
    for (std::size_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t]->key == stream_key{}) {
        continue;  // vacant (a finished thread's)
      }
      out << sep << "stream " << static_cast<void*>(slots_[t]->key.handle);
      sep = ", ";
      if (slots_[t]->key.per_thread()) {
        out << " (per-thread, thread " << slots_[t]->key.owner << ")";
      }
      out << ": " << derived().tag_free_bytes(static_cast<tag_t>(t)) << " free";
      if (std::size_t const b = slots_[t]->locked_batch_bytes(); b != 0) {  // shared, then slot
        out << " (+" << b << " in its batch)";
      }
    }
    return out.str();
  }

 public:
  /// Blocks larger than this are always returned at once (a batch would hold back too much).
  static constexpr std::size_t batch_max_block = stream_slot::batch_max_block;

 private:
  // One-size resources limit batches by blocks only (at most 32 of at most 1 MiB each). A
  // function: Derived is incomplete where the class is instantiated.
  static constexpr std::size_t slot_batch_bytes() noexcept {
    return Derived::prefetch_blocks > 0 ? 0 : stream_slot::batch_bytes;
  }
  using slot           = stream_slot;
  using batch_blocks_t = stream_slot::batch_blocks_t;  // a batch taken out

  // The calling thread's recent slots: a free finds its stream's slot without the shared lock.
  static stream_cache<slot*>& cache() noexcept {
    static thread_local stream_cache<slot*> c;
    return c;
  }

  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
  Derived const& derived() const noexcept { return static_cast<Derived const&>(*this); }

  static constexpr std::size_t recycle_threshold = 64;

  [[nodiscard]] slot* cached_slot(stream_key const& key) const noexcept {
    return cache().find(id_, key);
  }

  void remember(stream_key const& key, slot* s) noexcept { cache().remember(id_, key, s); }

  // --- The batches (two or more streams): each stream's recent frees wait in its slot's batch.
  // Defined, and each documented, in stream_ordered_core_batches.hpp.

  // Prefetches for `key` if Derived does and batching is on (inline: the check costs no call).
  void maybe_prefetch(stream_key const& key, std::size_t size, tag_t tag) noexcept;
  // Fills `key`'s batch from its own list or unowned memory (one-size resources). `inline` as
  // when it was defined in the class; both attributes only here (GCC warns when a later
  // declaration adds either).
  [[gnu::noinline]] inline void prefetch(stream_key const& key,
                                         std::size_t size,
                                         tag_t tag) noexcept;
  // A block of exactly `size` bytes from the stream's own batch, under the slot's lock alone.
  std::optional<void*> from_own_batch(stream_key const& key, std::size_t size) noexcept;
  // The free path with two or more streams: into the batch; false if the slot was recycled.
  bool free_contended(slot& s,
                      stream_key const& key,
                      void* ptr,
                      std::size_t size,
                      cuda::stream_ref stream) noexcept;
  // Before growing: the stream's own batch goes into its list, then the request is tried again.
  std::optional<void*> from_own_returned_batch(stream_key const& key, std::size_t size, tag_t tag);
  // Takes `s`'s batch but its newest `keep` blocks, then records `s`'s event.
  std::size_t take_batch_and_record(slot& s,
                                    stream_key const& key,
                                    batch_blocks_t& out,
                                    std::size_t keep = 0) noexcept;
  // Puts blocks taken out of `from`'s batch into `tag`'s list.
  void return_batch(batch_blocks_t const& blocks, std::size_t n, tag_t tag, slot& from) noexcept;
  // Every stream's batched blocks, taken out before a device synchronisation; `counts[t]`: how
  // many came from slot t.
  std::vector<stream_slot::block> take_batches(std::vector<std::size_t>& counts);
  // One slot's batched blocks appended to a list with room for them; returns how many.
  std::size_t take_batch_out(slot& s, std::vector<stream_slot::block>& all) noexcept;
  // At teardown: every batched block goes to memory owned by no stream.
  void drain_batches() noexcept;

  // After a free into `tag`'s list (shared lock held): keeps the invariant. With one stream there
  // is nobody to order against: the slot is marked uncovered, and a second stream that needs its
  // blocks synchronises the device once (from_other_streams). That holds for a per-thread default
  // stream too: the synchronisation waits for every thread's per-thread stream, so no record has
  // to be issued from the owner's thread ahead of time.
  void cover_after_free(tag_t tag, stream_key const& key) noexcept {
    slot& s = *slots_[tag];
    if (slots_.size() <= 2) {
      s.covered = false;
      return;
    }
    s.record(key);
    s.covered = true;
  }

  // The tag of `key`, made on first use. Linear search with a one-entry cache: a handful of
  // streams is the common case, and tags of streams whose lists are empty are recycled.
  // The thread's cache is read only while batching (from_own_batch, the batched free), so it is
  // written only then: remembering on every call cost about 25 instructions per operation of a
  // one-stream resource. Once batching starts, the next visit here fills it.
  tag_t slot_of(stream_key const& key) {
    // No bounds check: slots are never removed (new_slot drops only the one it has just added,
    // before last_ names it). Slot 0's key (and a vacant slot's) is stream_key{}, which no
    // stream's key equals (stream_key::of never gives a null handle), so a hit is never tag 0.
    if (tag_t const tag = last_; slots_[tag]->key == key) {
      remember_if_batching(key);
      return tag;
    }
    return find_or_make_slot(key);
  }

  void remember_if_batching(stream_key const& key) noexcept {
    if (batching()) {  // written under the shared lock, held
      remember(key, slots_[last_].get());
    }
  }

  // slot_of() when the last slot used is not `key`'s: out of line, so that the hit above inlines.
  [[gnu::noinline]] tag_t find_or_make_slot(stream_key const& key) {
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t]->key == key) {
        last_ = t;
        remember(key, slots_[t].get());
        return t;
      }
    }
    if (key.per_thread()) {
      reclaim_finished(key);  // finished threads' slots become vacant for this one
    }
    tag_t const t = new_slot(key);
    if (key.per_thread()) {
      finished_.watch(key);  // when this thread exits, its slot becomes vacant for a new one
    }
    last_ = t;
    remember(key, slots_[t].get());
    if (slots_.size() > 2) {
      // Release: a thread that sees batching on also sees every slot's event (made above).
      batch_limit_.store(batch_max_block, std::memory_order_release);
    }
    return t;
  }

  // Events are made only once they can be needed: for every slot once a second stream appears. A
  // resource used from one ordinary stream makes no CUDA call at all (and so runs over a simulated
  // upstream without a GPU). Shared lock held; throws rmm::cuda_error if an event cannot be made.
  void make_events_if_needed() {
    bool const many = slots_.size() > 2;
    for (std::size_t t = 1; t < slots_.size(); ++t) {
      slot& s = *slots_[t];
      if (s.event == nullptr && many) {
        RMM_CUDA_TRY(cudaEventCreateWithFlags(&s.event, cudaEventDisableTiming));
      }
    }
  }

  // A vacant slot (a finished thread's, reclaim_finished), else a recycled one once there are
  // recycle_threshold slots, else a new one. Shared lock held.
  tag_t new_slot(stream_key const& key) {
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (slot& s = *slots_[t]; s.key == stream_key{}) {  // vacant: empty list and batch
        std::lock_guard<spin_mutex> slot_lock(s.mtx);     // order: shared lock, then slot
        s.key     = key;
        s.covered = true;
        return t;
      }
    }
    if (slots_.size() >= recycle_threshold) {
      for (tag_t t = 1; t < slots_.size(); ++t) {
        slot& s = *slots_[t];
        std::lock_guard<spin_mutex> slot_lock(s.mtx);  // order: shared lock, then slot
        if (derived().tag_free_bytes(t) == 0 && s.batch.empty() &&
            s.returning.load(std::memory_order_relaxed) == 0) {
          s.key     = key;  // the event is re-recorded before any later wait on it
          s.covered = true;
          return t;
        }
      }
    }
    slots_.push_back(std::make_unique<slot>(
        key, nullptr, static_cast<tag_t>(slots_.size()), slot_batch_bytes()));
    try {
      make_events_if_needed();
    } catch (...) {
      slots_.pop_back();  // events made for older slots stay: they are needed later anyway
      throw;
    }
    return static_cast<tag_t>(slots_.size() - 1);
  }

  // Vacates the slots of per-thread default streams whose threads have exited, after one device
  // synchronisation; skipped while `key`'s stream is being captured. Shared lock held. Defined
  // in stream_ordered_core_finished.hpp.
  void reclaim_finished(stream_key const& key) noexcept;

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
    if (slots_[t]->event == nullptr) {
      return true;  // never recorded: its list holds nothing freed on its stream
    }
    if (cudaStreamWaitEvent(key.handle, slots_[t]->event, 0) != cudaSuccess) {
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
      if (!slots_[t]->covered) {
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
        slots_[tag]->record(key);  // the invariant: the rest is in this stream's list now
        slots_[tag]->covered = true;
        return p;
      }
    }
    if (!uncovered) {
      return std::nullopt;
    }
    // Happens once, when a second stream first needs the first stream's memory (again later
    // only if the synchronisation failed).
    if (synchronize_and_disown() != cudaSuccess) {
      return std::nullopt;
    }
    return from_unowned(size, tag);
  }

  // After a device synchronisation no free block has pending work: all become unowned. If the
  // synchronisation fails, nothing is known idle: no memory is given back or unmapped, and the
  // request fails (out of memory, reported by the caller).
  std::optional<void*> last_resort(std::size_t size, tag_t tag, cuda::stream_ref stream) {
    if (synchronize_and_disown() != cudaSuccess) {
      return std::nullopt;
    }
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
      if (slots_[t]->event != nullptr && !rmm::process_is_exiting()) {
        cudaEventDestroy(slots_[t]->event);
      }
    }
  }

  static std::vector<std::unique_ptr<slot>> first_slot() {
    std::vector<std::unique_ptr<slot>> v;
    v.push_back(
        std::make_unique<slot>(stream_key{}, nullptr, 0, slot_batch_bytes()));  // no stream's
    return v;
  }

  mutable spin_mutex mtx_;
  std::vector<std::unique_ptr<slot>> slots_{first_slot()};
  tag_t last_{0};
  std::uint64_t const id_{next_resource_uid()};
  // Two or more streams seen: frees of blocks of up to this many bytes may be batched (0 until
  // then). One size, not a flag and the bound, so that the hot paths test once.
  std::atomic<std::size_t> batch_limit_{0};
  [[nodiscard]] bool batching() const noexcept {
    return batch_limit_.load(std::memory_order_relaxed) != 0;
  }
  finished_threads finished_;  // per-thread streams of exited threads, whose slots to vacate
};

}  // namespace rmm::mr::detail

// The members declared above under "The batches", and reclaim_finished (here, after the class:
// they need it complete).
#include <rmm/mr/detail/mechanics/stream_ordered_core_batches.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core_finished.hpp>
