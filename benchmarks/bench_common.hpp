/**
 * @file bench_common.hpp
 * @brief What the benchmark programs share: modes (quick / full / no GPU), the random-allocations
 * workload (random_workload.hpp, included here), the cudaMalloc and cudaMallocAsync baselines, the
 * resources under test and a one-slot cache that keeps a benchmark's resource alive across its
 * repetitions.
 */
#pragma once

#include "capped_cuda_resource.hpp"
#include "null_memory_resource.hpp"
#include "quiet_cpu.hpp"
#include "random_workload.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

// The resources under test are written concurrently with the benchmarks: each is compiled in only
// if its header exists (or, to leave one out, build with -DRMM_BENCH_HAVE_<NAME>=0), and the
// programs print which ones they have.
#ifndef RMM_BENCH_HAVE_POOL
#if __has_include(<rmm/mr/pool_memory_resource.hpp>)
#define RMM_BENCH_HAVE_POOL 1
#else
#define RMM_BENCH_HAVE_POOL 0
#endif
#endif
#ifndef RMM_BENCH_HAVE_ARENA
#if __has_include(<rmm/mr/arena_memory_resource.hpp>)
#define RMM_BENCH_HAVE_ARENA 1
#else
#define RMM_BENCH_HAVE_ARENA 0
#endif
#endif
#ifndef RMM_BENCH_HAVE_FIXED
#if __has_include(<rmm/mr/fixed_size_memory_resource.hpp>)
#define RMM_BENCH_HAVE_FIXED 1
#else
#define RMM_BENCH_HAVE_FIXED 0
#endif
#endif
#ifndef RMM_BENCH_HAVE_BINNING  // its upstream in these benchmarks is a pool
#if __has_include(<rmm/mr/binning_memory_resource.hpp>) && RMM_BENCH_HAVE_POOL
#define RMM_BENCH_HAVE_BINNING 1
#else
#define RMM_BENCH_HAVE_BINNING 0
#endif
#endif
#ifndef RMM_BENCH_HAVE_VMM  // the expandable pool: a pool over virtual_memory_resource
#if __has_include(<rmm/mr/virtual_memory_resource.hpp>) && RMM_BENCH_HAVE_POOL
#define RMM_BENCH_HAVE_VMM 1
#else
#define RMM_BENCH_HAVE_VMM 0
#endif
#endif

