/**
 * @file cuda_stream_pool.hpp
 * @brief A fixed set of owned CUDA streams handed out round-robin.
 */
#pragma once

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <atomic>
#include <cstddef>
#include <vector>

namespace rmm {

/**
 * @brief A pool of `pool_size` CUDA streams, created at construction on the current device and
 * destroyed with the pool, handed out round-robin as non-owning views.
 *
 * Use it to spread independent work over a bounded number of streams without creating one per
 * task. Two views from get_stream() are the same stream every get_pool_size() calls, so work
 * submitted to views obtained far apart may still be serialised; the pool gives concurrency, not
 * exclusivity.
 *
 * Thread-safety: get_stream(), get_stream(std::size_t) and get_pool_size() may be called
 * concurrently (the round-robin counter is atomic). The pool itself must outlive every use of
 * the views it returned; destroying it destroys the streams (pending work still completes, as
 * CUDA documents for cudaStreamDestroy). Not copyable or movable.
 */
class cuda_stream_pool {
 public:
  /// @brief The number of streams of a default-constructed pool.
  static constexpr std::size_t default_size{16};

  /**
   * @brief Creates @p pool_size streams on the current device.
   * @param pool_size The number of streams.
   * @param flags How the streams synchronise with the legacy default stream.
   * @throws rmm::logic_error if @p pool_size is 0.
   * @throws rmm::cuda_error if a stream cannot be created (the streams made so far are destroyed).
   */
  explicit cuda_stream_pool(std::size_t pool_size    = default_size,
                            cuda_stream::flags flags = cuda_stream::flags::sync_default) {
    RMM_EXPECTS(pool_size > 0, "cuda_stream_pool: pool_size must be greater than 0, got 0");
    streams_.reserve(pool_size);
    for (std::size_t i = 0; i < pool_size; ++i) {
      streams_.emplace_back(flags);
    }
  }

  ~cuda_stream_pool()                                  = default;
  cuda_stream_pool(cuda_stream_pool const&)            = delete;
  cuda_stream_pool& operator=(cuda_stream_pool const&) = delete;
  cuda_stream_pool(cuda_stream_pool&&)                 = delete;
  cuda_stream_pool& operator=(cuda_stream_pool&&)      = delete;

  /**
   * @brief The next stream, round-robin: the i-th call (counting from 0, over all threads)
   * returns stream i modulo get_pool_size().
   */
  [[nodiscard]] cuda_stream_view get_stream() const noexcept {
    std::size_t const i = next_.fetch_add(1, std::memory_order_relaxed);
    return streams_[i % streams_.size()].view();
  }

  /**
   * @brief Stream @p stream_id modulo get_pool_size(): any index is accepted and wraps around, so
   * that a task number can be used directly. Does not advance the round-robin counter.
   */
  [[nodiscard]] cuda_stream_view get_stream(std::size_t stream_id) const noexcept {
    return streams_[stream_id % streams_.size()].view();
  }

  /// @brief The number of streams in the pool (at least 1).
  [[nodiscard]] std::size_t get_pool_size() const noexcept { return streams_.size(); }

 private:
  std::vector<cuda_stream> streams_;
  mutable std::atomic<std::size_t> next_{0};
};

}  // namespace rmm
