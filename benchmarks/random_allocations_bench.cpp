// The random-allocations workload (RMM's random_allocations benchmark, as in
// ../shared/bench/random_alloc_raw.cu) over n in {1 000, 10 000, 100 000} and max in {1, 4, 64,
// 256, 1024, 4096} MiB, one thread on the default stream, through each resource and through raw
// cudaMalloc / cudaMallocAsync. Reports ns_per_op = workload time (with the final
// cudaDeviceSynchronize) / (2 n).
//
//   rmm_random_allocations_bench [Google Benchmark flags]
//   RMM_BENCH_QUICK=1 (or QUICK=1): n = 1000, max in {1, 64} only (smoke test)
//   RMM_BENCH_FULL=1: also the slow baseline rows (cudaMallocAsync at n >= 10000 with large
//   sizes, cudaMalloc at n = 10000 with max >= 256 MiB; see want_cuda_async / want_cuda_malloc)
//   RMM_BENCH_SEEDS=S: runs cycle through S workloads (seeds 1..S) instead of repeating one
//   (see workload_seeds)
//   See benchmarks/README.md for the timing method and the other variables.
#include "bench_common.hpp"
#include "stack_shift.hpp"
#include "workload_seeds.hpp"

#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace rb = rmm::bench;

template <class Resource>
struct random_fixture {
  std::shared_ptr<Resource> mr;
  rb::live_list live;
  std::size_t runs_per_rep{1};
  std::size_t runs{0};  // workload runs so far, warm-up included: picks the next run's seed
};

/// @brief The resource is built once per benchmark and warmed up by one untimed run (not
/// cudaMalloc, which has nothing to warm); each repetition then runs the workload as often as
/// fits in RMM_BENCH_REP_S. A run's time includes the final cudaDeviceSynchronize; what a run
/// leaves live is freed afterwards, untimed.
template <class Resource, class Make>
void bm_random(benchmark::State& state,
               std::string const& key,
               Make const& make,
               rb::workload_params const& params,
               bool warm_up) {
  rb::guarded(state, key, [&] {
    rb::quiet_cpu_scope const quiet{state};  // see quiet_cpu.hpp
    bool fresh = false;
    auto& fx   = rb::cache().get<random_fixture<Resource>>(
        key,
        [&] {
          auto made = std::make_shared<random_fixture<Resource>>();
          made->mr  = make();
          made->live.reserve(params.num + 1);
          return made;
        },
        fresh);
    Resource& mr            = *fx.mr;
    cuda::stream_ref stream = rmm::cuda_stream_view{};
    std::size_t failures    = 0;
    std::size_t const seeds = rb::workload_seeds();  // see workload_seeds.hpp
    auto const run_once     = [&] {
      rb::workload_params const p = rb::workload_for_run(params, fx.runs++, seeds);
      fx.live.clear();
      auto const start = rb::clock_type::now();
      failures += rb::random_workload(mr, stream, p, fx.live);
      rb::device_sync();
      double const elapsed = rb::seconds_since(start);
      rb::release_all(mr, stream, fx.live);
      rb::device_sync();
      return elapsed;
    };
    // Several workloads: a fresh resource first runs each once, untimed, so that it has grown to
    // the largest of their peaks before any timed run.
    if (fresh && warm_up && seeds > 1) {
      for (std::size_t s = 0; s < seeds; ++s) {
        rb::check_run_time(run_once());
      }
    }
    auto const m    = rb::with_stack_shift(rb::stack_shift_bytes(), [&] {  // see stack_shift.hpp
      return rb::measure(state, fx.runs_per_rep, fresh, warm_up, failures, run_once);
    });
    auto const runs = static_cast<double>(std::max<std::size_t>(1, m.runs));
    state.counters["ns_per_op"] = m.seconds * 1e9 / (2.0 * static_cast<double>(params.num) * runs);
    state.counters["failed_allocs"] = static_cast<double>(failures) / runs;
    state.counters["seeds"]         = static_cast<double>(seeds);
  });
}