#if RMM_BENCH_HAVE_POOL
#include <rmm/mr/pool_memory_resource.hpp>
#endif
#if RMM_BENCH_HAVE_VMM
#include <rmm/mr/virtual_memory_resource.hpp>
#endif
#if RMM_BENCH_HAVE_ARENA
#include <rmm/mr/arena_memory_resource.hpp>
#endif
#if RMM_BENCH_HAVE_FIXED
#include <rmm/mr/fixed_size_memory_resource.hpp>
#endif
#if RMM_BENCH_HAVE_BINNING
#include <rmm/mr/binning_memory_resource.hpp>
#endif

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace rmm::bench {

// --- modes -----------------------------------------------------------------------------------

/// @brief The resource's name in benchmark names. Built as the RMM peer
/// (scripts/build_rmm_peer.sh: these same sources compiled against RMM 26.x's own headers and
/// librmm, with RMM_BENCH_PEER_RMM defined), every row is named rmm_<resource>, so that RMM's
/// rows sit beside ours in one table without colliding.
inline std::string resource_label(std::string const& resource) {
#ifdef RMM_BENCH_PEER_RMM
  return "rmm_" + resource;
#else
  return resource;
#endif
}

/// @brief True if the environment variable @p name is set to something other than "" or "0".
inline bool env_flag(char const* name) {
  char const* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

/// @brief Smoke-test mode (RMM_BENCH_QUICK=1 or QUICK=1): a few small rows of every benchmark.
inline bool quick_mode() { return env_flag("RMM_BENCH_QUICK") || env_flag("QUICK"); }

/// @brief Everything (RMM_BENCH_FULL=1): adds the slow rows (cudaMalloc up to n = 10000 for every
/// size, the multi-thread grid at max = 64 MiB).
inline bool full_mode() { return env_flag("RMM_BENCH_FULL") && !quick_mode(); }

/// @brief True if a CUDA device can be used. Without one only the null resource's rows are
/// registered (and the final synchronisation is skipped), so that the harness runs anywhere.
inline bool have_gpu() {
  static bool const result = [] {
    int count     = 0;
    bool const ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    static_cast<void>(cudaGetLastError());
    return ok;
  }();
  return result;
}

/// @brief cudaDeviceSynchronize, throwing on failure; nothing without a GPU.
inline void device_sync() {
  if (have_gpu()) {
    RMM_CUDA_TRY(cudaDeviceSynchronize());
  }
}

/// @brief The current device's default memory pool (the one cudaMallocAsync draws on).
inline cudaMemPool_t default_mem_pool() {
  int device = 0;
  RMM_CUDA_TRY(cudaGetDevice(&device));
  cudaMemPool_t pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

/// @brief Returns what the default memory pool holds to the device, so that the memory the
/// cudaMallocAsync baseline cached does not starve the next benchmark.
inline void trim_default_mem_pool() {
  if (!have_gpu()) {
    return;
  }
  device_sync();
  RMM_CUDA_TRY(cudaMemPoolTrimTo(default_mem_pool(), 0));
}

/// @brief Prints which resources this program was built with, to stderr.
inline void print_build_info(char const* program) {
  std::fprintf(stderr,
               "%s: resources built in: pool=%d arena=%d binning=%d fixed_size=%d; gpu=%d "
               "quick=%d full=%d\n",
               program,
               RMM_BENCH_HAVE_POOL,
               RMM_BENCH_HAVE_ARENA,
               RMM_BENCH_HAVE_BINNING,
               RMM_BENCH_HAVE_FIXED,
               static_cast<int>(have_gpu()),
               static_cast<int>(quick_mode()),
               static_cast<int>(full_mode()));
}

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// --- baselines -------------------------------------------------------------------------------

/// @brief cudaMalloc / cudaFree called directly (the stream is ignored). Failure throws
/// rmm::out_of_memory, which the workload counts as a failed allocation (as the peers do with
/// their nullptr).
struct cuda_malloc_baseline {
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t = CUDA_ALLOCATION_ALIGNMENT) {
    void* ptr = nullptr;
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      throw rmm::out_of_memory{"cudaMalloc failed"};
    }
    return ptr;
  }
  void deallocate(cuda::stream_ref,
                  void* ptr,
                  std::size_t,
                  std::size_t = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    static_cast<void>(cudaFree(ptr));
  }
};

/// @brief cudaMallocAsync / cudaFreeAsync on the device's default memory pool with its release
/// threshold at the maximum (as in random_alloc_raw.cu), on the caller's stream.
struct cuda_async_baseline {
  cuda_async_baseline() {
    if (have_gpu()) {
      std::uint64_t threshold = UINT64_MAX;
      RMM_CUDA_TRY(
          cudaMemPoolSetAttribute(default_mem_pool(), cudaMemPoolAttrReleaseThreshold, &threshold));
    }
  }
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t = CUDA_ALLOCATION_ALIGNMENT) {
    void* ptr = nullptr;
    if (cudaMallocAsync(&ptr, bytes, stream.get()) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      throw rmm::out_of_memory{"cudaMallocAsync failed"};
    }
    return ptr;
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t,
                  std::size_t = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    static_cast<void>(cudaFreeAsync(ptr, stream.get()));
  }
};

// --- threads -----------------------------------------------------------------------------------

/**
 * @brief Runs body(t) on threads t = 0, ..., n - 1 and joins them; returns what each threw (null
 * where nothing). The multi-thread benchmarks time this, then rethrow_first() after cleaning up.
 *
 * The threads are started first and wait at a gate (spinning with yields, so that no core is
 * asleep when it opens); once all n wait, the gate opens and @p released (if not null) receives the
 * time of its opening. Timing from there measures the workload on n running threads. Timing from
 * before the call also counts the threads' start, as ../shared/bench/torch_mt_alloc.py does: with
 * about 1 ms of work per thread, starting 16 threads takes a large part of a run.
 */
