// Replays an allocation log (../shared/traces/*.csv) through the pool's host allocation algorithm
// (detail::tlsf_free_list) on the host, with no GPU and no timing, to compare growth policies by
// the memory they reserve: peak live bytes / bytes taken from the upstream.
//
//   rmm_growth_sim ../shared/traces/resnet50_train.csv
//
// Two kinds of growth are simulated:
//   - separate chunks (pool_memory_resource over a plain upstream): a request the free list cannot
//     meet adds a new region of the policy's size; regions never coalesce with each other;
//   - one contiguous range mapped up to its high-water mark in 2 MiB granules (a pool over a
//     growable virtual range): free space never splits between chunks.
// The simulation reproduces the H100 measurement of the current policy (4096 MiB reserved for
// 2822 MiB live on resnet50_train), so its other rows are predictions for the GPU benchmark.
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::size_t MiB        = std::size_t{1} << 20U;
constexpr std::size_t granule    = 2 * MiB;  // the driver's recommended granularity on H100
constexpr std::size_t pool_align = 256;

struct event {
  bool allocate;
  std::string pointer;
  std::size_t size;
};

std::size_t align_up(std::size_t value, std::size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::vector<event> read_log(char const* path) {
  std::ifstream in{path};
  std::vector<event> events;
  std::string line;
  std::getline(in, line);  // Thread,Time,Action,Pointer,Size,Stream
  while (std::getline(in, line)) {
    std::stringstream fields{line};
    std::string field[6];
    for (auto& f : field) {
      std::getline(fields, f, ',');
    }
    events.push_back({field[2] == "allocate", field[3], std::stoull(field[4])});
  }
  return events;
}

struct outcome {
  std::size_t reserved;
  std::size_t peak_live;
  std::size_t growths;
};

using live_map = std::unordered_map<std::string, std::pair<std::uintptr_t, std::size_t>>;

// One pass over @p events through @p list. `miss(size)` is called when the list cannot serve a
// request of `size` (already rounded); it adds memory and returns false to stop the replay
// (returned as false here). `placed(ptr, size)` sees every block handed out.
template <typename Miss, typename Placed>
bool replay_once(std::vector<event> const& events,
                 rmm::mr::detail::tlsf_free_list& list,
                 live_map& live,
                 outcome& out,
                 Miss&& miss,
                 Placed&& placed) {
  std::size_t live_bytes = 0;
  for (auto const& [pointer, block] : live) {
    live_bytes += block.second;
  }
  for (auto const& e : events) {
    if (!e.allocate) {
      auto const it = live.find(e.pointer);
      if (it != live.end()) {
        list.deallocate(it->second.first, it->second.second);
        live_bytes -= it->second.second;
        live.erase(it);
      }
      continue;
    }
    std::size_t const size = align_up(std::max<std::size_t>(e.size, 1), pool_align);
    auto ptr               = list.allocate(size);
    if (!ptr) {
      if (!miss(size)) {
        return false;
      }
      ++out.growths;
      ptr = list.allocate(size);
    }
    live[e.pointer] = {*ptr, size};
    live_bytes += size;
    out.peak_live = std::max(out.peak_live, live_bytes);
    placed(*ptr, size);
  }
  return true;
}

// Replays @p events; @p grow returns the bytes to add for a request of `size` when `current`
// bytes are held, or 0 for the contiguous high-water model.
outcome replay(std::vector<event> const& events,
               std::function<std::size_t(std::size_t, std::size_t)> const& grow) {
  rmm::mr::detail::tlsf_free_list list{pool_align};
  live_map live;
  std::uintptr_t const base = std::uintptr_t{1} << 40U;
  std::uintptr_t next       = base;
  bool const contiguous     = !grow;
  if (contiguous) {
    list.insert_region(base, std::size_t{1} << 36U);  // a reservation larger than any device
  }
  outcome out{0, 0, 0};
  std::size_t high_water = 0;
  replay_once(
      events,
      list,
      live,
      out,
      [&](std::size_t size) {
        std::size_t const bytes = align_up(grow(size, out.reserved), granule);
        list.insert_region(next, bytes);
        next += bytes + granule;  // a gap: separate chunks never coalesce
        out.reserved += bytes;
        return true;
      },
      [&](std::uintptr_t ptr, std::size_t size) {
        high_water = std::max<std::size_t>(high_water, ptr + size - base);
      });
  if (contiguous) {
    out.reserved = align_up(high_water, granule);
  }
  return out;
}

// The expandable pool as pool_memory_resource does it over a virtual_memory_resource: one region
// that a request the free list cannot meet extends in place by the granules still missing after
// its free tail. With a cap (bisection), growth beyond it fails the replay. Returns nullopt when
// the replay does not fit under @p cap.
std::optional<outcome> replay_expandable(std::vector<event> const& events,
                                         std::size_t cap,
                                         int rounds = 1) {
  rmm::mr::detail::tlsf_free_list list{pool_align};
  live_map live;
  std::uintptr_t const base = std::uintptr_t{1} << 40U;
  std::optional<rmm::mr::detail::tlsf_free_list::region_id> region;
  outcome out{0, 0, 0};
  auto extend = [&](std::size_t size) {
    std::size_t have = 0;
    if (region) {
      if (auto const tail = list.trailing_free_block(*region)) {
        have = tail->first;
      }
    }
    std::size_t const by = align_up(size - std::min(size, have), granule);
    if (out.reserved + by > cap) {
      return false;
    }
    if (region) {
      list.extend_region(*region, by);
    } else {
      region = list.insert_region(base, by);
    }
    out.reserved += by;
    return true;
  };
  for (int round = 0; round < rounds; ++round) {
    for (auto const& [pointer, block] : live) {  // what the log never freed, as the benchmark does
      list.deallocate(block.first, block.second);
    }
    live.clear();
    if (!replay_once(events, list, live, out, extend, [](std::uintptr_t, std::size_t) {})) {
      return std::nullopt;
    }
  }
  return out;
}

// The expandable pool under a cap with holes: when extending the range would exceed @p cap, the
// pool first remaps a hole whose free neighbours make the request fit, else unmaps the fully
// free pieces (of @p piece bytes, laid out from the range's start) inside every free block
// but the trailing one, and then extends. Holes stay allocated in the list while unmapped.
//
// With @p defragment (pool_memory_resource::set_defragment_threshold), holes are also made with no
// cap: before the pool maps memory (a hole back or more at the end) beyond the most it has
// mapped, if at least that many bytes of whole pieces lie in free blocks before the tail, they
// are unmapped first; @p defragmentations counts how often (each a device synchronisation in the
// pool).
std::optional<outcome> replay_expandable_holes(std::vector<event> const& events,
                                               std::size_t cap,
                                               std::size_t split,
                                               int rounds                            = 1,
                                               std::optional<std::size_t> defragment = {},
                                               std::size_t* defragmentations         = nullptr) {
  std::map<std::uintptr_t, std::size_t> pieces;  // what one cuMemCreate maps, by address
  auto map_range = [&](std::uintptr_t at, std::size_t bytes) {
    std::size_t const piece = std::max(granule, bytes / split / granule * granule);
    for (std::size_t done = 0; done < bytes; done += piece) {
      pieces[at + done] = std::min(piece, bytes - done);
    }
  };
  rmm::mr::detail::tlsf_free_list list{pool_align};
  live_map live;
  std::uintptr_t const base = std::uintptr_t{1} << 40U;
  std::optional<rmm::mr::detail::tlsf_free_list::region_id> region;
  std::map<std::uintptr_t, std::size_t> holes;
  std::size_t mapped = 0;
  outcome out{0, 0, 0};
  auto refill = [&](std::size_t size, std::size_t limit) {
    auto best = holes.end();
    for (auto it = holes.begin(); it != holes.end(); ++it) {
      auto const [before, after] = list.free_neighbours(it->first, 0);
      if (before + it->second + after >= size && mapped + it->second <= cap &&
          it->second <= limit && (best == holes.end() || it->second < best->second)) {
        best = it;
      }
    }
    if (best == holes.end()) {
      return false;
    }
    list.deallocate(best->first, best->second);
    map_range(best->first, best->second);
    mapped += best->second;
    out.reserved = std::max(out.reserved, mapped);
    holes.erase(best);
    return true;
  };
  auto punchable = [&] {
    std::size_t bytes        = 0;
    std::uintptr_t const end = base + list.region_size(*region);
    list.for_each_block([&](std::uintptr_t b, std::size_t s, bool is_free, auto, auto) {
      if (!is_free || b + s == end) {
        return;
      }
      for (auto it = pieces.lower_bound(b); it != pieces.end() && it->first + it->second <= b + s;
           ++it) {
        bytes += it->second;
      }
    });
    return bytes;
  };
  auto punch = [&] {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;  // (block, hole start)
    std::vector<std::size_t> lens;
    std::uintptr_t const end = base + list.region_size(*region);
    list.for_each_block([&](std::uintptr_t b, std::size_t s, bool is_free, auto, auto) {
      if (!is_free || b + s == end) {
        return;
      }
      // Runs of whole pieces inside [b, b + s).
      auto it               = pieces.lower_bound(b);
      std::uintptr_t run    = 0;
      std::size_t run_bytes = 0;
      for (; it != pieces.end() && it->first + it->second <= b + s; ++it) {
        if (run_bytes != 0 && run + run_bytes != it->first) {
          spans.emplace_back(b, run);
          lens.push_back(run_bytes);
          run_bytes = 0;
        }
        if (run_bytes == 0) {
          run = it->first;
        }
        run_bytes += it->second;
      }
      if (run_bytes != 0) {
        spans.emplace_back(b, run);
        lens.push_back(run_bytes);
      }
    });
    for (std::size_t i = 0; i < spans.size(); ++i) {
      list.allocate_range(spans[i].first, spans[i].second, lens[i]);
      auto it = holes.emplace(spans[i].second, lens[i]).first;
      if (auto next = std::next(it); next != holes.end() && it->first + it->second == next->first) {
        list.join_allocated(it->first, next->first);
        it->second += next->second;
        holes.erase(next);
      }
      if (it != holes.begin()) {
        if (auto prev = std::prev(it); prev->first + prev->second == it->first) {
          list.join_allocated(prev->first, it->first);
          prev->second += it->second;
          holes.erase(it);
        }
      }
      mapped -= lens[i];
      pieces.erase(pieces.lower_bound(spans[i].second),
                   pieces.lower_bound(spans[i].second + lens[i]));
    }
  };
  auto missing = [&](std::size_t size) {
    std::size_t have = 0;
    if (auto const tail = list.trailing_free_block(*region)) {
      have = tail->first;
    }
    return align_up(size - std::min(size, have), granule);
  };
  auto extend = [&](std::size_t size) {
    if (!region) {
      if (size > cap) {
        return false;
      }
      region = list.insert_region(base, align_up(size, granule));
      mapped = align_up(size, granule);
      map_range(base, mapped);
      out.reserved = mapped;
      return true;
    }
    std::size_t by = missing(size);
    // Defragmentation: before mapping beyond the most mapped so far (out.reserved).
    if (defragment && mapped + by > out.reserved &&
        punchable() >= std::max<std::size_t>(*defragment, 1)) {
      punch();
      if (defragmentations != nullptr) {
        ++*defragmentations;
      }
      by = missing(size);
      if (list.largest_free_block() >= size) {
        return true;
      }
    }
    if (refill(size, mapped + by > cap ? cap : by)) {  // a hole, if it maps no more than the end
      return true;
    }
    if (mapped + by > cap) {
      punch();
      by = missing(size);
      if (refill(size, mapped + by > cap ? cap : by)) {
        return true;
      }
      by = missing(size);
      if (mapped + by > cap) {
        return false;
      }
    }
    map_range(base + list.region_size(*region), by);
    list.extend_region(*region, by);
    mapped += by;
    out.reserved = std::max(out.reserved, mapped);
    return true;
  };
  for (int round = 0; round < rounds; ++round) {
    for (auto const& [pointer, block] : live) {
      list.deallocate(block.first, block.second);
    }
    live.clear();
    if (!replay_once(events, list, live, out, extend, [](std::uintptr_t, std::size_t) {})) {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <allocation log .csv>\n", argv[0]);
    return 2;
  }
  auto const events = read_log(argv[1]);
  struct policy {
    char const* name;
    std::function<std::size_t(std::size_t, std::size_t)> grow;
  };
  std::vector<policy> const policies = {
      {"contiguous range, mapped to high-water", {}},
      {"max(request, current, 32 MiB) [current]",
       [](std::size_t r, std::size_t c) {
         return std::max({r, c, 32 * MiB});
       }},
      {"max(request, current / 4, 32 MiB)",
       [](std::size_t r, std::size_t c) {
         return std::max({r, c / 4, 32 * MiB});
       }},
      {"max(request, current / 8, 32 MiB)",
       [](std::size_t r, std::size_t c) {
         return std::max({r, c / 8, 32 * MiB});
       }},
      {"max(request, 64 MiB)", [](std::size_t r, std::size_t) { return std::max(r, 64 * MiB); }},
      {"max(request, 32 MiB)", [](std::size_t r, std::size_t) { return std::max(r, 32 * MiB); }},
      {"request (2 MiB granules)", [](std::size_t r, std::size_t) { return r; }},
  };
  std::printf("%zu events from %s\n\n", events.size(), argv[1]);
  std::printf("| growth | reserved MiB | peak live MiB | efficiency | growths |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (auto const& p : policies) {
    auto const r = replay(events, p.grow);
    std::printf("| %s | %zu | %zu | %.3f | %zu |\n",
                p.name,
                r.reserved / MiB,
                r.peak_live / MiB,
                static_cast<double>(r.peak_live) / static_cast<double>(r.reserved),
                r.growths);
  }
  auto const grown = replay_expandable(events, std::numeric_limits<std::size_t>::max());
  std::printf(
      "| expandable pool: extend in place by the missing granules | %zu | %zu | %.3f | %zu |\n",
      grown->reserved / MiB,
      grown->peak_live / MiB,
      static_cast<double>(grown->peak_live) / static_cast<double>(grown->reserved),
      grown->growths);
  auto const repeated = replay_expandable(events, std::numeric_limits<std::size_t>::max(), 6);
  std::printf(
      "| expandable pool, the log replayed 6 times (as the benchmark does) | %zu | %zu | "
      "%.3f | %zu |\n",
      repeated->reserved / MiB,
      repeated->peak_live / MiB,
      static_cast<double>(repeated->peak_live) / static_cast<double>(repeated->reserved),
      repeated->growths);
  // Bisection: the smallest cap (in granules) under which the expandable pool replays the log.
  std::size_t lo = align_up(grown->peak_live, granule) - granule;  // too small
  std::size_t hi = grown->reserved;                                // fits
  while (hi - lo > granule) {
    std::size_t const mid                      = lo + (hi - lo) / granule / 2 * granule;
    (replay_expandable(events, mid) ? hi : lo) = mid;
  }
  std::printf("\nexpandable pool, bisection: smallest cap %zu MiB, efficiency %.3f\n",
              hi / MiB,
              static_cast<double>(grown->peak_live) / static_cast<double>(hi));
  for (std::size_t const split : {std::size_t{1},
                                  std::size_t{2},
                                  std::size_t{4},
                                  std::size_t{8},
                                  std::size_t{16},
                                  std::size_t{1} << 20U}) {
    std::size_t l = align_up(grown->peak_live, granule) - granule;
    std::size_t h = grown->reserved;
    while (h - l > granule) {
      std::size_t const mid                                 = l + (h - l) / granule / 2 * granule;
      (replay_expandable_holes(events, mid, split) ? h : l) = mid;
    }
    std::printf(
        "expandable pool with holes, each mapping in %zu piece(s), bisection: smallest "
        "cap %zu MiB, efficiency %.3f\n",
        split,
        h / MiB,
        static_cast<double>(grown->peak_live) / static_cast<double>(h));
  }
  // Defragmentation without a cap (pool_memory_resource::set_defragment_threshold), with the
  // pool's piece layout (each mapping call in 8 pieces): once through the log, and the log six
  // times over one pool (as the replay benchmark does).
  std::printf(
      "\n| defragment threshold | reserved MiB | efficiency | defragmentations | 6 times: "
      "reserved MiB | 6 times: defragmentations |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (std::size_t const mib :
       {std::size_t{16}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
    std::size_t once = 0;
    std::size_t six  = 0;
    auto const r     = replay_expandable_holes(
        events, std::numeric_limits<std::size_t>::max(), 8, 1, mib * MiB, &once);
    auto const r6 = replay_expandable_holes(
        events, std::numeric_limits<std::size_t>::max(), 8, 6, mib * MiB, &six);
    std::printf("| %zu MiB | %zu | %.3f | %zu | %zu | %zu |\n",
                mib,
                r->reserved / MiB,
                static_cast<double>(r->peak_live) / static_cast<double>(r->reserved),
                once,
                r6->reserved / MiB,
                six);
  }
  return 0;
}
