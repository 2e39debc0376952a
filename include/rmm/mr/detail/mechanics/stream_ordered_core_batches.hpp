/**
 * @file stream_ordered_core_batches.hpp
 * @brief The batches of the stream-ordered core (stream_ordered_core.hpp): once two or more
 * streams use a resource, each stream's small frees wait in its slot's batch, under the slot's own
 * lock and with no CUDA call, and return to the stream's free list after a record of its event
 * when the batch fills, before the stream grows the pool, or around a device synchronisation;
 * resources whose blocks are all one size also prefetch into the batch. These are the definitions
 * of stream_ordered_core's batch members, declared in its class. The protocol and why it is safe:
 * stream_ordered_core.md.
 */
#pragma once

#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>  // the class (includes this at its end)
#include <rmm/mr/detail/mechanics/stream_slot.hpp>

#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace rmm::mr::detail {

// Inline, so that one stream (or a resource that does not prefetch) skips the call.
template <typename Derived>
inline void stream_ordered_core<Derived>::maybe_prefetch(stream_key const& key,
                                                         std::size_t size,
                                                         tag_t tag) noexcept {
  if constexpr (Derived::prefetch_blocks > 0) {
    if (batching()) {
      prefetch(key, size, tag);
    }
  }
}

// With two or more streams (the caller checks), after an allocation for `key` from its own
// list or unowned memory (shared lock held): fills its batch to Derived::prefetch_blocks blocks
// from the same places, never filling it. Why this is safe: stream_ordered_core.md, "Prefetch".
// Not inlined: [[gnu::noinline]] is on its declaration, which GCC wants to be the only one.
template <typename Derived>
void stream_ordered_core<Derived>::prefetch(stream_key const& key,
                                            std::size_t size,
                                            tag_t tag) noexcept {
  if (tag == 0 || size > batch_max_block) {
    return;
  }
  slot& s = *slots_[tag];
  std::lock_guard<spin_mutex> slot_lock(s.mtx);  // order: shared lock, then slot
  if (s.key == key) {
    std::size_t const n = s.prefetch(
        Derived::prefetch_blocks, size, [&] { return derived().try_allocate(size, tag); });
    s.batched.fetch_add(n * size, std::memory_order_relaxed);
  }
}

// A block of exactly `size` bytes from the stream's own batch: safe at once (stream order).
template <typename Derived>
inline std::optional<void*> stream_ordered_core<Derived>::from_own_batch(
    stream_key const& key, std::size_t size) noexcept {
  slot* s = cached_slot(key);
  if (s == nullptr) {
    return std::nullopt;
  }
  std::lock_guard<spin_mutex> slot_lock(s->mtx);
  if (s->key != key) {
    return std::nullopt;  // recycled for another stream
  }
  auto p = s->batch.take_exact(size);
  if (p) {
    s->batched.fetch_sub(size, std::memory_order_relaxed);
  }
  return p;
}

