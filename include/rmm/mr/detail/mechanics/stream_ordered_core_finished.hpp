/**
 * @file stream_ordered_core_finished.hpp
 * @brief The slots of finished threads in the stream-ordered core (stream_ordered_core.hpp): a new
 * thread's per-thread default stream adopts the slot of a per-thread stream whose thread has
 * exited, after one cudaStreamWaitEvent on that slot's event (no host wait); the adopted slot's
 * batch, which no record covers, waits in the core's orphans until a device synchronisation that
 * the resource makes anyway (before it grows, in the last resort, at teardown). The definitions of
 * the members declared in the class under "Finished threads". The protocol and why it is safe:
 * stream_ordered_core.md, "Finished threads".
 */
#pragma once

#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>  // the class (includes this at its end)
#include <rmm/mr/detail/mechanics/stream_slot.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

// Shared lock held. Moves the keys posted by exited threads into `finished_slots_`, each with
// its slot's tag (none if the slot was recycled meanwhile). Without host memory for the list the
// key goes back to the board for a later call.
template <typename Derived>
void stream_ordered_core<Derived>::collect_finished() noexcept {
  while (std::optional<stream_key> const k = finished_.take()) {
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t]->key == *k) {
        try {
          finished_slots_.emplace_back(t, *k);
        } catch (std::bad_alloc const&) {
          finished_.put_back(*k);
          return;
        }
        break;
      }
    }
  }
}