template <class Body>
std::vector<std::exception_ptr> run_on_threads(std::size_t n,
                                               Body const& body,
                                               clock_type::time_point* released = nullptr) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> waiting{0};
  std::atomic<bool> open{false};
  std::vector<std::thread> workers;
  workers.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    workers.emplace_back([&errors, &body, &waiting, &open, t] {
      waiting.fetch_add(1, std::memory_order_acq_rel);
      while (!open.load(std::memory_order_acquire)) {
        std::this_thread::yield();  // leaves the cores to the threads still being started
      }
      try {
        body(t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  while (waiting.load(std::memory_order_acquire) < n) {
    std::this_thread::yield();
  }
  if (released != nullptr) {
    *released = clock_type::now();
  }
  open.store(true, std::memory_order_release);
  for (auto& w : workers) {
    w.join();
  }
  return errors;
}

/// @brief Rethrows the first exception of @p errors, if any.
inline void rethrow_first(std::vector<std::exception_ptr> const& errors) {
  for (auto const& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

// --- the resources under test ----------------------------------------------------------------

/// @brief Argument for the binning resource's bins: 2^18 .. 2^22 bytes (256 KiB .. 4 MiB).
inline constexpr std::int8_t binning_min_exponent = 18;
inline constexpr std::int8_t binning_max_exponent = 22;

#if RMM_BENCH_HAVE_POOL
/// @brief A pool over @p upstream as a value to pass on as another resource's upstream: the pool
/// itself if it is copyable (copies share its state), else a cuda::mr::shared_resource of it.
template <class Upstream, class... Args>
auto pool_as_upstream(Upstream upstream, Args&&... args) {
  using pool = rmm::mr::pool_memory_resource;
  if constexpr (std::is_copy_constructible_v<pool>) {
    return pool(std::move(upstream), std::forward<Args>(args)...);
  } else {
    return cuda::mr::make_shared_resource<pool>(std::move(upstream), std::forward<Args>(args)...);
  }
}
#endif

// --- one-slot cache of a benchmark's state ---------------------------------------------------

/**
 * @brief Holds the state (resource, streams) of the benchmark that runs now, so that it is built
 * once and reused by all the repetitions of that benchmark (Google Benchmark calls the function
 * once per repetition). When another benchmark asks, the old state is destroyed first and the
 * default memory pool trimmed, so that no benchmark runs with another one's memory held.
 */
class state_cache {
 public:
  /// @brief The state stored under @p key, made by @p make (returning std::shared_ptr<T>) if the
  /// slot holds another key; @p fresh tells which.
  template <class T, class Make>
  T& get(std::string const& key, Make&& make, bool& fresh) {
    fresh = key_ != key || !object_;
    if (fresh) {
      clear();
      std::shared_ptr<T> made = make();
      object_                 = made;
      key_                    = key;
    }
    return *static_cast<T*>(object_.get());
  }

  /// @brief Destroys the cached state (before CUDA shuts down: call it at the end of main).
  void clear() {
    if (object_) {
      device_sync();
      object_.reset();
    }
    key_.clear();
    trim_default_mem_pool();
  }

 private:
  std::string key_;
  std::shared_ptr<void> object_;
};

inline state_cache& cache() {
  static state_cache instance;
  return instance;
}

/// @brief The longest one run of a workload may take (RMM_BENCH_MAX_RUN_S, default 10 s). A
/// benchmark with a slower run stops with an error and is skipped in its later repetitions, so
/// that one pathological row cannot eat the GPU machine's time.
inline double max_run_seconds() {
  static double const limit = [] {
    char const* value = std::getenv("RMM_BENCH_MAX_RUN_S");
    double const v    = value != nullptr ? std::atof(value) : 0.0;
    return v > 0 ? v : 10.0;
  }();
  return limit;
}

/// @brief Thrown by check_run_time(); guarded() remembers the benchmark as too slow.
class too_slow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Throws too_slow if one run took longer than max_run_seconds().
inline void check_run_time(double seconds) {
  if (seconds > max_run_seconds()) {
    throw too_slow{"one run took " + std::to_string(seconds) + " s, over RMM_BENCH_MAX_RUN_S = " +
                   std::to_string(max_run_seconds()) + " s: skipped"};
  }
}

/**
 * @brief Marks this repetition of @p state as failed with @p message, and enters the timing loop
 * if the repetition had not (the loop then ends at once). Google Benchmark 1.7 counts 0 iterations
 * for a repetition that never entered the loop and 1 for one that failed inside it, and aborts the
 * whole program (`ComputeStats` check, exit 134) when two repetitions of one benchmark that
 * succeeded sit beside failed ones with another count: a row whose later repetitions ran over
 * RMM_BENCH_MAX_RUN_S ended every benchmark after it (RMM's pool on per-thread default streams).
 */
inline void fail_repetition(benchmark::State& state, char const* message) {
  state.SkipWithError(message);
  if (state.iterations() == 0) {
    for (auto _ : state) {
    }
  }
}

/**
 * @brief Runs @p body for the benchmark @p key; a std::exception becomes the benchmark's error
 * instead of ending the program (the cached state is dropped so that the next benchmark starts
 * clean). A benchmark that was too slow once is skipped at once in its later repetitions. Every
 * failed repetition reports the same iteration count (fail_repetition).
 */
template <class Body>
void guarded(benchmark::State& state, std::string const& key, Body&& body) {
  static std::set<std::string> slow;
  if (slow.count(key) != 0) {
    fail_repetition(state, "skipped: an earlier run was over RMM_BENCH_MAX_RUN_S");
    return;
  }
  try {
    body();
  } catch (std::exception const& e) {
    if (dynamic_cast<too_slow const*>(&e) != nullptr) {
      slow.insert(key);
    }
    fail_repetition(state, e.what());
    try {
      cache().clear();
    } catch (...) {
    }
  }
}

/// @brief Seconds of timed work per repetition (RMM_BENCH_REP_S, default 0.03): a repetition
/// runs the workload as many times as the warm-up run says fit (at least once).
inline double repetition_seconds() {
  static double const target = [] {
    char const* value = std::getenv("RMM_BENCH_REP_S");
    double const v    = value != nullptr ? std::atof(value) : 0.0;
    return v > 0 ? v : 0.03;
  }();
  return target;
}

/// @brief Runs per repetition after a warm-up run of @p warm_up_seconds.
inline std::size_t runs_per_repetition(double warm_up_seconds) {
  double const runs = repetition_seconds() / std::max(warm_up_seconds, 1e-7);
  return static_cast<std::size_t>(std::clamp(runs, 1.0, 100000.0));
}

/// @brief Timed seconds and workload runs of one repetition.
struct measured {
  double seconds{};
  std::size_t runs{};
};

/**
 * @brief The timing loop shared by the benchmarks. Google Benchmark runs one iteration per
 * repetition (the benchmarks are registered with Iterations(1)); the iteration runs the workload
 * @p runs_per_rep times (fixed by the second of two warm-up runs when the state is @p fresh; 1
 * without a warm-up) and reports the sum of their times as the manual time. @p run_once runs the
 * workload once and returns its time; @p failures (counted by run_once) is reset after the warm-up.
 */
template <class RunOnce>
measured measure(benchmark::State& state,
                 std::size_t& runs_per_rep,
                 bool fresh,
                 bool warm_up,
                 std::size_t& failures,
                 RunOnce&& run_once) {
  if (fresh) {
    runs_per_rep = 1;
    if (warm_up) {
      // Two warm-up runs: the first grows a fresh resource from its upstream (cudaMalloc can be
      // most of it), so only the second tells how long a run takes. Calibrating on the first
      // left the pool's one-thread row at one run per repetition, and 40 % apart.
      check_run_time(run_once());
      double const w = run_once();
      check_run_time(w);
      runs_per_rep = runs_per_repetition(w);
    }
  }
  failures = 0;
  measured m;
  for (auto _ : state) {
    double rep = 0;
    for (std::size_t r = 0; r < runs_per_rep; ++r) {
      double const elapsed = run_once();
      check_run_time(elapsed);
      rep += elapsed;
    }
    state.SetIterationTime(rep);
    m.seconds += rep;
    m.runs += runs_per_rep;
  }
  state.counters["runs_per_rep"] = static_cast<double>(runs_per_rep);
  return m;
}

/**
 * @brief The programs' shared main: Google Benchmark's set-up, the build info, @p prepare (a
 * non-zero result ends the program with it), a note when there is no GPU, @p register_all, the
 * run, and the tear-down (cached resources are destroyed before Google Benchmark shuts down).
 */
template <typename Prepare, typename Register>
int bench_main(int argc,
               char** argv,
               char const* program,
               char const* no_gpu_note,
               Prepare&& prepare,
               Register&& register_all) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  print_build_info(program);
  if (int const rc = prepare(); rc != 0) {
    return rc;
  }
  if (!have_gpu()) {
    std::fprintf(stderr, "no CUDA device: %s\n", no_gpu_note);
  }
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  cache().clear();
  benchmark::Shutdown();
  return 0;
}

}  // namespace rmm::bench
