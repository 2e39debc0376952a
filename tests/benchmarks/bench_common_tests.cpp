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

// Registers `name` with `repetitions` one-iteration repetitions of 1 ms of manual time each, the
// way the benchmark programs register theirs; `fail_at(k)` says how repetition k (from 1) fails:
// 0 not at all, 1 over the run-time limit inside the timing loop, 2 over it before the loop (the
// warm-up), 3 by an ordinary exception inside the loop.
template <class FailAt>
summary run_benchmark(std::string const& name, int repetitions, FailAt fail_at) {
  // Google Benchmark keeps the benchmark registered after this returns: it owns its state.
  auto repetition = std::make_shared<int>(0);
  benchmark::RegisterBenchmark(name.c_str(),
                               [repetition, fail_at, name](benchmark::State& state) {
                                 int const how = fail_at(++*repetition);
                                 rb::guarded(state, name, [&] {
                                   if (how == 2) {
                                     rb::check_run_time(1e9);
                                   }
                                   for (auto _ : state) {
                                     if (how == 1) {
                                       rb::check_run_time(1e9);
                                     }
                                     if (how == 3) {
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
  summary const s = run_benchmark("harness_late_slow", 5, [](int k) { return k == 3 ? 1 : 0; });
  CHECK(s.succeeded == 2);
  REQUIRE(s.failed == 3);
  CHECK(s.errors[0].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.errors[1] == "skipped: an earlier run was over RMM_BENCH_MAX_RUN_S");
  CHECK(s.errors[2] == "skipped: an earlier run was over RMM_BENCH_MAX_RUN_S");
  CHECK(s.median_ms == Approx(1.0));
}

TEST_CASE("bench harness: a benchmark over the limit in its warm-up fails every repetition",
          "[bench_harness]") {
  summary const s = run_benchmark("harness_slow_warm_up", 3, [](int k) { return k == 1 ? 2 : 0; });
  CHECK(s.succeeded == 0);
  REQUIRE(s.failed == 3);
  CHECK(s.errors[0].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.median_ms < 0);  // no aggregate of failed repetitions
}

TEST_CASE("bench harness: an exception fails its repetition only, and later ones still run",
          "[bench_harness]") {
  // Failures before the loop (2) and inside it (3) mixed with repetitions that finish.
  summary const s = run_benchmark(
      "harness_mixed_failures", 6, [](int k) { return k == 2 ? 3 : (k == 4 ? 2 : 0); });
  // The warm-up failure at 4 is over the limit too: 5 and 6 are skipped at once.
  CHECK(s.succeeded == 2);
  REQUIRE(s.failed == 4);
  CHECK(s.errors[0] == "the workload failed");
  CHECK(s.errors[1].find("over RMM_BENCH_MAX_RUN_S") != std::string::npos);
  CHECK(s.median_ms == Approx(1.0));
}
