/**
 * @file stream_key.hpp
 * @brief Identity of a CUDA stream as seen by the stream-ordered resources: per-thread default
 * streams are told apart by thread. Also whether a stream is being captured into a CUDA graph.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rmm::mr::detail {

/**
 * @brief A process-wide unique, never reused, non-zero id of the calling thread (std::thread::id
 * values are reused after a thread exits, which would make a new thread's per-thread default
 * stream look like an old one's). Defined in librmm so that every module sees one counter.
 */
RMM_EXPORT std::uint64_t this_thread_uid() noexcept;

/**
 * @brief A process-wide unique, never reused, non-zero id for a resource's state, so that
 * thread-local caches keyed by it never match a destroyed resource's successor at the same
 * address. Defined in librmm so that every module sees one counter.
 */
RMM_EXPORT std::uint64_t next_resource_uid() noexcept;

/**
 * @brief Which stream a handle denotes for the calling thread.
 *
 * The handle `cudaStreamPerThread` (and the handle 0 in a translation unit built with
 * `CUDA_API_PER_THREAD_DEFAULT_STREAM`) denotes a different stream in every thread, so the key
 * adds the calling thread's id. `cudaStreamLegacy` and 0 without per-thread default streams are the
 * one legacy default stream. Created streams are keyed by handle alone.
 *
 * A per-thread stream can be named only from its own thread: anything that must later be ordered
 * after work on it (an event record) has to happen in that thread, at the time of the free.
 */
struct stream_key {
  cudaStream_t handle{};  ///< cudaStreamLegacy, cudaStreamPerThread, or a created stream
  std::uint64_t owner{};  ///< this_thread_uid() of a per-thread default stream's thread; else 0

  /// @brief True if the stream is a per-thread default stream.
  [[nodiscard]] bool per_thread() const noexcept { return handle == cudaStreamPerThread; }

  /// @brief The key of @p stream for the calling thread.
  static stream_key of(cuda::stream_ref stream) noexcept {
    cudaStream_t handle = stream.get();
    if (handle == nullptr) {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
      handle = cudaStreamPerThread;
#else
      handle = cudaStreamLegacy;
#endif
    }
    if (handle == cudaStreamPerThread) {
      return stream_key{handle, this_thread_uid()};
    }
    return stream_key{handle, {}};
  }

  friend bool operator==(stream_key const& a, stream_key const& b) noexcept {
    // One branch for the caller: both fields compared without short-circuit (every allocation
    // and free compares its stream with the slot's; see tlsf_free_list::check_size).
    return ((reinterpret_cast<std::uintptr_t>(a.handle) ^
             reinterpret_cast<std::uintptr_t>(b.handle)) |
            (a.owner ^ b.owner)) == 0;
  }
  friend bool operator!=(stream_key const& a, stream_key const& b) noexcept { return !(a == b); }
};

/**
 * @brief True if @p stream is being captured into a CUDA graph (or its state cannot be known), when
 * a resource must not synchronise for it: a synchronisation is not permitted during a capture,
 * and a failed one would leave blocks that work may still use looking free. Checked before the
 * synchronising steps that a resource can skip (pool_shard::defragment, fixed_size_shard's
 * reclaim of the root's free chunks).
 */
inline bool is_capturing(cuda::stream_ref stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream.get(), &status) != cudaSuccess) {
    cudaGetLastError();
    return true;  // unknown: do not synchronise
  }
  return status != cudaStreamCaptureStatusNone;
}

/**
 * @brief Waits for all work on the current device. Returns cudaSuccess if every block a resource
 * holds is then free of pending work, so that it may be handed to any stream; otherwise the error
 * (a capture in global mode on another thread, a sticky error, the runtime unloading), cleared,
 * and the caller must leave each block with the stream that freed it. A machine with no usable
 * device (no driver, or none visible) counts as synchronised: no work can be pending there, and
 * resources over host-only upstreams (simulated_memory_resource) work as they do with one.
 */
inline cudaError_t synchronize_device() noexcept {
  cudaError_t const err = cudaDeviceSynchronize();
  if (err == cudaSuccess) {
    return cudaSuccess;  // an error the caller's own work left stays for the caller to see
  }
  cudaGetLastError();  // this failure's, so that it does not surface in the caller's next check
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? cudaSuccess : err;
}

/// @brief Hash of a stream_key, for unordered containers.
struct stream_key_hash {
  std::size_t operator()(stream_key const& k) const noexcept {
    return std::hash<void*>{}(static_cast<void*>(k.handle)) ^
           (std::hash<std::uint64_t>{}(k.owner) << 1U);
  }
};

/**
 * @brief A thread's few most recent (resource, stream) -> value lookups, kept in a `thread_local`
 * so that the hot path finds them without a lock. `resource` is a next_resource_uid(), never
 * reused, so an entry of a destroyed resource never matches. Replaced round robin.
 */
template <typename Value, std::size_t N = 4>
class stream_cache {
 public:
  /// @brief The value remembered for (@p resource, @p key), or a value-initialised Value.
  [[nodiscard]] Value find(std::uint64_t resource, stream_key const& key) const noexcept {
    for (auto const& e : entries_) {
      if (e.resource == resource && e.key == key) {
        return e.value;
      }
    }
    return Value{};
  }

  /// @brief Remembers @p value for (@p resource, @p key), replacing an older entry.
  void remember(std::uint64_t resource, stream_key const& key, Value value) noexcept {
    for (auto& e : entries_) {
      if (e.resource == resource && e.key == key) {
        e.value = value;
        return;
      }
    }
    entries_[next_] = entry{resource, key, value};
    next_           = (next_ + 1) % N;
  }

 private:
  struct entry {
    std::uint64_t resource{};
    stream_key key{};
    Value value{};
  };
  std::array<entry, N> entries_{};
  std::size_t next_{};
};

}  // namespace rmm::mr::detail
