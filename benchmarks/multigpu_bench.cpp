// The multi-thread random-allocations workload spread over G GPUs, G in {1, 2, 4, 8} up to
// cudaGetDeviceCount(), with one resource per device (rows mgpu/<resource>/G:<g>/T:<t>/...):
// per-GPU threads in {1, 4, 8}, so T = G x per-GPU threads; thread t runs on device t % G, makes
// it current at its start (cudaSetDevice on the worker) and uses its own non-blocking stream,
// created beforehand on that device, and that device's resource. As in multithread_bench.cpp:
// thread t seeds its generator with 1234 + t and keeps its live bytes under 16000 / (threads on
// its device) MiB; n allocations per thread. The timed region opens once all threads have started
// (rb::run_on_threads' gate) and ends after they are joined and every device used synchronised.
// Reports the aggregate Mops_per_s = 2 n T / time, ns_per_op = time / (2 n T), failed_allocs and
// gpus = G.
//
//   rmm_multigpu_bench [Google Benchmark flags]
//   default: per-GPU threads in {1, 4, 8}, n = 10000 per thread, max = 1 MiB
//   RMM_BENCH_QUICK=1 (or QUICK=1): per-GPU threads in {1, 4}, n = 1000
//   no GPU: the null resource's G:1 rows only (on stream 0)
#include "bench_common.hpp"

#include <rmm/cuda_device.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace rb = rmm::bench;

/// @brief The number of CUDA devices (0 without a GPU).
int device_count() {
  if (!rb::have_gpu()) {
    return 0;
  }
  int count = 0;
  RMM_CUDA_TRY(cudaGetDeviceCount(&count));
  return count;
}

/// @brief cudaDeviceSynchronize on devices 0 .. gpus - 1, each made current in turn (the
/// caller's device is restored); nothing without a GPU.
void sync_devices(std::size_t gpus) {
  if (!rb::have_gpu()) {
    return;
  }
  for (std::size_t d = 0; d < gpus; ++d) {
    rmm::cuda_set_device_raii const on{rmm::cuda_device_id{static_cast<int>(d)}};
    RMM_CUDA_TRY(cudaDeviceSynchronize());
  }
}

/**
 * @brief One benchmark's state: per device its resource and the streams of the threads on it,
 * per thread its stream handle and live list. The destructor tears each device's part down with
 * that device current: synchronise, destroy the resource, then the streams, then trim the
 * device's default memory pool (what the cudaMallocAsync baseline cached there).
 */
template <class Resource>
struct mgpu_fixture {
  std::size_t gpus{1};
  std::vector<std::vector<rmm::cuda_stream>> owned;  // per device
  std::vector<std::shared_ptr<Resource>> mrs;        // per device
  std::vector<cudaStream_t> streams;                 // per thread
  std::vector<rb::live_list> live;                   // per thread
  std::size_t runs_per_rep{1};

  mgpu_fixture()                               = default;
  mgpu_fixture(mgpu_fixture const&)            = delete;
  mgpu_fixture& operator=(mgpu_fixture const&) = delete;

  ~mgpu_fixture() {
    if (!rb::have_gpu()) {
      return;  // members go in reverse order: the resources before the streams
    }
    std::size_t const parts = std::max(owned.size(), mrs.size());
    int previous            = 0;
    static_cast<void>(cudaGetDevice(&previous));
    for (std::size_t d = parts; d-- > 0;) {
      int const device = static_cast<int>(d);
      static_cast<void>(cudaSetDevice(device));
      static_cast<void>(cudaDeviceSynchronize());
      if (d < mrs.size()) {
        mrs[d].reset();
      }
      if (d < owned.size()) {
        owned[d].clear();
      }
      cudaMemPool_t pool{};
      if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
        static_cast<void>(cudaMemPoolTrimTo(pool, 0));
      }
      static_cast<void>(cudaGetLastError());
    }
    static_cast<void>(cudaSetDevice(previous));
  }
};

/// @brief Runs the workload on every thread once; returns the seconds from before the threads
/// start to after every used device is synchronised. What is left live is freed afterwards,
/// untimed, on each thread's stream with its device current.
template <class Resource>
double run_threads(mgpu_fixture<Resource>& fx,
                   std::size_t num,
                   std::size_t max_mib,
                   std::size_t& failures) {
  std::size_t const threads    = fx.streams.size();
  std::size_t const gpus       = fx.gpus;
  std::size_t const per_device = threads / gpus;
  bool const gpu               = rb::have_gpu();
  std::vector<std::size_t> thread_failures(threads, 0);
  for (auto& l : fx.live) {
    l.clear();
  }
  rb::clock_type::time_point start;
  auto const errors = rb::run_on_threads(
      threads,
      [&](std::size_t t) {
        std::size_t const d = t % gpus;
        if (gpu) {
          RMM_CUDA_TRY(cudaSetDevice(static_cast<int>(d)));
        }
        rb::workload_params const params{
            num, max_mib, 16000 / per_device, 1234U + static_cast<unsigned>(t)};
        thread_failures[t] = rb::random_workload_on_own_list(
            *fx.mrs[d], cuda::stream_ref{fx.streams[t]}, params, fx.live[t]);
      },
      &start);
  sync_devices(gpus);
  double const elapsed = rb::seconds_since(start);
  for (std::size_t d = 0; d < gpus; ++d) {
    std::optional<rmm::cuda_set_device_raii> on;
    if (gpu) {
      on.emplace(rmm::cuda_device_id{static_cast<int>(d)});
    }
    for (std::size_t t = d; t < threads; t += gpus) {
      rb::release_all(*fx.mrs[d], cuda::stream_ref{fx.streams[t]}, fx.live[t]);
    }
  }
  for (std::size_t t = 0; t < threads; ++t) {
    failures += thread_failures[t];
  }
  sync_devices(gpus);
  rb::rethrow_first(errors);
  return elapsed;
}