// Shared lock held; `key` is a per-thread default stream about to get a slot (find_or_make_slot).
// A thread that exits leaves its per-thread stream's slot behind: its free list, covered by its
// last record, and its batch, which nobody can ever cover (nobody can name that stream again).
// Left there, a program that starts new threads for new work kept a slot per thread, each
// holding memory that new threads took only through an event wait and a record per block, or not
// at all until the last resort (the pool on 16 per-thread streams, new threads every run: 40 GB
// held and about half of the sampled time in event calls, docs/benchmarks.md, "Issue 12,
// thirty-fourth step").
//
// Here `key`'s stream adopts the most recently finished thread's slot whose list is covered:
// it waits on that slot's event (one cudaStreamWaitEvent: the finished stream's work up to its
// last record comes first on `key`'s stream, which then owns the list, as after an adopt_rest),
// and the slot's batch goes to `orphans_`. The host never waits. Skipped while `key`'s stream is
// being captured (a wait on an event recorded outside the capture would join it to the graph),
// when the wait fails, and when no finished slot is covered: those slots wait for
// reclaim_finished. Returns the adopted tag, or none (the caller makes a slot as before).
template <typename Derived>
std::optional<typename stream_ordered_core<Derived>::tag_t>
stream_ordered_core<Derived>::adopt_finished(stream_key const& key) noexcept {
  collect_finished();
  if (finished_slots_.empty() || is_capturing(cuda::stream_ref{key.handle})) {
    return std::nullopt;
  }
  for (std::size_t i = finished_slots_.size(); i-- > 0;) {
    auto const [t, k] = finished_slots_[i];
    slot& d           = *slots_[t];
    if (d.key != k) {  // recycled meanwhile: not a finished thread's slot any more
      finished_slots_.erase(finished_slots_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (!d.covered) {
      continue;  // blocks freed after its last record (or none made): needs a synchronisation
    }
    try {  // doubling: orphans gather between synchronisations
      if (std::size_t const need = orphans_.size() + stream_slot::batch_blocks;
          orphans_.capacity() < need) {
        orphans_.reserve(std::max(need, 2 * orphans_.capacity()));
      }
    } catch (std::bad_alloc const&) {
      return std::nullopt;
    }
    if (d.event != nullptr && derived().tag_free_bytes(t) != 0 &&
        cudaStreamWaitEvent(key.handle, d.event, 0) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    std::size_t const first = orphans_.size();
    take_batch_out(d, orphans_);  // room reserved above
    for (std::size_t j = first; j < orphans_.size(); ++j) {
      orphan_bytes_ += orphans_[j].size;
    }
    {
      std::lock_guard<spin_mutex> slot_lock(d.mtx);  // order: shared lock, then slot
      d.key = key;  // still covered: the wait above ordered its last record before this stream
    }
    finished_slots_.erase(finished_slots_.begin() + static_cast<std::ptrdiff_t>(i));
    return t;
  }
  return std::nullopt;
}

// Shared lock held, before the resource grows for `key`'s stream (allocate_slow): if finished
// threads left memory that no record covers (`orphans_`, and the lists and batches of finished
// slots not adopted), one device synchronisation orders all their work before everything later,
// and it all becomes memory owned by no stream; the request is then tried there. A
// synchronisation here replaces growth (the last resort would synchronise too, later and after
// growing). Skipped while `key`'s stream is being captured (no synchronisation is allowed then;
// also when the status is unknown).
template <typename Derived>
std::optional<void*> stream_ordered_core<Derived>::from_finished(stream_key const& key,
                                                                 std::size_t size,
                                                                 tag_t tag) {
  collect_finished();
  if ((orphans_.empty() && finished_slots_.empty()) || is_capturing(cuda::stream_ref{key.handle})) {
    return std::nullopt;
  }
  reclaim_finished();
  return from_unowned(size, tag);
}

// Shared lock held. One device synchronisation, then `orphans_` and the batches of the slots in
// `finished_slots_` go to memory owned by no stream, those slots' lists are retagged to it, and
// the slots become vacant (key stream_key{}, which no stream has) for new_slot() to give to new
// streams. The batches are taken out before the synchronisation (as in synchronize_and_disown).
// If the synchronisation fails, or a list cannot be moved for want of host memory, the blocks
// stay (or go back to their slots' lists, uncovered) and those slots stay in `finished_slots_`.
template <typename Derived>
void stream_ordered_core<Derived>::reclaim_finished() noexcept {
  std::vector<std::size_t> counts;  // blocks taken out of each finished slot's batch
  std::vector<stream_slot::block> batched;
  try {
    counts.reserve(finished_slots_.size());
    batched.reserve(finished_slots_.size() * stream_slot::batch_blocks);
  } catch (std::bad_alloc const&) {
    return;
  }
  for (auto const& [t, k] : finished_slots_) {
    counts.push_back(slots_[t]->key == k ? take_batch_out(*slots_[t], batched) : 0);
  }
  bool const synchronized = cudaDeviceSynchronize() == cudaSuccess;
  if (!synchronized) {
    cudaGetLastError();
  }
  if (synchronized) {
    for (auto const& b : orphans_) {
      derived().free_block(b.ptr, b.size, 0);
    }
    orphans_.clear();
    orphan_bytes_ = 0;
  }
  std::size_t next = 0;
  std::size_t kept = 0;  // finished slots not vacated, moved to the front
  for (std::size_t i = 0; i < finished_slots_.size(); ++i) {
    auto const [t, k] = finished_slots_[i];
    if (slots_[t]->key != k) {
      continue;  // stale: recycled meanwhile (its batch was empty)
    }
    slot& s = *slots_[t];
    for (std::size_t j = 0; j < counts[i]; ++j, ++next) {
      derived().free_block(batched[next].ptr, batched[next].size, synchronized ? 0 : t);
    }
    bool moved = synchronized;
    if (moved) {
      try {
        derived().retag(t, 0);
      } catch (std::bad_alloc const&) {  // the list is unchanged
        moved = false;
      }
    }
    if (!moved) {
      s.covered               = false;  // blocks freed after its last record
      finished_slots_[kept++] = finished_slots_[i];
      continue;
    }
    std::lock_guard<spin_mutex> slot_lock(s.mtx);
    s.key     = stream_key{};  // vacant: its event is re-recorded before any later wait on it
    s.covered = true;
  }
  finished_slots_.resize(kept);
}

// Shared lock held, after synchronize_and_disown has retagged every list to 0 (its
// synchronisation began after every batch and `orphans_` were taken out of reach): the slots of
// finished threads, now empty, become vacant.
template <typename Derived>
void stream_ordered_core<Derived>::vacate_finished() noexcept {
  for (auto const& [t, k] : finished_slots_) {
    if (slot& s = *slots_[t]; s.key == k) {
      std::lock_guard<spin_mutex> slot_lock(s.mtx);
      s.key     = stream_key{};
      s.covered = true;
    }
  }
  finished_slots_.clear();
}

}  // namespace rmm::mr::detail
