/**
 * @file arena_state_grants.hpp
 * @brief arena_state's allocation beyond the hot path's first fit: large blocks and superblocks
 * taken from the global arena, with the events that order them after other streams' releases.
 * Member definitions, included at the end of arena_state.hpp; split out by concern to keep each
 * file short.
 */
#pragma once

#include <rmm/mr/detail/mechanics/arena_state.hpp>

namespace rmm::mr::detail {

inline void* arena_state::try_allocate(stream_arena_state& a, std::size_t bytes) {
  // First fit in the arena's free blocks, as for any request, but a large request only when the
  // arena's largest free block could hold it: otherwise the global arena's lock alone (a large
  // block belongs to no stream arena). The hint is exact on the thread that last changed the
  // arena; a stale one only sends the request to the global arena. One branch on both tests (`|`,
  // not `||`): with requests of mixed sizes, a branch on the size alone mispredicted about every
  // other time (host model, session o).
  bool const large = bytes >= arena::large_request_min;
  bool const fits  = a.host.largest_free_block_hint() >= bytes;
  if (!large | fits) {
    std::lock_guard<spin_mutex> lock{a.mutex};
    if (auto const p = a.host.allocate(bytes); p) {
      return reinterpret_cast<void*>(*p);
    }
    if (!large) {
      return acquire(a, bytes, /*large=*/false);
    }
  }
  if (void* p = acquire_large_alone(bytes); p != nullptr) {
    return p;
  }
  return acquire(a, bytes, /*large=*/true);
}

inline void* arena_state::acquire_large_alone(std::size_t bytes) {
  if (several_arenas()) {  // true is never stale: with several arenas, grant_for's one lock only
    return nullptr;
  }
  std::lock_guard<spin_mutex> glock{global_mutex_};
  if (by_id_.size() != 1) {  // a second arena came since the flag was read
    return nullptr;
  }
  // The only arena there has ever been (by_id_ never shrinks): every ticket in the global arena
  // is its own, which its stream orders already (grant_for skips them too).
  auto const base = global_->acquire_exact_untracked(bytes);
  return base ? reinterpret_cast<void*>(*base) : nullptr;
}

inline void* arena_state::acquire(stream_arena_state& a, std::size_t bytes, bool large) {
  std::vector<cudaEvent_t> waits;
  auto const grant = grant_for(a, bytes, large, waits);
  if (!grant) {
    return nullptr;
  }
  try {
    // a.key is stable without a's lock (a large request): only a finished thread's arena is
    // re-keyed, and `a` is the calling thread's (or a created stream's, never re-keyed).
    for (cudaEvent_t const e : waits) {
      RMM_CUDA_TRY(cudaStreamWaitEvent(a.key.handle, e, 0));
    }
    if (large) {
      return reinterpret_cast<void*>(grant->base);
    }
    a.host.add_superblock(grant->base, grant->size);
  } catch (...) {
    std::lock_guard<spin_mutex> glock{global_mutex_};
    owners_.erase(grant->base);
    global_->release(*grant);
    throw;
  }
  auto const p = a.host.allocate(bytes);  // fits: the superblock holds at least `bytes`
  return reinterpret_cast<void*>(*p);
}

inline std::optional<arena::superblock_grant> arena_state::grant_for(
    stream_arena_state& a, std::size_t bytes, bool large, std::vector<cudaEvent_t>& waits) {
  std::optional<arena::superblock_grant> grant;
  std::unique_lock<spin_mutex> glock{global_mutex_};
  if (unordered_releases_ && &a != by_id_.front()) {
    // The first arena returned superblocks with no event while it was alone (give_back): the
    // first superblock any other arena takes waits for the whole device, once. Not under the
    // lock: no unordered release can follow now (`a` is a second arena), and the synchronisation
    // covers every one made before the flag was read.
    glock.unlock();
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    glock.lock();
    unordered_releases_ = false;
  }
  // Superblocks in batches: one global acquisition serves many small requests (the global mutex
  // was 75 % of thread time at 16 threads with one superblock per acquisition). When the global
  // arena has no free batch, the request alone.
  // A large request takes exactly its size, held by no stream arena (arena.md, "Large
  // requests"): no rounding tail, and once freed it is free for every stream.
  if (large) {
    grant = global_->acquire_exact(bytes);
  } else if (std::size_t const batch = batch_bytes(); bytes < batch) {
    grant = global_->acquire(batch);
  }
  if (!grant && !large) {
    grant = global_->acquire(bytes);
  }
  if (!grant) {
    return grant;
  }
  for (arena::ticket const t : grant->tickets) {
    if (t != a.id) {  // the arena's own releases are ordered by its stream already
      waits.push_back(by_id_[t - 1]->event);
    }
  }
  try {
    if (!large && by_id_.size() > 1) {  // one arena: it owns every superblock, no map needed
      owners_.emplace(grant->base, &a);
    }
  } catch (...) {
    global_->release(*grant);
    throw;
  }
  return grant;
}

}  // namespace rmm::mr::detail
