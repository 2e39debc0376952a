// Growing one allocation in small steps through gpu_allocator_adaptor::reallocate (the inference
// runtime's allocator interface), from one step to 1 GiB:
//   realloc/in_place/...  over virtual_memory_resource: each step maps the new granules after the
//                         end of the allocation (no copy);
//   realloc/move/...      over cuda_memory_resource: each step allocates, copies the contents and
//                         frees the old block (what reallocate must do without virtual memory);
//   realloc/raw_copy/...  the same allocate-copy-free with plain cudaMalloc/cudaMemcpy/cudaFree,
//                         without the adaptor: the peer baseline.
// One run = allocate `step`, reallocate up to 1 GiB in `step` increments, touch the last byte
// range with a memset (so that the copies and maps are complete), free, synchronise.
// Counters: ms_per_growth (one run), us_per_step, steps. Medians over repetitions as elsewhere.
//
//   rmm_realloc_bench [Google Benchmark flags]
#include "bench_common.hpp"

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/gpu_allocator_adaptor.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace {

namespace rb = rmm::bench;
using rmm::mr::gpu_allocator_adaptor;
constexpr std::size_t MiB  = std::size_t{1} << 20U;
constexpr std::size_t goal = 1024 * MiB;

/// @brief One growth to 1 GiB through @p alloc; returns its seconds.
double grow_through(gpu_allocator_adaptor& alloc, std::size_t step) {
  auto const start = rb::clock_type::now();
  void* p          = alloc.allocate(step, 0, gpu_allocator_adaptor::resizable);
  if (p == nullptr) {
    throw std::runtime_error("allocate failed");
  }
  for (std::size_t bytes = 2 * step; bytes <= goal; bytes += step) {
    void* q = alloc.reallocate(p, 0, bytes);
    if (q == nullptr) {
      throw std::runtime_error("reallocate to " + std::to_string(bytes) + " bytes failed");
    }
    p = q;
  }
  RMM_CUDA_TRY(cudaMemset(static_cast<char*>(p) + goal - step, 0, step));
  rb::device_sync();
  double const elapsed = rb::seconds_since(start);
  if (!alloc.deallocate(p)) {
    throw std::runtime_error("deallocate failed");
  }
  rb::device_sync();
  return elapsed;
}

/// @brief The same growth with cudaMalloc, cudaMemcpy and cudaFree.
double grow_raw(std::size_t step) {
  auto const start = rb::clock_type::now();
  void* p          = nullptr;
  RMM_CUDA_TRY(cudaMalloc(&p, step));
  for (std::size_t bytes = 2 * step; bytes <= goal; bytes += step) {
    void* q = nullptr;
    RMM_CUDA_TRY(cudaMalloc(&q, bytes));
    RMM_CUDA_TRY(cudaMemcpy(q, p, bytes - step, cudaMemcpyDeviceToDevice));
    RMM_CUDA_TRY(cudaFree(p));
    p = q;
  }
  RMM_CUDA_TRY(cudaMemset(static_cast<char*>(p) + goal - step, 0, step));
  rb::device_sync();
  double const elapsed = rb::seconds_since(start);
  RMM_CUDA_TRY(cudaFree(p));
  return elapsed;
}

enum class kind { in_place, move, raw_copy };

void bm_realloc(benchmark::State& state, kind k, std::size_t step) {
  std::string const key =
      "realloc/" + std::to_string(static_cast<int>(k)) + "/" + std::to_string(step);
  rb::guarded(state, key, [&] {
    rb::quiet_cpu_scope const quiet{state};  // see quiet_cpu.hpp
    if (!rb::have_gpu()) {
      rb::fail_repetition(state, "no CUDA device");
      return;
    }
    std::optional<gpu_allocator_adaptor> alloc;
    if (k == kind::in_place) {
      alloc.emplace(rmm::mr::virtual_memory_resource{});
    } else if (k == kind::move) {
      alloc.emplace(rmm::mr::cuda_memory_resource{});
    }
    auto run_once            = [&] { return alloc ? grow_through(*alloc, step) : grow_raw(step); };
    std::size_t runs_per_rep = 1;
    std::size_t failures     = 0;
    auto const m             = rb::measure(state, runs_per_rep, true, true, failures, run_once);
    double const runs        = static_cast<double>(m.runs == 0 ? 1 : m.runs);
    double const steps       = static_cast<double>(goal / step - 1);
    state.counters["ms_per_growth"] = m.seconds * 1e3 / runs;
    state.counters["us_per_step"]   = m.seconds * 1e6 / (runs * steps);
    state.counters["steps"]         = steps;
  });
}

void register_all() {
  for (std::size_t const step : {2 * MiB, 32 * MiB}) {
    std::string const size = "/step_MiB:" + std::to_string(step / MiB) + "/to_MiB:1024";
    for (auto [k, name] : {std::pair{kind::in_place, "in_place"},
                           std::pair{kind::move, "move"},
                           std::pair{kind::raw_copy, "raw_copy"}}) {
      benchmark::RegisterBenchmark(
          ("realloc/" + std::string{name} + size).c_str(),
          [k = k, step](benchmark::State& state) { bm_realloc(state, k, step); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return rb::bench_main(
      argc, argv, "rmm_realloc_bench", "nothing runs", [] { return 0; }, register_all);
}
