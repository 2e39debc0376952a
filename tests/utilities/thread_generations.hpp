/**
 * @file thread_generations.hpp
 * @brief Threads started one after another, each using its per-thread default stream once and
 * exiting, and a thread that frees a block still in use and exits: for the tests of what a
 * resource keeps of finished threads (pool_memory_resource, fixed_size_memory_resource).
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

/**
 * @brief In a thread of its own, allocates @p bytes on that thread's per-thread default stream,
 * starts a kernel there that writes the pattern of seed 1 into them after about @p delay_ns,
 * frees the block there while the kernel still runs, and lets the thread exit. Returns the
 * block's address: what a finished thread leaves behind, still in use on the device.
 */
template <typename Resource>
void* free_in_finished_thread(Resource& mr, std::size_t bytes, std::uint64_t delay_ns) {
  void* p = nullptr;
  std::thread{[&] {
    p = mr.allocate(rmm::cuda_stream_per_thread, bytes, 256);
    fill_pattern_after_delay(p, bytes, 1, delay_ns, cudaStreamPerThread);
    mr.deallocate(rmm::cuda_stream_per_thread, p, bytes, 256);
  }}.join();
  return p;
}

/// @brief What use_in_new_thread saw: the block it got and the bytes of it that differed.
struct new_thread_use {
  void* ptr{nullptr};
  std::size_t mismatches{0};
};

/**
 * @brief In a thread of its own, allocates @p bytes on that thread's per-thread default stream,
 * calls @p after_allocate(), writes the pattern of seed 2 there, synchronises the device (a
 * kernel of a finished thread that was not ordered before it has then overwritten the block),
 * counts the bytes that differ, frees the block and lets the thread exit.
 */
template <typename Resource, typename After>
new_thread_use use_in_new_thread(Resource& mr, std::size_t bytes, After&& after_allocate) {
  new_thread_use use;
  std::thread{[&] {
    use.ptr = mr.allocate(rmm::cuda_stream_per_thread, bytes, 256);
    after_allocate();
    fill_pattern(use.ptr, bytes, 2, cudaStreamPerThread);
    cudaDeviceSynchronize();
    use.mismatches = count_pattern_mismatches(use.ptr, bytes, 2, cudaStreamPerThread);
    mr.deallocate(rmm::cuda_stream_per_thread, use.ptr, bytes, 256);
  }}.join();
  return use;
}

}  // namespace rmm::test
