/**
 * @file cuda_stream_view.hpp
 * @brief Non-owning, trivially copyable view of a CUDA stream.
 */
#pragma once

#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <cstddef>
#include <ostream>

namespace rmm {

/**
 * @brief A non-owning wrapper for a `cudaStream_t`.
 *
 * Cheap to copy and pass by value. A default-constructed view refers to the default stream
 * (handle 0), whose meaning depends on how the translation unit is compiled: the legacy default
 * stream, or the per-thread default stream when `CUDA_API_PER_THREAD_DEFAULT_STREAM` is defined
 * (nvcc `--default-stream per-thread`). Converts implicitly to and from `cudaStream_t` and
 * `cuda::stream_ref`. Thread-safety: a view is a value; concurrent use of copies is safe, and
 * the operations on the stream have CUDA's own thread-safety.
 */
class cuda_stream_view {
 public:
  constexpr cuda_stream_view() noexcept                                   = default;
  constexpr cuda_stream_view(cuda_stream_view const&) noexcept            = default;
  constexpr cuda_stream_view(cuda_stream_view&&) noexcept                 = default;
  constexpr cuda_stream_view& operator=(cuda_stream_view const&) noexcept = default;
  constexpr cuda_stream_view& operator=(cuda_stream_view&&) noexcept      = default;
  ~cuda_stream_view()                                                     = default;

  // Disallow construction from literal 0 and nullptr: an integer is never a stream handle, and
  // the default stream is spelled cuda_stream_default.
  constexpr cuda_stream_view(int)            = delete;
  constexpr cuda_stream_view(std::nullptr_t) = delete;

  /// @brief Wraps @p stream without taking ownership.
  constexpr cuda_stream_view(cudaStream_t stream) noexcept : stream_{stream} {}

  /// @brief Wraps the stream referenced by @p stream without taking ownership.
  cuda_stream_view(cuda::stream_ref stream) noexcept : stream_{stream.get()} {}

  /// @brief The wrapped handle.
  [[nodiscard]] constexpr cudaStream_t value() const noexcept { return stream_; }

  /// @brief Implicit conversion to the wrapped handle.
  constexpr operator cudaStream_t() const noexcept { return value(); }

  /// @brief Implicit conversion to `cuda::stream_ref`.
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{value()}; }

  /// @brief True if this is the per-thread default stream: `cudaStreamPerThread`, or handle 0 in
  /// a translation unit compiled with the per-thread default stream.
  [[nodiscard]] bool is_per_thread_default() const noexcept {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return value() == cudaStreamPerThread || value() == nullptr;
#else
    return value() == cudaStreamPerThread;
#endif
  }

  /// @brief True if this is the legacy default stream: `cudaStreamLegacy`, or handle 0 in a
  /// translation unit compiled with the legacy default stream.
  [[nodiscard]] bool is_default() const noexcept {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return value() == cudaStreamLegacy;
#else
    return value() == cudaStreamLegacy || value() == nullptr;
#endif
  }

  /**
   * @brief Blocks until all work on the stream has completed.
   * @throws rmm::cuda_error if the synchronisation fails (the message names the error).
   */
  void synchronize() const { RMM_CUDA_TRY(cudaStreamSynchronize(stream_)); }

  /// @brief Like synchronize(), but asserts success in debug builds instead of throwing.
  void synchronize_no_throw() const noexcept {
    RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(stream_));
  }

 private:
  cudaStream_t stream_{};
};

/// @brief The default stream (handle 0); see cuda_stream_view for its meaning.
static constexpr cuda_stream_view cuda_stream_default{};

/// @brief The legacy default stream, whatever the compilation mode.
static const cuda_stream_view cuda_stream_legacy{cudaStreamLegacy};

/// @brief The per-thread default stream, whatever the compilation mode.
static const cuda_stream_view cuda_stream_per_thread{cudaStreamPerThread};

/// @brief Two views are equal if they wrap the same handle.
[[nodiscard]] inline bool operator==(cuda_stream_view lhs, cuda_stream_view rhs) {
  return lhs.value() == rhs.value();
}

/// @brief Two views are unequal if they wrap different handles.
[[nodiscard]] inline bool operator!=(cuda_stream_view lhs, cuda_stream_view rhs) {
  return !(lhs == rhs);
}

/// @brief Writes the handle's address to @p os.
inline std::ostream& operator<<(std::ostream& os, cuda_stream_view stream) {
  os << static_cast<void*>(stream.value());
  return os;
}

}  // namespace rmm
