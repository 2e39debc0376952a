/**
 * @file thread_generations.hpp
 * @brief Threads started one after another, each using its per-thread default stream once and
 * exiting: for the tests of what a resource keeps of finished threads (pool_memory_resource,
 * fixed_size_memory_resource).
 */
#pragma once

#include "device_kernels.hpp"

#include <rmm/cuda_stream_view.hpp>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace rmm::test {

/**
 * @brief Runs @p generations threads, one after another. Each allocates @p blocks blocks of
 * @p bytes on its per-thread default stream, writes a pattern into each, counts the bytes of each
 * that differ from it, and frees them all there; after each thread has exited, calls
 * @p after_each(generation). Returns the bytes that differed, over every thread.
 */
template <typename Resource, typename After>
std::size_t run_thread_generations(
    Resource& mr, int generations, std::uint32_t blocks, std::size_t bytes, After&& after_each) {
  std::size_t mismatches = 0;
  for (int generation = 0; generation < generations; ++generation) {
    std::thread{[&] {
      auto const s = rmm::cuda_stream_per_thread;
      std::vector<void*> got;
      for (std::uint32_t i = 0; i < blocks; ++i) {
        got.push_back(mr.allocate(s, bytes, 256));
        fill_pattern(got.back(), bytes, i, s.value());
      }
      for (std::uint32_t i = 0; i < blocks; ++i) {
        mismatches += count_pattern_mismatches(got[i], bytes, i, s.value());
        mr.deallocate(s, got[i], bytes, 256);
      }
    }}.join();
    after_each(generation);
  }
  return mismatches;
}

}  // namespace rmm::test
