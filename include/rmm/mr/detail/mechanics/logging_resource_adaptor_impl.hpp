/**
 * @file logging_resource_adaptor_impl.hpp
 * @brief Shared state of logging_resource_adaptor: the upstream and the CSV destination.
 *
 * The lines are formatted and written by the compiled library (src/mr/detail/
 * logging_resource_adaptor_impl.cpp), which keeps file streams, clocks and thread ids out of this
 * header; no logging library is involved.
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>

namespace rmm::mr::detail {

/// @brief Shared state of logging_resource_adaptor. Not for direct use.
class RMM_EXPORT logging_resource_adaptor_impl
    : public stream_resource_base<logging_resource_adaptor_impl> {
  using upstream_t = cuda::mr::any_resource<cuda::mr::device_accessible>;

 public:
  /// @brief Logs to the file @p filename, truncated first; writes the header line.
  /// @throws rmm::logic_error naming the file and the system's reason if it cannot be opened.
  logging_resource_adaptor_impl(upstream_t upstream, std::string const& filename, bool auto_flush);

  /// @brief Logs to @p stream, which must outlive every copy of the adaptor; writes the header.
  logging_resource_adaptor_impl(upstream_t upstream, std::ostream& stream, bool auto_flush);

  logging_resource_adaptor_impl(logging_resource_adaptor_impl const&)            = delete;
  logging_resource_adaptor_impl& operator=(logging_resource_adaptor_impl const&) = delete;
  ~logging_resource_adaptor_impl();

  // A line is written after the upstream returns (so that it holds the pointer) and before the
  // upstream frees (so that a free always precedes the allocation that reuses its memory).
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    void* ptr{nullptr};
    try {
      ptr = upstream_.allocate(stream, bytes, alignment);
    } catch (...) {
      log_event(action::allocate_failure, nullptr, bytes, stream.get());
      throw;
    }
    log_event(action::allocate, ptr, bytes, stream.get());
    return ptr;
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    log_event(action::free, ptr, bytes, stream.get());
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }

  // The synchronous forms go to the upstream's synchronous forms (see
  // statistics_resource_adaptor_impl for why) and log the default stream, 0, as RMM does.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr{nullptr};
    try {
      ptr = upstream_.allocate_sync(bytes, alignment);
    } catch (...) {
      log_event(action::allocate_failure, nullptr, bytes, nullptr);
      throw;
    }
    log_event(action::allocate, ptr, bytes, nullptr);
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    log_event(action::free, ptr, bytes, nullptr);
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }

  friend logging_resource_adaptor_impl* get_property(
      logging_resource_adaptor_impl const& self, state_of<logging_resource_adaptor_impl>) noexcept {
    return const_cast<logging_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  /// @brief Flushes the destination (under the lock that orders the lines).
  void flush();

  /// @brief The CSV header line, without its newline.
  [[nodiscard]] static std::string header() { return "Thread,Time,Action,Pointer,Size,Stream"; }

 private:
  enum class action { allocate, allocate_failure, free };

  /// Writes one line; never throws (a failed write leaves the stream's error state set).
  void log_event(action what, void const* ptr, std::size_t bytes, cudaStream_t stream) noexcept;
  void write_header();

  upstream_t mutable upstream_;
  std::unique_ptr<std::ostream> file_;  // the destination when logging to a named file
  std::ostream* out_;
  bool auto_flush_;
  std::mutex mutex_;
};

}  // namespace rmm::mr::detail
