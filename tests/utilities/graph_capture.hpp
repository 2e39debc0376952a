// Helpers for tests of resources while another thread captures a CUDA graph in global mode, which
// refuses this thread's potentially unsafe calls such as cudaDeviceSynchronize:
//   capture_on_other_thread           the capture, for as long as it lives
//   check_one_size_refused_sync       the scenario of the one-size suballocators (fixed_size and
//                                     binning's bins): a refused synchronisation hands out nothing
//                                     that work may still use
// (stream_ordered_core.md, "A synchronisation can fail").
#pragma once

#include "device_kernels.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

namespace rmm::test {

/// While it lives, another thread captures its own stream in global mode (the default mode).
class capture_on_other_thread {
 public:
  capture_on_other_thread() : go_seen_{go_.get_future()}, thread_{[this] { run(); }} {
    begin_status_ = began_.get_future().get();
  }
  capture_on_other_thread(capture_on_other_thread const&)            = delete;
  capture_on_other_thread& operator=(capture_on_other_thread const&) = delete;
  ~capture_on_other_thread() {
    go_.set_value();
    thread_.join();
  }
  [[nodiscard]] cudaError_t begin_status() const noexcept { return begin_status_; }

 private:
  void run() {
    cudaStream_t stream{};
    cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (status == cudaSuccess) {
      status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    }
    began_.set_value(status);
    go_seen_.wait();
    if (status == cudaSuccess) {
      cudaGraph_t graph{};
      // Reports the capture invalidated by the other thread's refused call; either way it ends.
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr) {
        cudaGraphDestroy(graph);
      }
      cudaGetLastError();
    }
    if (stream != nullptr) {
      cudaStreamDestroy(stream);
    }
  }

  std::promise<cudaError_t> began_;
  std::promise<void> go_;
  std::future<void> go_seen_;  // taken before the thread starts: no call races with set_value
  cudaError_t begin_status_{cudaSuccess};
  std::thread thread_;  // last: started once the promises exist
};

/**
 * @brief `mr` serves `block`-byte requests from exactly `blocks` blocks and cannot grow (its
 * upstream is at its limit). Stream s2 takes one block (so that its slot, and the event that
 * comes with a second stream, exist before the capture); s1 takes the rest, writes each with
 * kernels that first spin for about 300 ms, and frees them all: the oldest into its list,
 * covered by an event, the newest into its batch, which only a device synchronisation makes
 * available to another stream. While another thread captures, s2 takes blocks until the
 * resource reports out of memory; the synchronisation that would free the batch is refused.
 *
 * Checks: out of memory is reported (not a CUDA error), not every block of s1 was taken, and
 * every block that s2 took, written on s2, keeps s2's pattern once s1's kernels are done (a block
 * handed out before s1's kernels were ordered before s2 would hold s1's pattern). Once the capture
 * has ended, the same request synchronises and gets one of s1's blocks. `after_oom(taken)` runs
 * right after the capture, for the resource's own counts.
 */
template <class Resource, class AfterOom>
void check_one_size_refused_sync(Resource& mr,
                                 std::size_t block,
                                 std::size_t blocks,
                                 AfterOom after_oom) {
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* held = mr.allocate(s2, block, 256);
  std::vector<void*> on_s1;
  for (std::size_t i = 1; i < blocks; ++i) {
    on_s1.push_back(mr.allocate(s1, block, 256));
  }
  // One kernel spins, the others queue behind it on s1: every block is written after ~300 ms.
  fill_pattern_after_delay(on_s1.front(), block, 1, 300'000'000, s1.value());
  for (std::size_t i = 1; i < on_s1.size(); ++i) {
    fill_pattern(on_s1[i], block, 1, s1.value());
  }
  for (void* p : on_s1) {
    mr.deallocate(s1, p, block, 256);
  }
  std::vector<void*> taken;
  bool out_of_memory = false;
  {
    capture_on_other_thread const capture;
    REQUIRE(capture.begin_status() == cudaSuccess);
    try {
      while (taken.size() < blocks) {
        taken.push_back(mr.allocate(s2, block, 256));
      }
    } catch (rmm::out_of_memory const&) {
      out_of_memory = true;
    }
  }
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(out_of_memory);
  CHECK(taken.size() < on_s1.size());  // the batch's blocks needed the refused synchronisation
  after_oom(taken.size());
  for (void* p : taken) {
    fill_pattern(p, block, 2, s2.value());
  }
  // Capture over: the request synchronises the device (s1's kernels finish) and gets a block.
  void* after = mr.allocate(s2, block, 256);
  CHECK(std::find(on_s1.begin(), on_s1.end(), after) != on_s1.end());
  std::size_t overwritten = 0;
  for (void* p : taken) {
    overwritten += count_pattern_mismatches(p, block, 2, s2.value());
  }
  CHECK(overwritten == 0);
  CHECK(fill_and_count_mismatches(after, block, 3, s2.value()) == 0);
  taken.push_back(after);
  taken.push_back(held);
  for (void* p : taken) {
    mr.deallocate(s2, p, block, 256);
  }
}

}  // namespace rmm::test
