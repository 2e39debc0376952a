/**
 * @file random_workload.hpp
 * @brief The random-allocations workload the benchmark programs time: the same draws, in the same
 * order, as ../shared/bench/random_alloc_raw.cu and the PyTorch peers, so that every program's
 * rows for one (n, max) time the same sequence of requests. Included by bench_common.hpp.
 */
#pragma once

#include <rmm/aligned.hpp>

#include <cuda/stream_ref>

#include <cstddef>
#include <new>
#include <random>
#include <utility>
#include <vector>

namespace rmm::bench {

/// @brief One run of the workload: 2 * num iterations, sizes uniform in [1, max_mib MiB], live
/// bytes kept under max_usage_mib MiB, the generator seeded with @p seed (the default seed of
/// std::default_random_engine is the single-thread peers' `std::default_random_engine gen;`).
struct workload_params {
  std::size_t num{};
  std::size_t max_mib{};
  std::size_t max_usage_mib{16000};
  unsigned seed{std::default_random_engine::default_seed};
};

using live_list = std::vector<std::pair<void*, std::size_t>>;

/**
 * @brief Runs the workload through @p mr on @p stream; returns the number of failed allocations.
 *
 * Statement for statement the loop of random_alloc_raw.cu and torch_*_alloc.py, so that the same
 * random numbers are drawn in the same order: a size every iteration; the 0..99 draw only while
 * something is live; the victim index only when freeing. An allocation that throws std::bad_alloc
 * (rmm::out_of_memory included) counts as not made, and the iteration frees instead, as the peers
 * do with nullptr. @p live must be empty on entry; it holds what is still live on return (the
 * caller frees it, untimed).
 */
template <class Resource>
std::size_t random_workload(Resource& mr,
                            cuda::stream_ref stream,
                            workload_params const& params,
                            live_list& live) {
  std::default_random_engine gen(params.seed);
  std::size_t const num       = params.num;
  std::size_t const max_usage = params.max_usage_mib << 20;
  std::uniform_int_distribution<int> op(0, 99);
  std::uniform_int_distribution<std::size_t> idx(0, num - 1);
  std::uniform_int_distribution<std::size_t> sz(1, params.max_mib << 20);
  std::size_t active = 0, count = 0, bytes = 0, failures = 0;
  for (std::size_t i = 0; i < num * 2; ++i) {
    bool do_alloc = true;
    auto size     = sz(gen);
    if (active > 0) {
      int c    = op(gen);
      do_alloc = c < 73 && count < num && bytes + size < max_usage;
    }
    void* ptr = nullptr;
    if (do_alloc) {
      try {
        ptr = mr.allocate(stream, size, CUDA_ALLOCATION_ALIGNMENT);
      } catch (std::bad_alloc const&) {
        ++failures;
        ptr = nullptr;
      }
      if (ptr == nullptr) {
        do_alloc = false;
      }
    }
    if (do_alloc) {
      live.emplace_back(ptr, size);
      ++active;
      ++count;
      bytes += size;
    } else if (active > 0) {
      std::size_t k = idx(gen) % active;
      --active;
      auto victim = live[k];
      if (live.size() > 1 && k < live.size() - 1) {
        std::swap(live[k], live.back());
      }
      live.pop_back();
      mr.deallocate(stream, victim.first, victim.second, CUDA_ALLOCATION_ALIGNMENT);
      bytes -= victim.second;
    }
  }
  return failures;
}

/**
 * @brief random_workload with @p shared_slot moved to this thread's stack for the run, and back
 * afterwards, also when the workload throws (so that the caller's clean-up frees every block).
 * For T threads whose lists sit side by side in one vector: the header each push and pop writes
 * would otherwise share cache lines between threads (null resource at 16 threads: 118 against
 * 350-375 M ops/s on the H100).
 */
template <class Resource>
std::size_t random_workload_on_own_list(Resource& mr,
                                        cuda::stream_ref stream,
                                        workload_params const& params,
                                        live_list& shared_slot) {
  live_list live = std::move(shared_slot);
  struct move_back {
    live_list& from;
    live_list& to;
    ~move_back() { to = std::move(from); }
  } const back{live, shared_slot};
  return random_workload(mr, stream, params, live);
}

/// @brief Frees what a workload left live and empties @p live.
template <class Resource>
void release_all(Resource& mr, cuda::stream_ref stream, live_list& live) {
  for (auto const& [ptr, size] : live) {
    mr.deallocate(stream, ptr, size, CUDA_ALLOCATION_ALIGNMENT);
  }
  live.clear();
}

}  // namespace rmm::bench
