/**
 * @file cuda_stream.hpp
 * @brief An owning, movable CUDA stream.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <utility>

namespace rmm {

/**
 * @brief Owns a CUDA stream: creates it on construction and destroys it on destruction.
 *
 * Movable, not copyable. A moved-from object owns no stream (`is_valid()` is false). The stream
 * is created on the device that is current at construction. Thread-safety: distinct objects may
 * be used concurrently; one object is not synchronised (like any value type).
 */
class cuda_stream {
 public:
  /// @brief How the stream synchronises with the legacy default stream.
  enum class flags : unsigned int {
    sync_default = cudaStreamDefault,      ///< synchronises with the legacy default stream
    non_blocking = cudaStreamNonBlocking,  ///< runs concurrently with the legacy default stream
  };

  /**
   * @brief Creates a new stream on the current device.
   *
   * Not explicit, as RMM declares it, so that `rmm::cuda_stream s = {};` and arrays of streams
   * initialised with `{}` compile.
   * @throws rmm::cuda_error if the stream cannot be created.
   */
  // NOLINTNEXTLINE(google-explicit-constructor): RMM's signature
  cuda_stream(flags stream_flags = flags::sync_default) {
    RMM_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, static_cast<unsigned int>(stream_flags)));
  }

  cuda_stream(cuda_stream const&)            = delete;
  cuda_stream& operator=(cuda_stream const&) = delete;

  /// @brief Takes the stream of @p other, which is left owning none.
  cuda_stream(cuda_stream&& other) noexcept : stream_{std::exchange(other.stream_, nullptr)} {}

  /// @brief Destroys the owned stream, then takes the stream of @p other.
  cuda_stream& operator=(cuda_stream&& other) noexcept {
    if (this != &other) {
      destroy();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }

  /// @brief Destroys the owned stream, if any (pending work still completes, as CUDA documents).
  ~cuda_stream() { destroy(); }

  /// @brief True if this object owns a stream.
  [[nodiscard]] bool is_valid() const noexcept { return stream_ != nullptr; }

  /// @brief The owned handle. @pre is_valid().
  [[nodiscard]] cudaStream_t value() const {
    RMM_EXPECTS(is_valid(), "cuda_stream::value() called on a moved-from cuda_stream");
    return stream_;
  }

  /**
   * @brief Explicit conversion to the handle: `static_cast<cudaStream_t>(stream)`, as RMM
   * declares it. Explicit so that an owning stream is not silently turned into a raw handle
   * (which would outlive it unnoticed); pass `stream.value()` or `stream.view()` instead.
   * @pre is_valid(); a moved-from stream ends the program (std::terminate, via the
   * rmm::logic_error of value() leaving this noexcept function).
   */
  explicit operator cudaStream_t() const noexcept { return value(); }

  /// @brief A non-owning view of the stream. @pre is_valid().
  [[nodiscard]] cuda_stream_view view() const { return cuda_stream_view{value()}; }

  /// @brief Implicit conversion to a view. @pre is_valid().
  operator cuda_stream_view() const { return view(); }

  /// @brief Implicit conversion to `cuda::stream_ref`, so that an owning stream can be passed
  /// straight to a resource's allocate(). @pre is_valid(); as for the conversion to
  /// cudaStream_t, a moved-from stream ends the program.
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{value()}; }

  /// @brief Blocks until the stream's work has completed. @throws rmm::cuda_error on failure.
  void synchronize() const { view().synchronize(); }

  /// @brief Like synchronize(), asserting success in debug builds instead of throwing.
  void synchronize_no_throw() const noexcept {
    if (is_valid()) {
      RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(stream_));
    }
  }

 private:
  void destroy() noexcept {
    if (stream_ != nullptr) {
      RMM_ASSERT_CUDA_SUCCESS(cudaStreamDestroy(stream_));
    }
    stream_ = nullptr;
  }

  cudaStream_t stream_{};
};

}  // namespace rmm
