/**
 * @file workload_seeds.hpp
 * @brief Which workload each run of a single-thread random-allocations benchmark uses
 * (RMM_BENCH_SEEDS; benchmarks/README.md).
 *
 * Why: with one seed every run repeats the same 2n calls, and a CPU's branch and memory
 * dependence predictors learn a short repeated trace. A resource whose free list returns to the
 * same state after each run then replays that trace with predictors trained on it, which no
 * program whose sizes change from run to run would see (the pool's n = 1,000 rows:
 * docs/benchmarks.md, "Issue 12, thirty-sixth step"). Cycling through several seeds measures the
 * same workload family without that.
 */
#pragma once

#include "bench_common.hpp"  // workload_params
#include "bench_env.hpp"

#include <cstddef>

namespace rmm::bench {

/// @brief Seeds to cycle through: RMM_BENCH_SEEDS clamped to [1, 10^6] (default 1: one workload
/// repeated, comparable with earlier runs and with the peers' scripts). Read once.
inline std::size_t workload_seeds() {
  static std::size_t const seeds =
      static_cast<std::size_t>(env_clamped("RMM_BENCH_SEEDS", 1, 1, 1000000));
  return seeds;
}

/**
 * @brief The workload of run @p run (counted from 0, warm-up runs included) of a benchmark whose
 * workload is @p params: unchanged with one seed; otherwise seed 1 + (run mod seeds), so that
 * runs cycle through seeds 1 .. @p seeds.
 */
inline workload_params workload_for_run(workload_params params,
                                        std::size_t run,
                                        std::size_t seeds) noexcept {
  if (seeds > 1) {
    params.seed = static_cast<unsigned>(1 + run % seeds);
  }
  return params;
}

}  // namespace rmm::bench
