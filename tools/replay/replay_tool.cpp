// The engine of rmm-replay: see replay_tool.hpp and docs/replay.md. The definitions are those of
// benchmarks/replay_bench.cpp (the same code: replay.hpp), so that the tool over real memory
// reproduces the benchmark's numbers.
#include "replay_tool.hpp"

#include "capped_cuda_resource.hpp"  // benchmarks/: the counting, capped cudaMalloc upstream
#include "expandable_pool.hpp"
#include "pictures.hpp"
#include "replay.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace rmm::replay {
namespace {

// The binning resource's bins, as in benchmarks/bench_common.hpp: 2^18 .. 2^22 bytes.
constexpr std::int8_t binning_min_exponent = 18;
constexpr std::int8_t binning_max_exponent = 22;
constexpr double mib                       = 1 << 20;

using sim_upstream = rmm::mr::simulated_memory_resource;
using gpu_upstream = rmm::bench::capped_cuda_resource;

bool have_gpu() {
  int count     = 0;
  bool const ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

struct context {
  trace const& t;
  tool_options const& options;
  std::ostream& progress;
  std::function<void()> sync;  // after each replay: a device synchronisation over real memory
};

/// One more replay for --pictures, on the fresh resource: the timeline, and a pool's snapshot at
/// the log's peak.
template <class Resource, class Reserved>
void record_pictures(Resource& mr,
                     Reserved const& reserved,
                     context const& c,
                     std::string const& name) {
  std::string const dir = c.options.pictures + "/";
  auto at_peak          = [&] {
    if constexpr (has_snapshot<Resource>::value) {
      std::ofstream{dir + "snapshot_" + name + ".json"} << mr.snapshot().to_json();
    }
  };
  auto const points = replay_timeline(mr, c.t, reserved, at_peak);
  c.sync();
  std::ofstream out{dir + "timeline_" + name + ".csv"};
  out << "resource,event,live_bytes,reserved_bytes\n";
  write_timeline(out, name, points);
  if (!out) {
    throw std::runtime_error("cannot write " + dir + "timeline_" + name + ".csv");
  }
}

/// Warm-up replay (checked), then the timed replays; fills ns_per_event and reserved.
template <class Resource, class Reserved>
void measure(Resource& mr, Reserved const& reserved, context const& c, tool_row& row) {
  if (!c.options.pictures.empty()) {  // first, so that the timeline shows the resource growing
    record_pictures(mr, reserved, c, row.resource);
  }
  auto const warm = replay_checked(
      mr, c.t, [] { return std::size_t{0}; }, c.sync);
  if (!warm.ok) {
    row.error = "out of memory at event " + std::to_string(warm.failed_at) + " of the warm-up";
    return;
  }
  cuda::stream_ref const stream = rmm::cuda_stream_view{};
  std::vector<void*> ptrs(c.t.slot_size.size(), nullptr);
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, c.options.repetitions); ++r) {
    auto const start = std::chrono::steady_clock::now();
    replay(mr, stream, c.t, ptrs);
    c.sync();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    release_leftovers(mr, stream, c.t, ptrs);
    c.sync();
  }
  std::sort(seconds.begin(), seconds.end());
  row.ns_per_event = seconds[seconds.size() / 2] * 1e9 / static_cast<double>(c.t.records.size());
  if (std::size_t const r = reserved(); r > 0) {
    row.reserved = r;
  }
}

template <class MakeCapped>
void search(MakeCapped const& make_capped, context const& c, tool_row& row) {
  auto const start = std::chrono::steady_clock::now();
  auto const r     = smallest_capacity(c.t, c.options.granularity, make_capped, c.sync);
  row.capacity     = r.capacity;
  row.attempts     = r.attempts;
  c.progress << "search " << row.resource << ": "
             << (r.capacity ? std::to_string(*r.capacity) + " bytes" : "none up to 4x peak")
             << " after " << r.attempts << " replays ("
             << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
             << " s)\n";
}

