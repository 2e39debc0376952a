/**
 * @file quiet_cpu.hpp
 * @brief Runs a single-thread benchmark repetition on a CPU whose core is not slowed by a busy
 * neighbour, and says which CPU it was and how fast the core was.
 *
 * Why: the lent GPU machine is a virtual machine with 16 vCPUs. Measured there on 2026-11-28
 * (docs/bench-results/2026-11-28-h200-q/README.md), a loop of plain C++ (the map churn below, no
 * CUDA and none of this library) took 3.1-3.3 ns per step on some vCPUs and 5.2-6.2 ns on others at
 * the same moment, and a vCPU went from one state to the other within seconds; a chain of
 * multiplies ran at the same speed on all of them, so it is not the clock but something sharing the
 * core (most likely another guest on the same physical core). Our pool's allocate-free pair of
 * pinned memory took 56-65 ns on the fast vCPUs and 87-125 ns on the slow ones, in the same
 * process, and every single-thread row of every resource moved with it. Ratios between resources
 * measured in different states were noise of up to 1.9x.
 *
 * What it does: before each repetition, pins the calling thread to the CPU it is on and probes
 * the core (three runs of the map churn, about 0.2 ms each, the median). If the core is more
 * than 20 % slower than the fastest probe seen so far in this process, it probes every CPU the
 * process may run on and moves to the fastest; if that one is busy too, it waits 20 ms and scans
 * again, at most 5 scans. The chosen CPU and the probe (ns per step) go into the benchmark's
 * counters `cpu` and `probe_ns`. The scope's end probes the core once more (`probe_after_ns`:
 * far above `probe_ns`, the core went busy during the repetition) and restores the thread's CPU
 * mask, so that threads started later (the multi-thread programs) are spread as before.
 *
 * RMM_BENCH_QUIET_CPU=0 turns it off (the thread then runs wherever the scheduler puts it, as
 * before 2026-11-28). Linux only; elsewhere a no-op. Used by the single-thread programs only:
 * random allocations, replay, pinned pairs, realloc. Every resource in a program, ours and the
 * peers' (the RMM peer programs are built from the same sources), gets the same treatment.
 */
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace rmm::bench {

namespace quiet_cpu_detail {

/// @brief ns per step of a churn of a 64-slot open-addressing map (insert, find, erase with
/// backward shift): loads, stores and branches over a few cache lines, like an allocator's
/// bookkeeping, and independent of this library.
inline double probe_once() {
  struct slot {
    std::uint64_t key;
    std::uint32_t value;
    bool used;
  };
  constexpr std::size_t mask = 63;
  constexpr int steps        = 60000;
  static volatile std::uint64_t sink;
  std::array<slot, mask + 1> s{};
  auto home = [](std::uint64_t k) {
    return static_cast<std::size_t>(k * 0x9E3779B97F4A7C15ULL >> 32U) & mask;
  };
  std::uint64_t const base = 0x7f0000000000ULL + (sink & 0xff000U);
  std::uint64_t acc        = 0;
  auto const t0            = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    std::uint64_t const key = base + (static_cast<std::uint64_t>(k & 15) << 12U);
    std::size_t i           = home(key);
    while (s[i].used) {
      i = (i + 1) & mask;
    }
    s[i]          = slot{key, static_cast<std::uint32_t>(k), true};
    std::size_t j = home(key);
    while (s[j].used && s[j].key != key) {
      j = (j + 1) & mask;
    }
    acc += s[j].value;
    std::size_t hole = j;
    for (std::size_t m = (j + 1) & mask; s[m].used; m = (m + 1) & mask) {
      std::size_t const h = home(s[m].key);
      if (((m - h) & mask) >= ((m - hole) & mask)) {
        s[hole] = s[m];
        hole    = m;
      }
    }
    s[hole] = slot{};
  }
  auto const t1 = std::chrono::steady_clock::now();
  sink          = acc;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / steps;
}

inline double probe() {
  std::array<double, 3> v{probe_once(), probe_once(), probe_once()};
  std::sort(v.begin(), v.end());
  return v[1];
}

inline bool enabled() {
  static bool const on = [] {
    char const* value = std::getenv("RMM_BENCH_QUIET_CPU");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return on;
}

}  // namespace quiet_cpu_detail

#if defined(__linux__)

/**
 * @brief For the lifetime of the scope, the calling thread runs on one quiet CPU (see the file
 * comment); the destructor restores its CPU mask. Sets the counters `cpu` and `probe_ns` of
 * @p state (-1 and 0 when disabled or when the process may run on one CPU only).
 */
class quiet_cpu_scope {
 public:
  explicit quiet_cpu_scope(benchmark::State& state) {
    state.counters["cpu"]      = -1;
    state.counters["probe_ns"] = 0;
    if (!quiet_cpu_detail::enabled() || sched_getaffinity(0, sizeof(saved_), &saved_) != 0) {
      return;
    }
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(static_cast<std::size_t>(c), &saved_)) {
        cpus.push_back(c);
      }
    }
    int const here = sched_getcpu();
    if (cpus.size() < 2 || here < 0 || !pin(here)) {
      return;
    }
    restore_         = true;
    bool const first = best_ == 0;  // the first scope learns a quiet core's speed
    double probe     = quiet_cpu_detail::probe();
    int cpu          = here;
    best_            = first ? probe : std::min(best_, probe);
    bool busy        = first || probe > best_ * slack;
    // Scan every CPU when this one is busy (or on the first call, to learn a quiet core's speed);
    // when every core is busy, wait and scan again, up to max_scans times (at most
    // about 0.15 s before a repetition).
    for (int scan = 0; scan < max_scans && busy; ++scan) {
      if (scan > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      double scan_best = std::numeric_limits<double>::max();
      for (int const c : cpus) {
        if (pin(c)) {
          double const p = quiet_cpu_detail::probe();
          if (p < scan_best) {
            scan_best = p;
            cpu       = c;
          }
        }
      }
      if (scan_best == std::numeric_limits<double>::max()) {
        break;  // no CPU could be pinned: stay where the last pin left the thread
      }
      probe = scan_best;
      best_ = std::min(best_, probe);
      busy  = probe > best_ * slack;
      pin(cpu);
    }
    state_                     = &state;
    state.counters["cpu"]      = cpu;
    state.counters["probe_ns"] = probe;
  }

  quiet_cpu_scope(quiet_cpu_scope const&)            = delete;
  quiet_cpu_scope& operator=(quiet_cpu_scope const&) = delete;

  /// Probes the core again (counter `probe_after_ns`: it went busy during the repetition if
  /// this is far above `probe_ns`) and restores the thread's CPU mask.
  ~quiet_cpu_scope() {
    if (restore_) {
      state_->counters["probe_after_ns"] = quiet_cpu_detail::probe();
      static_cast<void>(sched_setaffinity(0, sizeof(saved_), &saved_));
    }
  }

 private:
  static bool pin(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<std::size_t>(cpu), &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  static constexpr int max_scans = 5;
  static constexpr double slack  = 1.2;  // a core this much slower than the best seen is busy
  // The fastest median probe seen in this process (0 before the first): a quiet core's speed.
  static inline double best_ = 0;

  cpu_set_t saved_{};
  bool restore_{false};
  benchmark::State* state_{nullptr};
};

#else

class quiet_cpu_scope {
 public:
  explicit quiet_cpu_scope(benchmark::State& state) {
    state.counters["cpu"]      = -1;
    state.counters["probe_ns"] = 0;
  }
};

#endif

}  // namespace rmm::bench
