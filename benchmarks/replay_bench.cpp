// Replays an allocation log (CSV: Thread,Time,Action,Pointer,Size,Stream; Action allocate|free;
// Pointer in hex), such as ../shared/traces/resnet50_train.csv, through each resource.
//
// Timing (ns_per_event): the log is parsed and resolved before timing (every free names the index
// of its allocate, so no map is consulted in the timed loop); the resource is built once, warmed
// up by one untimed replay, then each iteration replays the whole log on the default stream and
// synchronises the device; ns_per_event = time / events in the log (the denominator of
// torch_replay.py). "null_map" replays through the null resource with torch_replay.py's
// unordered_map lookup in the loop: the difference to "null" is what that peer's harness adds.
//
// Efficiency: peak live bytes of the log / the smallest capacity C with which a fresh resource
// replays the whole log without std::bad_alloc, C found by bisection between the peak and 4x the
// peak in steps of 2 MiB. Capacity C means: pool(initial = maximum = C), arena(arena_size = C),
// binning over such a pool, each over an upstream that refuses to hand out more than C bytes in
// total. efficiency_grow = peak live / the most bytes the timed (growing) configuration took
// from its upstream (for cudaMallocAsync: the default pool's reserved high watermark), the
// measure torch_replay.py reports.
//
//   RMM_TRACE=path/to/log.csv rmm_replay_bench [Google Benchmark flags]
//   default log: ../shared/traces/resnet50_train.csv, else .gpu/traces/resnet50_train.csv
//   RMM_BENCH_QUICK=1 (or QUICK=1): bisection in steps of 64 MiB
#include "bench_common.hpp"

#include <replay.hpp>
#include <trace.hpp>
#if RMM_BENCH_HAVE_VMM
#include <expandable_pool.hpp>
#endif

#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

namespace rb = rmm::bench;

// --- the log (tools/replay/trace.hpp) -------------------------------------------------------

using rmm::replay::trace;

std::string default_trace_path() {
  if (char const* env = std::getenv("RMM_TRACE"); env != nullptr && env[0] != '\0') {
    return env;
  }
  for (char const* candidate :
       {"../shared/traces/resnet50_train.csv", ".gpu/traces/resnet50_train.csv"}) {
    if (std::ifstream(candidate)) {
      return candidate;
    }
  }
  return "../shared/traces/resnet50_train.csv";
}

trace const& the_trace() {
  static trace const t = rmm::replay::load_trace(default_trace_path());
  return t;
}

std::string trace_name() { return the_trace().name(); }

// --- replays and bisection (tools/replay/replay.hpp) ----------------------------------------

using rmm::replay::capacity_result;
using rmm::replay::release_leftovers;
using rmm::replay::replay;
using rmm::replay::replay_with_map;

// --- efficiency by bisection -----------------------------------------------------------------

/// @brief The bisection's result for @p resource, computed on first use and kept for the
/// program's lifetime (every repetition reports it).
template <class MakeCapped>
capacity_result const& efficiency_of(std::string const& resource, MakeCapped const& make_capped) {
  static std::map<std::string, capacity_result> results;
  auto it = results.find(resource);
  if (it == results.end()) {
    rb::cache().clear();  // nothing else holds device memory meanwhile
    auto const start              = rb::clock_type::now();
    std::size_t const granularity = (rb::quick_mode() ? std::size_t{64} : std::size_t{2}) << 20;
    auto const r                  = rmm::replay::smallest_capacity(
        the_trace(), granularity, make_capped, [] { rb::device_sync(); });
    std::fprintf(stderr,
                 "efficiency %-8s peak live %.1f MiB, smallest capacity %s MiB (%d replays, "
                 "%.2f s)\n",
                 resource.c_str(),
                 static_cast<double>(the_trace().peak_live) / (1 << 20),
                 r.capacity ? std::to_string(*r.capacity >> 20).c_str() : "none up to 4x peak",
                 r.attempts,
                 rb::seconds_since(start));
    it = results.emplace(resource, r).first;
  }
  return it->second;
}

// --- the benchmarks --------------------------------------------------------------------------

template <class Resource>
struct replay_fixture {
  rb::capped_cuda_resource upstream;  // no cap: counts what the timed configuration took
  std::shared_ptr<Resource> mr;
  std::vector<void*> ptrs;
  rmm::replay::pointer_map map;
  std::size_t runs_per_rep{1};
};