/// pool(initial = maximum = C) over @p Upstream{C}, as replay_bench; where the pool's constructor
/// cannot synchronise the device (no GPU), initial 0 and maximum C, noted in the row.
template <class Upstream>
rmm::mr::pool_memory_resource capped_pool(std::size_t capacity, std::string& note) {
  try {
    return rmm::mr::pool_memory_resource{Upstream{capacity}, capacity, capacity};
  } catch (rmm::cuda_error const&) {
    note = "pool initial size 0 (no device to synchronise), maximum C";
    return rmm::mr::pool_memory_resource{Upstream{capacity}, std::size_t{0}, capacity};
  }
}

/// --search for @p name: the capped configurations of replay_bench, over Upstream{C}.
template <class Upstream>
void search_capped(std::string const& name, context const& c, tool_row& row) {
  if (!c.options.search || !searchable(name) || !row.error.empty()) {
    return;
  }
  std::string& note = row.search_note;
  if (name == "pool") {
    search(
        [&](std::size_t cap) {
          return std::make_shared<rmm::mr::pool_memory_resource>(capped_pool<Upstream>(cap, note));
        },
        c,
        row);
  } else if (name == "binning") {
    search(
        [&](std::size_t cap) {
          return std::make_shared<rmm::mr::binning_memory_resource>(
              capped_pool<Upstream>(cap, note), binning_min_exponent, binning_max_exponent);
        },
        c,
        row);
  } else if (name == "arena") {
    search(
        [](std::size_t cap) {
          return std::make_shared<rmm::mr::arena_memory_resource>(Upstream{cap},
                                                                  std::optional<std::size_t>{cap});
        },
        c,
        row);
  } else if (name == "expandable") {  // the cap is the pool's maximum on mapped memory
    search(
        [](std::size_t cap) {
          return std::make_shared<expandable_pool>(std::optional<std::size_t>{cap});
        },
        c,
        row);
  }
}

/// The growing configurations over the simulated upstream of the command line's capacity.
void run_simulated(std::string const& name, context const& c, tool_row& row) {
  // Without a device these make CUDA calls that fail (docs/replay.md): fixed_size_memory_resource
  // (binning's bins) synchronises the stream when it takes a chunk, and CCCL's stream_ref::sync()
  // then terminates the process; arena_memory_resource synchronises the default stream when it
  // takes its global arena, and throws.
  if (name != "pool" && !have_gpu()) {
    row.error = "needs a GPU even over the simulated upstream (" +
                std::string{name == "binning" ? "fixed_size_memory_resource synchronises its stream"
                                              : "the arena synchronises the default stream"} +
                ")";
    return;
  }
  sim_upstream up{*c.options.simulated};
  auto peak = [up] { return up.peak_bytes(); };
  if (name == "pool") {
    rmm::mr::pool_memory_resource mr{up, 0};
    measure(mr, peak, c, row);
  } else if (name == "binning") {
    rmm::mr::binning_memory_resource mr{
        rmm::mr::pool_memory_resource{up, 0}, binning_min_exponent, binning_max_exponent};
    measure(mr, peak, c, row);
  } else if (name == "arena") {
    rmm::mr::arena_memory_resource mr{up, std::optional<std::size_t>{up.capacity()}};
    measure(mr, peak, c, row);
  }
  search_capped<sim_upstream>(name, c, row);
}

/// The growing configurations of replay_bench over device memory.
void run_real(std::string const& name, context const& c, tool_row& row) {
  gpu_upstream up;  // no cap: counts what the growing configuration takes
  auto peak = [&up] { return up.peak(); };
  if (name == "cuda") {
    measure(up, peak, c, row);
  } else if (name == "cuda_async") {
    rmm::mr::cuda_async_memory_resource mr;
    std::uint64_t high = 0;
    RMM_CUDA_TRY(cudaMemPoolSetAttribute(mr.pool_handle(), cudaMemPoolAttrReservedMemHigh, &high));
    measure(
        mr,
        [&] {
          RMM_CUDA_TRY(
              cudaMemPoolGetAttribute(mr.pool_handle(), cudaMemPoolAttrReservedMemHigh, &high));
          return static_cast<std::size_t>(high);
        },
        c,
        row);
  } else if (name == "pool") {
    rmm::mr::pool_memory_resource mr{up, 0};
    measure(mr, peak, c, row);
  } else if (name == "expandable") {
    expandable_pool mr;
    measure(
        mr, [&mr] { return mr.peak_reserved_bytes(); }, c, row);
    c.progress << "expandable: " << mr.defragmentations()
               << " defragmentations (device synchronisations before growth)\n";
  } else if (name == "arena") {
    rmm::mr::arena_memory_resource mr{up};
    measure(mr, peak, c, row);
  } else if (name == "binning") {
    rmm::mr::binning_memory_resource mr{
        rmm::mr::pool_memory_resource{up, 0}, binning_min_exponent, binning_max_exponent};
    measure(mr, peak, c, row);
  }
  search_capped<gpu_upstream>(name, c, row);
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

}  // namespace

