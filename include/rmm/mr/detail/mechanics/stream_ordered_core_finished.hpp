/**
 * @file stream_ordered_core_finished.hpp
 * @brief The slots of finished threads in the stream-ordered core (stream_ordered_core.hpp): when
 * a new thread's per-thread default stream needs a slot, the slots of per-thread streams whose
 * threads have exited are vacated after one device synchronisation, their blocks becoming memory
 * owned by no stream. The definition of stream_ordered_core::reclaim_finished, declared in its
 * class. The protocol and why it is safe: stream_ordered_core.md, "Finished threads".
 */
#pragma once

#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>  // the class (includes this at its end)
#include <rmm/mr/detail/mechanics/stream_slot.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

namespace rmm::mr::detail {

// Shared lock held; `key` is a per-thread default stream about to get a slot. A thread that
// exits leaves its per-thread stream's slot behind with its free list and its batch: nobody can
// name that stream again, so no record can ever cover the batch, and a program that starts new
// threads for new work added a slot per thread, each holding memory that new threads took only
// through an event wait and a record per block, or not at all until the last resort (the pool on
// 16 per-thread streams, new threads every run: 40 GB held and about half of the sampled time in
// event calls, docs/benchmarks.md, "Issue 12, thirty-fourth step"). Here one device synchronisation
// orders the work of every finished thread before all later work; their batches are taken out
// before it (as in synchronize_and_disown), and after it their lists and batches become memory
// owned by no stream and their slots vacant (key stream_key{}, which no stream has), for
// new_slot() to give to new streams. Skipped while `key`'s stream is being captured (a
// synchronisation is not allowed then; also when the status is unknown): the finished keys
// stay posted for a later new stream. If the synchronisation fails (or a list cannot be moved
// for want of host memory), the blocks go back to (or stay in) their slots' lists, uncovered,
// and those slots keep their finished keys until the last resort takes their blocks.
template <typename Derived>
void stream_ordered_core<Derived>::reclaim_finished(stream_key const& key) noexcept {
  if (finished_.size() == 0 || is_capturing(cuda::stream_ref{key.handle})) {
    return;
  }
  std::vector<tag_t> dead;
  std::vector<std::size_t> counts;  // blocks taken out of each dead slot's batch
  std::vector<stream_slot::block> batched;
  try {
    dead.reserve(slots_.size());
    counts.reserve(slots_.size());
    batched.reserve(slots_.size() * stream_slot::batch_blocks);
  } catch (std::bad_alloc const&) {
    return;  // the keys stay posted
  }
  while (std::optional<stream_key> const k = finished_.take()) {
    for (tag_t t = 1; t < slots_.size(); ++t) {
      if (slots_[t]->key == *k) {  // none if the slot was recycled meanwhile
        dead.push_back(t);
        break;
      }
    }
  }
  if (dead.empty()) {
    return;
  }
  for (tag_t const t : dead) {
    counts.push_back(take_batch_out(*slots_[t], batched));  // in a list before the lock is freed
  }
  bool const synchronized = synchronize_device() == cudaSuccess;
  std::size_t next        = 0;
  for (std::size_t i = 0; i < dead.size(); ++i) {
    slot& s = *slots_[dead[i]];
    for (std::size_t j = 0; j < counts[i]; ++j, ++next) {
      derived().free_block(batched[next].ptr, batched[next].size, synchronized ? 0 : dead[i]);
    }
    bool moved = synchronized;
    if (moved) {
      try {
        derived().retag(dead[i], 0);
      } catch (std::bad_alloc const&) {  // the list is unchanged
        moved = false;
      }
    }
    if (!moved) {
      s.covered = false;  // blocks freed after its last record: a taker must synchronise
      continue;
    }
    std::lock_guard<spin_mutex> slot_lock(s.mtx);
    s.key     = stream_key{};  // vacant: its event is re-recorded before any later wait on it
    s.covered = true;
  }
}

}  // namespace rmm::mr::detail