enum class harness { resolved, map };

/// @brief True for the driver-pool resources: they report their pool's reserved high watermark.
template <class Resource, class = void>
struct has_pool_peak : std::false_type {};
template <class Resource>
struct has_pool_peak<Resource,
                     std::void_t<decltype(std::declval<Resource const&>().peak_reserved_bytes())>>
    : std::true_type {};

void no_capacity(std::size_t) {}

#if RMM_BENCH_HAVE_VMM
using rmm::replay::expandable_pool;  // tools/replay/expandable_pool.hpp
#endif

template <class Resource, class Make, class MakeCapped>
void bm_replay(benchmark::State& state,
               std::string const& key,
               std::string const& resource,
               Make const& make,
               MakeCapped const& make_capped,
               bool async_baseline,
               harness how) {
  rb::guarded(state, key, [&] {
    rb::quiet_cpu_scope const quiet{state};  // see quiet_cpu.hpp
    trace const& t = the_trace();
    std::optional<capacity_result> capacity;
    if constexpr (!std::is_same_v<MakeCapped, decltype(&no_capacity)>) {
      capacity = efficiency_of(resource, make_capped);
    }
    bool fresh = false;
    auto& fx   = rb::cache().get<replay_fixture<Resource>>(
        key,
        [&] {
          auto made = std::make_shared<replay_fixture<Resource>>();
          made->mr  = make(made->upstream);
          made->ptrs.assign(t.slot_size.size(), nullptr);
          made->map.reserve(t.records.size());
          return made;
        },
        fresh);
    if (fresh && async_baseline && rb::have_gpu()) {  // measure from an empty pool
      std::uint64_t zero = 0;
      RMM_CUDA_TRY(
          cudaMemPoolSetAttribute(rb::default_mem_pool(), cudaMemPoolAttrReservedMemHigh, &zero));
    }
    Resource& mr                  = *fx.mr;
    cuda::stream_ref const stream = rmm::cuda_stream_view{};
    auto run_once                 = [&] {
      if (how == harness::map) {
        fx.map.clear();
        auto const start = rb::clock_type::now();
        replay_with_map(mr, stream, t, fx.map);
        rb::device_sync();
        double const elapsed = rb::seconds_since(start);
        for (auto const& [recorded, mine] : fx.map) {
          mr.deallocate(stream, mine.first, mine.second, rmm::CUDA_ALLOCATION_ALIGNMENT);
        }
        rb::device_sync();
        return elapsed;
      }
      auto const start = rb::clock_type::now();
      replay(mr, stream, t, fx.ptrs);
      rb::device_sync();
      double const elapsed = rb::seconds_since(start);
      release_leftovers(mr, stream, t, fx.ptrs);
      rb::device_sync();
      return elapsed;
    };
    std::size_t no_failures = 0;  // a replay that runs out of memory is an error here
    auto const m    = rb::measure(state, fx.runs_per_rep, fresh, true, no_failures, run_once);
    auto const runs = static_cast<double>(std::max<std::size_t>(1, m.runs));
    auto const peak = static_cast<double>(t.peak_live);
    auto const mib  = static_cast<double>(1 << 20);
    state.counters["ns_per_event"] =
        m.seconds * 1e9 / (static_cast<double>(t.records.size()) * runs);
    state.counters["peak_live_MiB"] = peak / mib;
    if (capacity) {
      state.counters["efficiency"] =
          capacity->capacity ? peak / static_cast<double>(*capacity->capacity) : 0.0;
      state.counters["capacity_MiB"] =
          capacity->capacity ? static_cast<double>(*capacity->capacity) / mib : 0.0;
    }
    double took = static_cast<double>(fx.upstream.peak());
    if constexpr (has_pool_peak<Resource>::value) {  // its own pool, not the upstream
      took = static_cast<double>(mr.peak_reserved_bytes());
    }
    if (async_baseline && rb::have_gpu()) {
      std::uint64_t high = 0;
      RMM_CUDA_TRY(
          cudaMemPoolGetAttribute(rb::default_mem_pool(), cudaMemPoolAttrReservedMemHigh, &high));
      took = static_cast<double>(high);
    }
    if (took > 0) {
      state.counters["efficiency_grow"]   = peak / took;
      state.counters["upstream_peak_MiB"] = took / mib;
    }
  });
}

