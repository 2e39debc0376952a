/**
 * @file pictures.hpp
 * @brief What rmm-replay --pictures records: live and reserved bytes after every event of a log,
 * and a snapshot of a pool at the log's peak. Internal; rendered by tools/pictures/render.py.
 */
#pragma once

#include "trace.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rmm::replay {

/// @brief Live and reserved bytes just after one event of the log.
struct timeline_point {
  std::size_t event{};     ///< index into trace::events
  std::size_t live{};      ///< bytes the log has live (sizes as requested)
  std::size_t reserved{};  ///< what the resource holds from upstream (its high-water mark so far)
};

/// @brief Whether `Resource` has `snapshot()` (pool_memory_resource).
template <class Resource, class = void>
struct has_snapshot : std::false_type {};
template <class Resource>
struct has_snapshot<Resource, std::void_t<decltype(std::declval<Resource const&>().snapshot())>>
    : std::true_type {};

/**
 * @brief Replays @p t once through @p mr on the default stream, sampling @p reserved after every
 * event; calls @p at_peak right after the first event at which the log's live bytes reach their
 * peak. Keeps at most about @p max_points points (every k-th event, and the peak's). Frees what
 * the log leaves live. Throws what the resource throws (std::bad_alloc when it runs out).
 */
template <class Resource, class Reserved, class AtPeak>
std::vector<timeline_point> replay_timeline(Resource& mr,
                                            trace const& t,
                                            Reserved const& reserved,
                                            AtPeak const& at_peak,
                                            std::size_t max_points = 2000) {
  cuda::stream_ref const stream = rmm::cuda_stream_view{};
  std::vector<void*> ptrs(t.slot_size.size(), nullptr);
  std::vector<timeline_point> points;
  std::size_t const every =
      std::max<std::size_t>(1, t.events.size() / std::max<std::size_t>(1, max_points));
  std::size_t live = 0;
  bool peak_seen   = false;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    auto const& e = t.events[i];
    if (e.alloc) {
      ptrs[e.slot] = mr.allocate(stream, e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      live += e.size;
    } else {
      mr.deallocate(stream, ptrs[e.slot], e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      live -= e.size;
    }
    bool const at_the_peak = !peak_seen && live == t.peak_live;
    if (at_the_peak) {
      peak_seen = true;
      at_peak();
    }
    if (i % every == 0 || at_the_peak || i + 1 == t.events.size()) {
      points.push_back(timeline_point{i, live, reserved()});
    }
  }
  for (auto const slot : t.leftover_slots) {
    mr.deallocate(stream, ptrs[slot], t.slot_size[slot], rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  return points;
}

/// @brief Writes @p points as CSV lines `resource,event,live_bytes,reserved_bytes`.
inline void write_timeline(std::ostream& out,
                           std::string const& resource,
                           std::vector<timeline_point> const& points) {
  for (auto const& p : points) {
    out << resource << ',' << p.event << ',' << p.live << ',' << p.reserved << '\n';
  }
}

}  // namespace rmm::replay