std::vector<std::string> available_resources(bool simulated) {
  if (simulated) {
    return {"pool", "binning", "arena"};
  }
  return {"cuda", "cuda_async", "pool", "expandable", "arena", "binning"};
}

bool searchable(std::string const& resource) {
  return resource == "pool" || resource == "expandable" || resource == "arena" ||
         resource == "binning";
}

std::vector<tool_row> run_tool(tool_options const& options,
                               trace const& t,
                               std::ostream& progress) {
  bool const simulated = options.simulated.has_value();
  auto const known     = available_resources(simulated);
  auto const names     = options.resources.empty() ? known : options.resources;
  for (auto const& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (auto const& k : known) {
        list += " " + k;
      }
      throw std::invalid_argument("unknown resource '" + name + "'" +
                                  (simulated ? " over the simulated upstream" : "") +
                                  "; available:" + list);
    }
  }
  if (!simulated && !have_gpu()) {
    throw std::invalid_argument("no GPU: use --simulated CAPACITY to replay over addresses only");
  }
  context const c{t, options, progress, [simulated] {
                    if (!simulated) {
                      cudaDeviceSynchronize();
                    }
                  }};
  std::vector<tool_row> rows;
  for (auto const& name : names) {
    tool_row row;
    row.resource  = name;
    row.peak_live = t.peak_live;
    progress << "replaying through " << name << (simulated ? " (simulated upstream)" : "") << "\n";
    try {
      if (simulated) {
        run_simulated(name, c, row);
      } else {
        run_real(name, c, row);
      }
    } catch (std::exception const& e) {
      row.error = e.what();
    }
    if (!row.error.empty()) {
      progress << "  " << name << ": " << row.error << "\n";
    }
    rows.push_back(row);
  }
  return rows;
}

std::string markdown_table(std::vector<tool_row> const& rows,
                           trace const& t,
                           tool_options const& options) {
  std::ostringstream out;
  out << "log " << t.name() << ": " << t.records.size() << " events, " << t.slot_size.size()
      << " allocations, peak live " << t.peak_live << " bytes ("
      << fixed(static_cast<double>(t.peak_live) / mib, 1) << " MiB); upstream: "
      << (options.simulated ? "simulated, capacity " + std::to_string(*options.simulated) + " bytes"
                            : std::string{"device memory"})
      << "\n\n";
  out << "| resource | ns/event | peak live MiB | peak reserved MiB | efficiency (growing) "
         "| capacity MiB | efficiency (search) | replays |\n";
  out << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (auto const& r : rows) {
    auto const live = static_cast<double>(r.peak_live);
    out << "| " << r.resource << " | ";
    if (!r.error.empty()) {
      out << "error: " << r.error << " | | | | | | |\n";
      continue;
    }
    out << fixed(r.ns_per_event, 1) << " | " << fixed(live / mib, 1) << " | ";
    if (r.reserved) {
      out << fixed(static_cast<double>(*r.reserved) / mib, 1) << " | "
          << fixed(live / static_cast<double>(*r.reserved), 3) << " | ";
    } else {
      out << "— | — | ";
    }
    if (r.capacity) {
      out << fixed(static_cast<double>(*r.capacity) / mib, 1) << " | "
          << fixed(live / static_cast<double>(*r.capacity), 3) << " | " << r.attempts << " |\n";
    } else if (r.attempts > 0) {
      out << "none up to 4x peak | — | " << r.attempts << " |\n";
    } else {
      out << "— | — | — |\n";
    }
  }
  for (auto const& r : rows) {
    if (!r.search_note.empty()) {
      out << "\n" << r.resource << ": " << r.search_note << "\n";
    }
  }
  return out.str();
}