template <class Resource, class Make>
void add(std::string const& resource,
         std::size_t n,
         std::size_t max_mib,
         Make make,
         bool warm_up = true) {
  std::string const name = "random/" + rb::resource_label(resource) + "/n:" + std::to_string(n) +
                           "/max:" + std::to_string(max_mib);
  rb::workload_params const params{n, max_mib};
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, make, params, warm_up](benchmark::State& state) {
                                 bm_random<Resource>(state, name, make, params, warm_up);
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

/// @brief cudaMallocAsync rows: from 256 MiB up a call costs 25 us (256 MiB) to 350 us
/// (4096 MiB) on an H100, so a run of 2n calls takes seconds to a minute. Without
/// RMM_BENCH_FULL=1 only the rows whose run stays under about a second: every size at n = 1000,
/// up to 256 MiB at n = 10000, up to 64 MiB at n = 100000. (scripts/run_benchmarks.sh runs the
/// raw peer on the same rows.)
bool want_cuda_async(std::size_t n, std::size_t max_mib) {
  return rb::full_mode() || n <= 1000 || max_mib <= 64 || (n <= 10000 && max_mib <= 256);
}

/// @brief cudaMalloc rows: tens of microseconds per call, milliseconds for GiB sizes, so only
/// n = 1000 at every size and n = 10000 up to 64 MiB unless RMM_BENCH_FULL=1 (then every
/// n <= 10000). One run per repetition, no warm-up run.
bool want_cuda_malloc(std::size_t n, std::size_t max_mib) {
  if (n > 10000) {
    return false;
  }
  if (rb::full_mode() || n <= 1000) {
    return true;
  }
  return max_mib <= 64;
}

void register_all() {
  std::vector<std::size_t> const ns    = rb::quick_mode()
                                             ? std::vector<std::size_t>{1000}
                                             : std::vector<std::size_t>{1000, 10000, 100000};
  std::vector<std::size_t> const maxes = rb::quick_mode()
                                             ? std::vector<std::size_t>{1, 64}
                                             : std::vector<std::size_t>{1, 4, 64, 256, 1024, 4096};
  bool const gpu                       = rb::have_gpu();
  for (std::size_t const n : ns) {
    for (std::size_t const max_mib : maxes) {
      if (gpu) {
#if RMM_BENCH_HAVE_POOL
        // Initial size 0: the pool grows from cudaMalloc on demand (the warm-up run grows it).
        add<rmm::mr::pool_memory_resource>(
            "pool",
            n,
            max_mib,
            [] {
              return std::make_shared<rmm::mr::pool_memory_resource>(
                  rmm::mr::cuda_memory_resource{}, std::size_t{0});
            },
            true);
#endif
#if RMM_BENCH_HAVE_ARENA
        add<rmm::mr::arena_memory_resource>(
            "arena",
            n,
            max_mib,
            [] {
              return std::make_shared<rmm::mr::arena_memory_resource>(
                  rmm::mr::cuda_memory_resource{});
            },
            true);
#endif
#if RMM_BENCH_HAVE_BINNING
        add<rmm::mr::binning_memory_resource>(
            "binning",
            n,
            max_mib,
            [] {
              return std::make_shared<rmm::mr::binning_memory_resource>(
                  rb::pool_as_upstream(rmm::mr::cuda_memory_resource{}, std::size_t{0}),
                  rb::binning_min_exponent,
                  rb::binning_max_exponent);
            },
            true);
#endif
        // A pool of its own through cudaMallocFromPoolAsync: as slow as the cudaMallocAsync
        // baseline at large sizes, so the same rows.
        if (want_cuda_async(n, max_mib)) {
          add<rmm::mr::cuda_async_memory_resource>(
              "cuda_async_mr",
              n,
              max_mib,
              [] { return std::make_shared<rmm::mr::cuda_async_memory_resource>(); },
              true);
        }
#if RMM_BENCH_HAVE_FIXED
        if (max_mib <= 4) {  // every request fits one block of max_mib MiB
          add<rmm::mr::fixed_size_memory_resource>(
              "fixed_size",
              n,
              max_mib,
              [max_mib] {
                return std::make_shared<rmm::mr::fixed_size_memory_resource>(
                    rmm::mr::cuda_memory_resource{}, max_mib << 20);
              },
              true);
        }
#endif
      }
      add<rb::null_memory_resource>(
          "null", n, max_mib, [] { return std::make_shared<rb::null_memory_resource>(); });
      if (gpu) {
        if (want_cuda_async(n, max_mib)) {
          add<rb::cuda_async_baseline>(
              "cuda_async", n, max_mib, [] { return std::make_shared<rb::cuda_async_baseline>(); });
        }
        if (want_cuda_malloc(n, max_mib)) {
          add<rb::cuda_malloc_baseline>(
              "cuda",
              n,
              max_mib,
              [] { return std::make_shared<rb::cuda_malloc_baseline>(); },
              false);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return rb::bench_main(
      argc,
      argv,
      "rmm_random_allocations_bench",
      "only the null resource's rows run",
      [] { return 0; },
      register_all);
}