// The free path with two or more streams: every block goes into the stream's batch, and only
// the free that fills the batch records the stream's event and takes the shared lock. Returns
// false if the slot was recycled (the caller then takes the shared path). Lock order: a slot's
// lock is never held while waiting for the shared lock; the shared lock may be held while
// waiting for a slot's.
template <typename Derived>
inline bool stream_ordered_core<Derived>::free_contended(
    slot& s, stream_key const& key, void* ptr, std::size_t size, cuda::stream_ref stream) noexcept {
  spin_lock slot_lock(s.mtx);
  if (s.key != key) {
    return false;
  }
  batch_blocks_t out;
  s.batched.fetch_add(size, std::memory_order_relaxed);
  if (!s.batch.push(ptr, size)) {
    return true;  // no CUDA call, no shared lock
  }
  // Full: record first (the slot lock keeps the slot from being recycled meanwhile), then
  // return the batch. Any record made later on this stream also follows these frees.
  s.returning.fetch_add(1, std::memory_order_relaxed);
  std::size_t const n = take_batch_and_record(s, key, out, Derived::prefetch_blocks);
  slot_lock.unlock();
  std::lock_guard<spin_mutex> lock(mtx_);
  return_batch(out, n, s.tag, s);
  derived().after_free(s.tag, stream);
  s.covered = true;
  s.returning.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// Before the pool grows for stream `key` (shared lock held): the stream's own batch goes into
// its list, after a record of its event issued from this thread, the stream's user (so per-thread
// default streams stay correct); then the request is tried again. The record follows every
// block in the list, so the slot is covered afterwards.
template <typename Derived>
inline std::optional<void*> stream_ordered_core<Derived>::from_own_returned_batch(
    stream_key const& key, std::size_t size, tag_t tag) {
  if (tag == 0) {
    return std::nullopt;
  }
  slot& s = *slots_[tag];
  batch_blocks_t out;
  std::size_t n = 0;
  {
    std::lock_guard<spin_mutex> slot_lock(s.mtx);  // order: shared lock, then slot
    if (s.key != key || s.batch.empty()) {
      return std::nullopt;
    }
    n         = take_batch_and_record(s, key, out);
    s.covered = s.event != nullptr;  // none: one stream, nobody to order against
  }
  return_batch(out, n, tag, s);
  return derived().try_allocate(size, tag);
}

// Takes `s`'s batch but its newest `keep` blocks into `out` (`s`'s lock held), then records
// `s`'s event (it has one once frees are batched) from this thread, the stream's user, as
// per-thread default streams need. Returns the number of blocks taken.
template <typename Derived>
inline std::size_t stream_ordered_core<Derived>::take_batch_and_record(slot& s,
                                                                       stream_key const& key,
                                                                       batch_blocks_t& out,
                                                                       std::size_t keep) noexcept {
  std::size_t const size = s.batch.size();
  std::size_t const n    = s.batch.take_oldest(size - (keep < size ? keep : size), out);
  if (s.event != nullptr) {
    s.record(key);
  }
  return n;
}

// Puts `n` blocks taken out of `from`'s batch into `tag`'s list (shared lock held), off
// `from`'s count.
template <typename Derived>
inline void stream_ordered_core<Derived>::return_batch(batch_blocks_t const& blocks,
                                                       std::size_t n,
                                                       tag_t tag,
                                                       slot& from) noexcept {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    derived().free_block(blocks[i].ptr, blocks[i].size, tag);
    bytes += blocks[i].size;
  }
  from.batched.fetch_sub(bytes, std::memory_order_relaxed);
}

// Every stream's batched blocks, taken out (shared lock held), to be returned after a device
// synchronisation, slot by slot in tag order; `counts[t]` is how many came from slot t. Throws
// std::bad_alloc if the lists cannot be made (nothing is taken then). They leave the counts at
// once: queries hold the shared lock, which the caller keeps until the blocks are in the list.
template <typename Derived>
inline std::vector<stream_slot::block> stream_ordered_core<Derived>::take_batches(
    std::vector<std::size_t>& counts) {
  std::vector<stream_slot::block> all;
  all.reserve(stream_slot::batch_blocks * slots_.size());
  counts.assign(slots_.size(), 0);
  for (std::size_t t = 1; t < slots_.size(); ++t) {
    counts[t] = take_batch_out(*slots_[t], all);
  }
  return all;
}

// Every block of `s`'s batch appended to `all`, which has room for a full batch (no
// reallocation), under `s`'s lock (shared lock held), off `s`'s count. Returns how many.
template <typename Derived>
inline std::size_t stream_ordered_core<Derived>::take_batch_out(
    slot& s, std::vector<stream_slot::block>& all) noexcept {
  batch_blocks_t out;
  std::lock_guard<spin_mutex> slot_lock(s.mtx);
  std::size_t const n = s.batch.take_all(out);
  std::size_t bytes   = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bytes += out[i].size;
    all.push_back(out[i]);
  }
  s.batched.fetch_sub(bytes, std::memory_order_relaxed);
  return n;
}

// At teardown, after the device synchronisation (no other user is left): every batched block
// goes to memory owned by no stream.
template <typename Derived>
inline void stream_ordered_core<Derived>::drain_batches() noexcept {
  batch_blocks_t out;
  for (std::size_t t = 1; t < slots_.size(); ++t) {
    std::lock_guard<spin_mutex> slot_lock(slots_[t]->mtx);
    return_batch(out, slots_[t]->batch.take_all(out), 0, *slots_[t]);
  }
}

}  // namespace rmm::mr::detail
