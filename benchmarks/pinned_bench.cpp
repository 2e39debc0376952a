// Allocate-free pairs of pinned host memory, 4 KiB to 64 MiB in powers of 4, one thread, one
// stream, through
//   cuda_async_pinned   cuda_async_pinned_memory_resource over a new pool (pinned_pool_options{}:
//                       placement by the OS, release threshold at the maximum): stream-ordered
//   pinned_host_mr      pinned_host_memory_resource (cudaMallocHost / cudaFreeHost)
//   pool_pinned         pool_memory_resource over pinned_host_memory_resource (initial size 0:
//                       grows on the warm-up batch, then serves every pair from its free list)
//   cuda_host_alloc     cudaHostAlloc / cudaFreeHost called directly
// The memory is not touched: this measures the cost of getting and giving back pinned memory.
//
// Timing: an iteration is a batch of pairs (allocate, then free the same pointer) followed by
// a synchronisation of the stream, reported as manual time; ns_per_pair = time / pairs. A batch
// is 256 pairs for the resources that serve a pair in well under a microsecond (pool_pinned,
// cuda_async_pinned) and 16 for those that call cudaHostAlloc per pair (up to tens of ms each):
// an idle stream's synchronisation alone costs about 1-2 us on the H100 machine, which over 16
// pairs added 60-120 ns to every pair of the pool and made that row mostly a measure of the
// synchronisation (2026-11-25/26 runs); over 256 pairs it adds a few ns. The
// resource and the stream are built once per benchmark (untimed) and warmed up by one untimed
// batch, so that the pool's first growth is not counted.
//
//   rmm_pinned_bench [Google Benchmark flags]
//   RMM_BENCH_QUICK=1 (or QUICK=1): 4 KiB, 1 MiB and 64 MiB only
#include "bench_common.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace rb = rmm::bench;

/// Pairs per timed batch: see the header comment.
constexpr std::size_t fast_pairs_per_batch = 256;
constexpr std::size_t slow_pairs_per_batch = 16;

/// @brief cudaHostAlloc / cudaFreeHost called directly (the stream is ignored).
struct cuda_host_alloc_baseline {
  void* allocate(cuda::stream_ref,
                 std::size_t bytes,
                 std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    void* ptr = nullptr;
    if (cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      throw rmm::out_of_memory{"cudaHostAlloc failed"};
    }
    return ptr;
  }
  void deallocate(cuda::stream_ref,
                  void* ptr,
                  std::size_t,
                  std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    static_cast<void>(cudaFreeHost(ptr));
  }
};

template <class Resource>
struct pinned_fixture {
  rmm::cuda_stream stream;  // declared first: destroyed after the resource
  std::shared_ptr<Resource> mr;
};

/// @brief One batch of allocate-free pairs and the stream synchronisation; its seconds.
template <class Resource>
double run_batch(pinned_fixture<Resource>& fx, std::size_t bytes, std::size_t pairs) {
  auto const start = rb::clock_type::now();
  for (std::size_t i = 0; i < pairs; ++i) {
    void* ptr = fx.mr->allocate(fx.stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    fx.mr->deallocate(fx.stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  fx.stream.synchronize();
  return rb::seconds_since(start);
}

template <class Resource, class Make>
void bm_pairs(benchmark::State& state,
              std::string const& key,
              Make const& make,
              std::size_t bytes,
              std::size_t pairs_per_batch) {
  rb::guarded(state, key, [&] {
    rb::quiet_cpu_scope const quiet{state};  // see quiet_cpu.hpp
    bool fresh = false;
    auto& fx   = rb::cache().get<pinned_fixture<Resource>>(
        key,
        [&] {
          auto made = std::make_shared<pinned_fixture<Resource>>();
          made->mr  = make();
          return made;
        },
        fresh);
    if (fresh) {
      rb::check_run_time(run_batch(fx, bytes, pairs_per_batch));  // warm-up, untimed
    }
    double total        = 0;
    std::size_t batches = 0;
    for (auto _ : state) {
      double const elapsed = run_batch(fx, bytes, pairs_per_batch);
      rb::check_run_time(elapsed);
      state.SetIterationTime(elapsed);
      total += elapsed;
      ++batches;
    }
    auto const pairs                  = static_cast<double>(batches * pairs_per_batch);
    state.counters["ns_per_pair"]     = pairs > 0 ? total * 1e9 / pairs : 0.0;
    state.counters["bytes"]           = static_cast<double>(bytes);
    state.counters["pairs_per_batch"] = static_cast<double>(pairs_per_batch);
  });
}

template <class Resource, class Make>
void add(std::string const& resource, std::size_t bytes, std::size_t pairs_per_batch, Make make) {
  std::string const name = "pinned/" + resource + "/bytes:" + std::to_string(bytes);
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, make, bytes, pairs_per_batch](benchmark::State& state) {
                                 bm_pairs<Resource>(state, name, make, bytes, pairs_per_batch);
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(0.1);
}

void register_all() {
  if (!rb::have_gpu()) {
    return;
  }
  std::vector<std::size_t> sizes;
  if (rb::quick_mode()) {
    sizes = {std::size_t{4} << 10, std::size_t{1} << 20, std::size_t{64} << 20};
  } else {
    for (std::size_t bytes = std::size_t{4} << 10; bytes <= (std::size_t{64} << 20); bytes *= 4) {
      sizes.push_back(bytes);
    }
  }
  for (std::size_t const bytes : sizes) {
    add<rmm::mr::cuda_async_pinned_memory_resource>(
        "cuda_async_pinned", bytes, fast_pairs_per_batch, [] {
          return std::make_shared<rmm::mr::cuda_async_pinned_memory_resource>(
              rmm::mr::pinned_pool_options{});
        });
    add<rmm::mr::pinned_host_memory_resource>("pinned_host_mr", bytes, slow_pairs_per_batch, [] {
      return std::make_shared<rmm::mr::pinned_host_memory_resource>();
    });
    add<rmm::mr::pool_memory_resource>("pool_pinned", bytes, fast_pairs_per_batch, [] {
      return std::make_shared<rmm::mr::pool_memory_resource>(rmm::mr::pinned_host_memory_resource{},
                                                             std::size_t{0});
    });
    add<cuda_host_alloc_baseline>("cuda_host_alloc", bytes, slow_pairs_per_batch, [] {
      return std::make_shared<cuda_host_alloc_baseline>();
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  return rb::bench_main(
      argc,
      argv,
      "rmm_pinned_bench",
      "nothing to measure: every row needs pinned memory",
      [] { return 0; },
      register_all);
}