template <class Resource, class Make, class MakeCapped>
void add(std::string const& resource,
         Make make,
         MakeCapped make_capped,
         bool async_baseline = false,
         harness how         = harness::resolved) {
  std::string const name = "replay/" + rb::resource_label(resource) + "/" + trace_name();
  benchmark::RegisterBenchmark(
      name.c_str(),
      [name, resource, make, make_capped, async_baseline, how](benchmark::State& state) {
        bm_replay<Resource>(state, name, resource, make, make_capped, async_baseline, how);
      })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

void register_all() {
  using upstream_type = rb::capped_cuda_resource;
  if (rb::have_gpu()) {
#if RMM_BENCH_HAVE_POOL
    add<rmm::mr::pool_memory_resource>(
        "pool",
        [](upstream_type const& up) {
          return std::make_shared<rmm::mr::pool_memory_resource>(up, std::size_t{0});
        },
        [](std::size_t capacity) {
          return std::make_shared<rmm::mr::pool_memory_resource>(
              upstream_type{capacity}, capacity, std::optional<std::size_t>{capacity});
        });
#endif
#if RMM_BENCH_HAVE_VMM
    // Bisection caps the mapped memory with maximum_pool_size.
    add<expandable_pool>(
        "expandable_pool",
        [](upstream_type const&) { return std::make_shared<expandable_pool>(); },
        [](std::size_t capacity) {
          return std::make_shared<expandable_pool>(std::optional<std::size_t>{capacity});
        });
#endif
#if RMM_BENCH_HAVE_ARENA
    add<rmm::mr::arena_memory_resource>(
        "arena",
        [](upstream_type const& up) {
          return std::make_shared<rmm::mr::arena_memory_resource>(up);
        },
        [](std::size_t capacity) {
          return std::make_shared<rmm::mr::arena_memory_resource>(
              upstream_type{capacity}, std::optional<std::size_t>{capacity});
        });
#endif
#if RMM_BENCH_HAVE_BINNING
    add<rmm::mr::binning_memory_resource>(
        "binning",
        [](upstream_type const& up) {
          return std::make_shared<rmm::mr::binning_memory_resource>(
              rb::pool_as_upstream(up, std::size_t{0}),
              rb::binning_min_exponent,
              rb::binning_max_exponent);
        },
        [](std::size_t capacity) {
          return std::make_shared<rmm::mr::binning_memory_resource>(
              rb::pool_as_upstream(
                  upstream_type{capacity}, capacity, std::optional<std::size_t>{capacity}),
              rb::binning_min_exponent,
              rb::binning_max_exponent);
        });
#endif
    // Its own pool through cudaMallocFromPoolAsync. No bisection: the resource's limit counts the
    // bytes requested, not what the driver reserves, so it cannot give the pool a capacity;
    // efficiency_grow is peak live / the pool's reserved high watermark.
    add<rmm::mr::cuda_async_memory_resource>(
        "cuda_async_mr",
        [](upstream_type const&) {
          return std::make_shared<rmm::mr::cuda_async_memory_resource>();
        },
        &no_capacity);
    add<rb::cuda_async_baseline>(
        "cuda_async",
        [](upstream_type const&) { return std::make_shared<rb::cuda_async_baseline>(); },
        &no_capacity,
        true);
  }
  auto make_null = [](upstream_type const&) {
    return std::make_shared<rb::null_memory_resource>();
  };
  add<rb::null_memory_resource>("null", make_null, &no_capacity);
  add<rb::null_memory_resource>("null_map", make_null, &no_capacity, false, harness::map);
}

}  // namespace

int main(int argc, char** argv) {
  auto const load_trace = []() -> int {
    try {
      trace const& t = the_trace();
      std::fprintf(stderr,
                   "log %s: %zu events (%zu allocations, %zu unmatched frees, %zu never freed), "
                   "peak live %.1f MiB\n",
                   t.path.c_str(),
                   t.records.size(),
                   t.slot_size.size(),
                   t.unmatched_frees,
                   t.leftover_slots.size(),
                   static_cast<double>(t.peak_live) / (1 << 20));
    } catch (std::exception const& e) {
      std::fprintf(stderr, "rmm_replay_bench: %s (set RMM_TRACE)\n", e.what());
      return 2;
    }
    return 0;
  };
  return rb::bench_main(argc,
                        argv,
                        "rmm_replay_bench",
                        "only the null resource's rows run",
                        load_trace,
                        register_all);
}
