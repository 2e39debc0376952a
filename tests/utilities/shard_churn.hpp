/**
 * @file shard_churn.hpp
 * @brief Random allocate/free on one stream, for the tests of the resources that shard once
 * their threads contend (pool_memory_resource, fixed_size_memory_resource).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>

#include <atomic>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

namespace rmm::test {

/**
 * @brief Allocates (sizes 1..@p max_bytes) and frees at random on @p stream, at most 64 blocks
 * live, for @p ops operations or until @p stop is set; frees what is left. Returns the operations
 * made.
 */
template <typename Resource>
std::size_t shard_churn(Resource& mr,
                        rmm::cuda_stream_view stream,
                        unsigned seed,
                        std::size_t ops,
                        std::size_t max_bytes,
                        std::atomic<bool> const* stop = nullptr) {
  std::mt19937 rng{seed};
  std::uniform_int_distribution<std::size_t> size_dist{1, max_bytes};
  std::vector<std::pair<void*, std::size_t>> live;
  std::size_t done = 0;
  for (; done < ops && (stop == nullptr || !stop->load()); ++done) {
    if (live.size() < 64 && (live.empty() || rng() % 2 == 0)) {
      std::size_t const n = size_dist(rng);
      live.emplace_back(mr.allocate(stream, n, 256), n);
    } else {
      auto const k = rng() % live.size();
      mr.deallocate(stream, live[k].first, live[k].second, 256);
      live[k] = live.back();
      live.pop_back();
    }
  }
  for (auto const& [p, n] : live) {
    mr.deallocate(stream, p, n, 256);
  }
  return done;
}

}  // namespace rmm::test
