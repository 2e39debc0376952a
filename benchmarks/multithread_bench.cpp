// The random-allocations workload on T threads in {1, 2, 4, 8, 16}, each on its own stream
// (rows mt/...) or on its per-thread default stream (rows mtptds/...), as in
// ../shared/bench/torch_mt_alloc.py: thread t seeds its generator with 1234 + t and keeps its live
// bytes under 16000 / T MiB; n allocations per thread. The streams are made beforehand, untimed.
// The timed region opens once all T threads have started (rb::run_on_threads' gate) and ends after
// they are joined and the device synchronised: Mops_per_s = 2 n T / time and ns_per_op = time /
// (2 n T). Mops_per_s_with_start times from before the threads start, as torch_mt_alloc.py does.
// reserved_MiB: device memory in use after the last run (everything freed) less before the
// resource was made, what the resource keeps (cudaMemGetInfo; 0 without a GPU).
//
//   rmm_multithread_bench [Google Benchmark flags]
//   default: n = 10000 per thread, max = 1 MiB
//   RMM_BENCH_FULL=1: also max = 64 MiB, and cudaMalloc
//   RMM_BENCH_QUICK=1 (or QUICK=1): T in {1, 4}, n = 1000, max = 1 MiB
#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace rb = rmm::bench;

template <class Resource>
struct mt_fixture {
  std::vector<rmm::cuda_stream> owned;  // declared first: destroyed after the resource
  std::vector<cudaStream_t> streams;
  std::shared_ptr<Resource> mr;
  std::vector<rb::live_list> live;
  std::size_t runs_per_rep{1};
  std::vector<double> with_start;  // each run's seconds counted from before the threads start
  double used_before{};            // device memory in use before the resource was made (bytes)
};

