// The benchmarks' shared harness (benchmarks/bench_common.hpp), on the host: a repetition that runs
// over RMM_BENCH_MAX_RUN_S, or that throws, fails alone and the program goes on. Google Benchmark
// 1.7 aborts the whole program (ComputeStats check) when the failed repetitions of a benchmark
// report another iteration count than the ones that succeeded; until guarded() entered the timing
// loop for every failure, RMM's pool on per-thread default streams ended the peer program there
// and every benchmark after it was lost.
#include "bench_common.hpp"

#include <benchmark/benchmark.h>
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace rb = rmm::bench;

class collecting_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(Context const&) override { return true; }
  void ReportRuns(std::vector<Run> const& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }
  [[nodiscard]] std::vector<Run> const& runs() const { return runs_; }

 private:
  std::vector<Run> runs_;
};

struct summary {
  int succeeded{};
  int failed{};
  std::vector<std::string> errors;
  double median_ms{-1};
};

summary summarise(collecting_reporter const& reporter) {
  summary s;
  for (auto const& run : reporter.runs()) {
    if (run.error_occurred) {
      ++s.failed;
      s.errors.push_back(run.error_message);
    } else if (run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate) {
      if (run.aggregate_name == "median") {
        s.median_ms = run.GetAdjustedRealTime();
      }
    } else {
      ++s.succeeded;
    }
  }
  return s;
}

// How one repetition of a test benchmark fails.
enum class failure {
  none,
  slow_in_loop,     // a run over RMM_BENCH_MAX_RUN_S inside the timing loop
  slow_in_warm_up,  // the same before the loop (the warm-up runs)
  throws_in_loop,   // an ordinary exception inside the loop
};

constexpr char const* skipped_message = "skipped: an earlier run was over RMM_BENCH_MAX_RUN_S";

// Registers `name` with `repetitions` one-iteration repetitions of 1 ms of manual time each, the
// way the benchmark programs register theirs; `fail_at(k)` says how repetition k (from 1) fails.
template <class FailAt>
summary run_benchmark(std::string const& name, int repetitions, FailAt fail_at) {
  // Google Benchmark keeps the benchmark registered after this returns: it owns its state.
  auto repetition = std::make_shared<int>(0);
  benchmark::RegisterBenchmark(name.c_str(),
                               [repetition, fail_at, name](benchmark::State& state) {
                                 failure const how = fail_at(++*repetition);
                                 rb::guarded(state, name, [&] {
                                   if (how == failure::slow_in_warm_up) {
                                     rb::check_run_time(1e9);
                                   }
                                   for (auto _ : state) {
                                     if (how == failure::slow_in_loop) {
                                       rb::check_run_time(1e9);
                                     }
                                     if (how == failure::throws_in_loop) {
                                       throw std::runtime_error("the workload failed");
                                     }
                                     state.SetIterationTime(0.001);
                                   }
                                 });
                               })
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Repetitions(repetitions);
  collecting_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "^" + name + "/");
  return summarise(reporter);
}

}  // namespace

TEST_CASE("bench harness: a repetition over the run-time limit after two that finished fails alone",
          "[bench_harness]") {
  // Repetitions 1 and 2 finish; 3 runs over the limit inside the loop; 4 and 5 are skipped at
  // once. Before the fix, 4 and 5 reported 0 iterations beside the others' 1, and the program
  // aborted here.
  summary const s = run_benchmark(
      "harness_late_slow", 5, [](int k) { return k == 3 ? failure::slow_in_loop : failure::none; });
  CHECK(s.succeeded == 2);
  REQUIRE(s.failed == 3);
  CHECK(s.errors[0].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.errors[1] == skipped_message);
  CHECK(s.errors[2] == skipped_message);
  CHECK(s.median_ms == Approx(1.0));
}

TEST_CASE("bench harness: a benchmark over the limit in its warm-up fails every repetition",
          "[bench_harness]") {
  summary const s = run_benchmark("harness_slow_warm_up", 3, [](int k) {
    return k == 1 ? failure::slow_in_warm_up : failure::none;
  });
  CHECK(s.succeeded == 0);
  REQUIRE(s.failed == 3);
  CHECK(s.errors[0].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.errors[2] == skipped_message);
  CHECK(s.median_ms < 0);  // no aggregate of failed repetitions
}

TEST_CASE("bench harness: an exception fails its repetition only, and later ones still run",
          "[bench_harness]") {
  // An exception inside the loop (2) and a slow warm-up (4) among repetitions that finish.
  summary const s = run_benchmark("harness_mixed_failures", 6, [](int k) {
    return k == 2 ? failure::throws_in_loop : (k == 4 ? failure::slow_in_warm_up : failure::none);
  });
  // The warm-up failure at 4 is over the limit too: 5 and 6 are skipped at once.
  CHECK(s.succeeded == 2);
  REQUIRE(s.failed == 4);
  CHECK(s.errors[0] == "the workload failed");
  CHECK(s.errors[1].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.errors[3] == skipped_message);
  CHECK(s.median_ms == Approx(1.0));
}
