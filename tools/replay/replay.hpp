/**
 * @file replay.hpp
 * @brief Replaying a resolved allocation log (trace.hpp) through a resource, and the bisection
 * that finds the smallest capacity with which a resource replays it. Shared by rmm-replay and
 * rmm_replay_bench, so that both compute the same numbers. Internal (not installed).
 *
 * Every replay runs on one stream (the default stream) from one thread, with alignment
 * rmm::CUDA_ALLOCATION_ALIGNMENT. `Resource` is anything with the stream-ordered
 * allocate/deallocate of cuda::mr::resource.
 */
#pragma once

#include "trace.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::replay {

/// @brief The timed replay: no bookkeeping beyond the pointer of each slot (@p ptrs has one
/// entry per allocation of the log). Leaves the log's never-freed allocations live.
template <class Resource>
void replay(Resource& mr, cuda::stream_ref stream, trace const& t, std::vector<void*>& ptrs) {
  for (auto const& e : t.events) {
    if (e.alloc) {
      ptrs[e.slot] = mr.allocate(stream, e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    } else {
      mr.deallocate(stream, ptrs[e.slot], e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    }
  }
}

/// @brief Frees what replay() left live: the allocations the log never frees.
template <class Resource>
void release_leftovers(Resource& mr,
                       cuda::stream_ref stream,
                       trace const& t,
                       std::vector<void*> const& ptrs) {
  for (auto const slot : t.leftover_slots) {
    mr.deallocate(stream, ptrs[slot], t.slot_size[slot], rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

/// @brief A pointer map as torch_replay.py keeps it: recorded pointer -> (ours, size).
using pointer_map = std::unordered_map<std::uint64_t, std::pair<void*, std::size_t>>;

/// @brief torch_replay.py's loop: each recorded pointer is looked up in @p m (frees of unknown
/// pointers are skipped). Leaves in @p m what the log never frees.
template <class Resource>
void replay_with_map(Resource& mr, cuda::stream_ref stream, trace const& t, pointer_map& m) {
  for (auto const& r : t.records) {
    if (r.alloc) {
      m[r.pointer] = {mr.allocate(stream, r.size, rmm::CUDA_ALLOCATION_ALIGNMENT), r.size};
    } else if (auto it = m.find(r.pointer); it != m.end()) {
      mr.deallocate(stream, it->second.first, it->second.second, rmm::CUDA_ALLOCATION_ALIGNMENT);
      m.erase(it);
    }
  }
}

/// @brief What replay_checked() saw.
struct checked_result {
  bool ok{true};              ///< no allocation threw std::bad_alloc
  std::size_t failed_at{};    ///< index into trace::events of the failed allocation, if !ok
  std::size_t peak_sample{};  ///< the most that @p sample returned after an event
};

/**
 * @brief Replays the whole log through @p mr and frees everything still live afterwards (also
 * after a failure). @p sample (called after every event; `[] { return std::size_t{0}; }` if not
 * wanted) gives a quantity whose maximum is reported, e.g. the resource's pool size. @p sync is
 * called at the end (e.g. a device synchronisation).
 * @return whether every allocation succeeded: false if one threw std::bad_alloc (including
 * rmm::out_of_memory); other exceptions propagate (after the live allocations are freed).
 */
template <class Resource, class Sample, class Sync>
checked_result replay_checked(Resource& mr,
                              trace const& t,
                              Sample const& sample,
                              Sync const& sync) {
  cuda::stream_ref const stream = rmm::cuda_stream_view{};
  std::vector<void*> ptrs(t.slot_size.size(), nullptr);
  std::vector<char> is_live(t.slot_size.size(), 0);
  checked_result result;
  auto free_live = [&] {
    for (std::size_t slot = 0; slot < ptrs.size(); ++slot) {
      if (is_live[slot] != 0) {
        mr.deallocate(stream, ptrs[slot], t.slot_size[slot], rmm::CUDA_ALLOCATION_ALIGNMENT);
      }
    }
    sync();
  };
  std::size_t i = 0;
  try {
    for (; i < t.events.size(); ++i) {
      auto const& e = t.events[i];
      if (e.alloc) {
        ptrs[e.slot]    = mr.allocate(stream, e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
        is_live[e.slot] = 1;
      } else {
        mr.deallocate(stream, ptrs[e.slot], e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
        is_live[e.slot] = 0;
      }
      std::size_t const s = sample();
      result.peak_sample  = s > result.peak_sample ? s : result.peak_sample;
    }
  } catch (std::bad_alloc const&) {
    result.ok        = false;
    result.failed_at = i;
  } catch (...) {
    free_live();
    throw;
  }
  free_live();
  return result;
}

/// @brief The result of smallest_capacity().
struct capacity_result {
  std::optional<std::size_t> capacity;  ///< the smallest that replays; none up to 4x the peak
  int attempts{};                       ///< replays performed
};

/**
 * @brief The smallest capacity C (a multiple of @p granularity, between the log's peak live bytes
 * rounded up and 4x the peak) with which a resource made by @p make_capped(C) replays the log
 * without std::bad_alloc. Bisection: assumes that a capacity that works keeps working when
 * enlarged. @p make_capped returns something dereferenceable to a resource (e.g. a
 * std::shared_ptr); a std::bad_alloc from it counts as "does not fit". @p sync as in
 * replay_checked().
 */
template <class MakeCapped, class Sync>
capacity_result smallest_capacity(trace const& t,
                                  std::size_t granularity,
                                  MakeCapped const& make_capped,
                                  Sync const& sync) {
  capacity_result result;
  auto fits = [&](std::size_t capacity) {
    ++result.attempts;
    try {
      auto mr = make_capped(capacity);
      return replay_checked(
                 *mr, t, [] { return std::size_t{0}; }, sync)
          .ok;
    } catch (std::bad_alloc const&) {  // the construction itself did not fit
      return false;
    }
  };
  std::size_t lo = rmm::align_up(t.peak_live, granularity);
  std::size_t hi = rmm::align_up(4 * t.peak_live, granularity);
  if (fits(lo)) {
    result.capacity = lo;
    return result;
  }
  if (!fits(hi)) {
    return result;
  }
  while (hi - lo > granularity) {  // lo fails, hi fits
    std::size_t const mid = lo + (hi - lo) / granularity / 2 * granularity;
    (fits(mid) ? hi : lo) = mid;
  }
  result.capacity = hi;
  return result;
}

}  // namespace rmm::replay