/// @brief Device memory in use (total less free), in bytes; 0 without a GPU.
double device_used_bytes() {
  std::size_t free  = 0;
  std::size_t total = 0;
  if (!rb::have_gpu() || cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<double>(total - free);
}

/// @brief Runs the workload on every thread once; returns the seconds from the opening of the
/// threads' gate to after the device synchronisation, and adds the seconds from before the threads
/// start to fx.with_start. What is left live is freed afterwards, untimed.
template <class Resource>
double run_threads(mt_fixture<Resource>& fx,
                   std::size_t num,
                   std::size_t max_mib,
                   std::size_t& failures) {
  std::size_t const threads = fx.streams.size();
  std::vector<std::size_t> thread_failures(threads, 0);
  for (auto& l : fx.live) {
    l.clear();
  }
  auto const start = rb::clock_type::now();
  rb::clock_type::time_point released;
  auto const errors = rb::run_on_threads(
      threads,
      [&](std::size_t t) {
        rb::workload_params const params{
            num, max_mib, 16000 / threads, 1234U + static_cast<unsigned>(t)};
        thread_failures[t] = rb::random_workload_on_own_list(
            *fx.mr, cuda::stream_ref{fx.streams[t]}, params, fx.live[t]);
      },
      &released);
  rb::device_sync();
  auto const end = rb::clock_type::now();
  fx.with_start.push_back(std::chrono::duration<double>(end - start).count());
  double const elapsed = std::chrono::duration<double>(end - released).count();
  for (std::size_t t = 0; t < threads; ++t) {
    rb::release_all(*fx.mr, cuda::stream_ref{fx.streams[t]}, fx.live[t]);
    failures += thread_failures[t];
  }
  rb::device_sync();
  rb::rethrow_first(errors);
  return elapsed;
}

template <class Resource, class Make>
void bm_mt(benchmark::State& state,
           std::string const& key,
           Make const& make,
           std::size_t threads,
           std::size_t num,
           std::size_t max_mib,
           bool warm_up,
           bool per_thread_stream) {
  rb::guarded(state, key, [&] {
    bool fresh = false;
    auto& fx   = rb::cache().get<mt_fixture<Resource>>(
        key,
        [&] {
          auto made = std::make_shared<mt_fixture<Resource>>();
          for (std::size_t t = 0; t < threads; ++t) {
            if (per_thread_stream) {
              made->streams.push_back(cudaStreamPerThread);  // each worker's own default stream
            } else if (rb::have_gpu()) {
              made->owned.emplace_back(rmm::cuda_stream::flags::non_blocking);
              made->streams.push_back(made->owned.back().value());
            } else {
              made->streams.push_back(nullptr);
            }
          }
          made->live.resize(threads);
          for (auto& l : made->live) {
            l.reserve(num + 1);
          }
          made->used_before = device_used_bytes();
          made->mr          = make();
          return made;
        },
        fresh);
    std::size_t failures = 0;
    fx.with_start.clear();
    auto const m     = rb::measure(state, fx.runs_per_rep, fresh, warm_up, failures, [&] {
      return run_threads(fx, num, max_mib, failures);
    });
    auto const runs  = static_cast<double>(std::max<std::size_t>(1, m.runs));
    double const ops = 2.0 * static_cast<double>(num) * static_cast<double>(threads) * runs;
    state.counters["Mops_per_s"] = ops / m.seconds / 1e6;
    state.counters["ns_per_op"]  = m.seconds * 1e9 / ops;
    double with_start = 0;  // the timed runs are the last m.runs (a warm-up may precede them)
    for (std::size_t r = fx.with_start.size() - std::min(fx.with_start.size(), m.runs);
         r < fx.with_start.size();
         ++r) {
      with_start += fx.with_start[r];
    }
    state.counters["Mops_per_s_with_start"] = ops / with_start / 1e6;
    state.counters["failed_allocs"]         = static_cast<double>(failures) / runs;
    // What the resource holds once every run has freed everything: its reservation, the memory
    // price of its speed (each thread's live peak is at most 16000 / T MiB).
    state.counters["reserved_MiB"] = (device_used_bytes() - fx.used_before) / (1024.0 * 1024.0);
  });
}

template <class Resource, class Make>
void add(std::string const& resource,
         std::size_t threads,
         std::size_t num,
         std::size_t max_mib,
         Make make,
         bool warm_up           = true,
         bool per_thread_stream = false) {
  std::string const name = std::string{per_thread_stream ? "mtptds/" : "mt/"} +
                           rb::resource_label(resource) + "/T:" + std::to_string(threads) +
                           "/n:" + std::to_string(num) + "/max:" + std::to_string(max_mib);
  benchmark::RegisterBenchmark(
      name.c_str(),
      [name, make, threads, num, max_mib, warm_up, per_thread_stream](benchmark::State& state) {
        bm_mt<Resource>(state, name, make, threads, num, max_mib, warm_up, per_thread_stream);
      })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

void register_all() {
  bool const quick = rb::quick_mode();
  std::vector<std::size_t> const thread_counts =
      quick ? std::vector<std::size_t>{1, 4} : std::vector<std::size_t>{1, 2, 4, 8, 16};
  std::size_t const num = quick ? 1000 : 10000;
  std::vector<std::size_t> const maxes =
      rb::full_mode() ? std::vector<std::size_t>{1, 64} : std::vector<std::size_t>{1};
  bool const gpu = rb::have_gpu();
  for (bool const ptds : {false, true}) {
    for (std::size_t const max_mib : maxes) {
      for (std::size_t const threads : thread_counts) {
        if (gpu) {
#if RMM_BENCH_HAVE_POOL
          add<rmm::mr::pool_memory_resource>(
              "pool",
              threads,
              num,
              max_mib,
              [] {
                return std::make_shared<rmm::mr::pool_memory_resource>(
                    rmm::mr::cuda_memory_resource{}, std::size_t{0});
              },
              true,
              ptds);
#endif
#if RMM_BENCH_HAVE_ARENA
          add<rmm::mr::arena_memory_resource>(
              "arena",
              threads,
              num,
              max_mib,
              [] {
                return std::make_shared<rmm::mr::arena_memory_resource>(
                    rmm::mr::cuda_memory_resource{});
              },
              true,
              ptds);
#endif
#if RMM_BENCH_HAVE_BINNING
          add<rmm::mr::binning_memory_resource>(
              "binning",
              threads,
              num,
              max_mib,
              [] {
                return std::make_shared<rmm::mr::binning_memory_resource>(
                    rb::pool_as_upstream(rmm::mr::cuda_memory_resource{}, std::size_t{0}),
                    rb::binning_min_exponent,
                    rb::binning_max_exponent);
              },
              true,
              ptds);
#endif
#if RMM_BENCH_HAVE_FIXED
          if (max_mib <= 4) {
            add<rmm::mr::fixed_size_memory_resource>(
                "fixed_size",
                threads,
                num,
                max_mib,
                [max_mib] {
                  return std::make_shared<rmm::mr::fixed_size_memory_resource>(
                      rmm::mr::cuda_memory_resource{}, max_mib << 20);
                },
                true,
                ptds);
          }
#endif
        }
        add<rb::null_memory_resource>(
            "null",
            threads,
            num,
            max_mib,
            [] { return std::make_shared<rb::null_memory_resource>(); },
            true,
            ptds);
        if (gpu) {
          add<rb::cuda_async_baseline>(
              "cuda_async",
              threads,
              num,
              max_mib,
              [] { return std::make_shared<rb::cuda_async_baseline>(); },
              true,
              ptds);
          if (rb::full_mode()) {
            add<rb::cuda_malloc_baseline>(
                "cuda",
                threads,
                num,
                max_mib,
                [] { return std::make_shared<rb::cuda_malloc_baseline>(); },
                false,
                ptds);
          }
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
      "rmm_multithread_bench",
      "only the null resource's rows run (on stream 0)",
      [] { return 0; },
      register_all);
}