/// @brief Builds the state of a row: for each device d < @p gpus, with d current, the streams
/// of the threads on it (thread t is on device t % gpus) and then its resource, made by @p make.
template <class Resource, class Make>
std::shared_ptr<mgpu_fixture<Resource>> make_fixture(Make const& make,
                                                     std::size_t gpus,
                                                     std::size_t threads,
                                                     std::size_t num) {
  auto made  = std::make_shared<mgpu_fixture<Resource>>();
  made->gpus = gpus;
  made->streams.assign(threads, nullptr);
  made->live.resize(threads);
  for (auto& l : made->live) {
    l.reserve(num + 1);
  }
  bool const gpu = rb::have_gpu();
  for (std::size_t d = 0; d < gpus; ++d) {
    std::optional<rmm::cuda_set_device_raii> on;
    if (gpu) {
      on.emplace(rmm::cuda_device_id{static_cast<int>(d)});
    }
    auto& owned = made->owned.emplace_back();
    for (std::size_t t = d; t < threads; t += gpus) {
      if (gpu) {
        owned.emplace_back(rmm::cuda_stream::flags::non_blocking);
        made->streams[t] = owned.back().value();
      }
    }
    made->mrs.push_back(make());
  }
  return made;
}

template <class Resource, class Make>
void bm_mgpu(benchmark::State& state,
             std::string const& key,
             Make const& make,
             std::size_t gpus,
             std::size_t threads,
             std::size_t num,
             std::size_t max_mib) {
  rb::guarded(state, key, [&] {
    bool fresh = false;
    auto& fx   = rb::cache().get<mgpu_fixture<Resource>>(
        key, [&] { return make_fixture<Resource>(make, gpus, threads, num); }, fresh);
    std::size_t failures = 0;
    auto const m         = rb::measure(state, fx.runs_per_rep, fresh, true, failures, [&] {
      return run_threads(fx, num, max_mib, failures);
    });
    auto const runs      = static_cast<double>(std::max<std::size_t>(1, m.runs));
    double const ops     = 2.0 * static_cast<double>(num) * static_cast<double>(threads) * runs;
    state.counters["Mops_per_s"]    = ops / m.seconds / 1e6;
    state.counters["ns_per_op"]     = m.seconds * 1e9 / ops;
    state.counters["failed_allocs"] = static_cast<double>(failures) / runs;
    state.counters["gpus"]          = static_cast<double>(gpus);
  });
}

template <class Resource, class Make>
void add(std::string const& resource,
         std::size_t gpus,
         std::size_t per_gpu,
         std::size_t num,
         std::size_t max_mib,
         Make make) {
  std::size_t const threads = gpus * per_gpu;
  std::string const name = "mgpu/" + rb::resource_label(resource) + "/G:" + std::to_string(gpus) +
                           "/T:" + std::to_string(threads) + "/n:" + std::to_string(num) +
                           "/max:" + std::to_string(max_mib);
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, make, gpus, threads, num, max_mib](benchmark::State& state) {
                                 bm_mgpu<Resource>(state, name, make, gpus, threads, num, max_mib);
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

void register_all() {
  bool const quick = rb::quick_mode();
  std::vector<std::size_t> const per_gpu_counts =
      quick ? std::vector<std::size_t>{1, 4} : std::vector<std::size_t>{1, 4, 8};
  std::size_t const num     = quick ? 1000 : 10000;
  std::size_t const max_mib = 1;
  bool const gpu            = rb::have_gpu();
  int const devices         = device_count();
  std::vector<std::size_t> gpu_counts;
  std::string list;
  for (int const g : {1, 2, 4, 8}) {
    if (g == 1 || g <= devices) {
      gpu_counts.push_back(static_cast<std::size_t>(g));
      list += (list.empty() ? "" : ", ") + std::to_string(g);
    }
  }
  std::fprintf(stderr, "rmm_multigpu_bench: %d CUDA device(s); G in {%s}\n", devices, list.c_str());
  for (std::size_t const gpus : gpu_counts) {
    for (std::size_t const per_gpu : per_gpu_counts) {
      if (gpu) {
#if RMM_BENCH_HAVE_POOL
        add<rmm::mr::pool_memory_resource>("pool", gpus, per_gpu, num, max_mib, [] {
          return std::make_shared<rmm::mr::pool_memory_resource>(rmm::mr::cuda_memory_resource{},
                                                                 std::size_t{0});
        });
#endif
#if RMM_BENCH_HAVE_ARENA
        add<rmm::mr::arena_memory_resource>("arena", gpus, per_gpu, num, max_mib, [] {
          return std::make_shared<rmm::mr::arena_memory_resource>(rmm::mr::cuda_memory_resource{});
        });
#endif
      }
      if (gpus == 1) {  // the harness's floor, on device 0 only
        add<rb::null_memory_resource>("null", gpus, per_gpu, num, max_mib, [] {
          return std::make_shared<rb::null_memory_resource>();
        });
      }
      if (gpu) {
        add<rb::cuda_async_baseline>("cuda_async", gpus, per_gpu, num, max_mib, [] {
          return std::make_shared<rb::cuda_async_baseline>();
        });
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return rb::bench_main(
      argc,
      argv,
      "rmm_multigpu_bench",
      "only the null resource's rows run (G:1, on stream 0)",
      [] { return 0; },
      register_all);
}