std::size_t parse_bytes(std::string const& text) {
  std::size_t used = 0;
  double value     = 0;
  try {
    value = std::stod(text, &used);
  } catch (std::exception const&) {
    throw std::invalid_argument("not a byte count: '" + text + "'");
  }
  std::string unit = text.substr(used);
  if (unit.size() == 3 && unit.compare(1, 2, "iB") == 0) {
    unit.resize(1);
  }
  double scale = 1;
  if (unit == "K" || unit == "k") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!unit.empty() && unit != "B") {
    throw std::invalid_argument("unknown unit in '" + text + "' (K, M, G, T or KiB, MiB, ...)");
  }
  if (!(value >= 0) || value * scale > 1.8e19) {
    throw std::invalid_argument("byte count out of range: '" + text + "'");
  }
  return static_cast<std::size_t>(value * scale);
}

std::string usage() {
  return "usage: rmm-replay LOG.csv [--resource NAME]... [--simulated CAPACITY] [--search]\n"
         "                  [--granularity BYTES] [--repetitions N] [--pictures DIR]\n"
         "Replays an allocation log (CSV Thread,Time,Action,Pointer,Size,Stream, as\n"
         "logging_resource_adaptor writes it) through each resource and prints a Markdown table.\n"
         "  --resource NAME      repeatable or comma-separated; default: all. Over device memory:\n"
         "                       cuda cuda_async pool expandable arena binning; simulated: pool\n"
         "                       binning arena\n"
         "  --simulated CAPACITY the pooling resources over an upstream of CAPACITY bytes (K, M,\n"
         "                       G, T suffixes) that hands out addresses only: no GPU needed\n"
         "  --search             the smallest capacity that replays without out of memory\n"
         "                       (bisection between peak live and 4x it)\n"
         "  --granularity BYTES  the bisection's step (default 2M)\n"
         "  --repetitions N      timed replays after the warm-up; the median is reported (3)\n"
         "  --pictures DIR       also write DIR/timeline_<resource>.csv (live and reserved bytes\n"
         "                       per event) and DIR/snapshot_<resource>.json (a pool at the log's\n"
         "                       peak); draw them with tools/pictures/render.py DIR\n"
         "See docs/replay.md.\n";
}

tool_options parse_command_line(std::vector<std::string> const& args) {
  tool_options o;
  auto value = [&](std::size_t& i) -> std::string const& {
    if (i + 1 >= args.size()) {
      throw std::invalid_argument(args[i] + " needs a value");
    }
    return args[++i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string const& a = args[i];
    if (a == "--resource") {
      std::stringstream names{value(i)};
      for (std::string n; std::getline(names, n, ',');) {
        if (!n.empty()) {
          o.resources.push_back(n);
        }
      }
    } else if (a == "--simulated") {
      o.simulated = parse_bytes(value(i));
    } else if (a == "--pictures") {
      o.pictures = value(i);
    } else if (a == "--search") {
      o.search = true;
    } else if (a == "--granularity") {
      o.granularity = parse_bytes(value(i));
      if (o.granularity == 0 || o.granularity % 256 != 0) {
        throw std::invalid_argument("--granularity must be a positive multiple of 256 bytes");
      }
    } else if (a == "--repetitions") {
      std::string const& n = value(i);
      if (!detail::is_decimal(n) || n.size() > 6 || std::stoi(n) < 1) {
        throw std::invalid_argument("--repetitions takes a positive integer, not '" + n + "'");
      }
      o.repetitions = std::stoi(n);
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown option " + a);
    } else if (o.log.empty()) {
      o.log = a;
    } else {
      throw std::invalid_argument("more than one log given: " + o.log + ", " + a);
    }
  }
  if (o.log.empty()) {
    throw std::invalid_argument("no log given");
  }
  return o;
}

}  // namespace rmm::replay
