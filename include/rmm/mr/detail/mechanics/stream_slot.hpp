/**
 * @file stream_slot.hpp
 * @brief One stream's state in the stream-ordered core (stream_ordered_core.hpp): its key, its
 * event, its tag in the free list, whether the event covers its free blocks, and its batch of
 * frees not yet returned to the shared list.
 */
#pragma once

#include <rmm/mr/detail/algorithms/free_batch.hpp>
#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace rmm::mr::detail {

/**
 * @brief One stream's state. `key` changes only under both the core's shared lock and `mtx`
 * (recycling), so either lock makes it stable; `covered` is guarded by the shared lock; `batch`
 * by `mtx`; `event` and `tag` never change. Not copyable or movable (it holds a mutex).
 */
struct alignas(64) stream_slot {  // aligned: each stream's threads write only their own lines
  /// Blocks larger than this are always returned at once (a batch would hold back too much).
  static constexpr std::size_t batch_max_block = std::size_t{1} << 20U;
  /// A batch is returned once it holds this many blocks or `batch_bytes` bytes.
  static constexpr std::size_t batch_blocks = 32;
  static constexpr std::size_t batch_bytes  = std::size_t{8} << 20U;

  using batch_t        = free_batch<batch_blocks>;
  using block          = batch_t::block;
  using batch_blocks_t = std::array<block, batch_blocks>;  // a batch taken out

  /// A slot for stream @p k with event @p e and tag @p t, whose batch is full at
  /// @p batch_byte_limit bytes (0: at `batch_blocks` blocks only).
  stream_slot(stream_key k,
              cudaEvent_t e,
              std::uint32_t t,
              std::size_t batch_byte_limit = batch_bytes) noexcept
      : key{k}, event{e}, tag{t}, batch{batch_byte_limit} {}

  /// Records `event` on the stream of @p k (this slot's key, named by the caller, which is the
  /// stream's user: per-thread default streams need that), or synchronises the stream if the
  /// record fails. `covered` is the caller's to set.
  void record(stream_key const& k) const noexcept {
    if (cudaEventRecord(event, k.handle) != cudaSuccess) {
      cudaGetLastError();
      cudaStreamSynchronize(k.handle);
    }
  }

  /// Moves blocks of @p size, each from `take()` (an optional<void*>; stops at the first
  /// nullopt), into the batch until it holds @p most blocks, never filling it (a full batch is
  /// for the free that fills it to return). Caller holds `mtx`. @return how many blocks moved.
  template <class Take>
  std::size_t prefetch(std::size_t most, std::size_t size, Take&& take) noexcept {
    std::size_t n = 0;
    for (; batch.size() < most && !batch.full_after(size); ++n) {
      auto const p = take();
      if (!p) {
        break;
      }
      static_cast<void>(batch.push(*p, size));  // not full: the loop's condition
    }
    return n;
  }

  /// Bytes in the batch, read under `mtx` (taken here).
  std::size_t locked_batch_bytes() noexcept {
    std::lock_guard<spin_mutex> lock(mtx);
    return batch.bytes();
  }

  stream_key key{};
  cudaEvent_t event{};
  std::uint32_t tag{};
  bool covered{true};  // see the invariant in stream_ordered_core.hpp's file comment
  spin_mutex mtx;
  batch_t batch;
  std::atomic<std::uint32_t> returning{0};  // batches taken out, not yet in the free list
  std::atomic<std::size_t> batched{0};      // bytes in the batch or taken out, not yet in the list
};

}  // namespace rmm::mr::detail
