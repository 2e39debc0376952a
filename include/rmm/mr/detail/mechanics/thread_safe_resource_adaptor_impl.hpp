/**
 * @file thread_safe_resource_adaptor_impl.hpp
 * @brief Shared state of thread_safe_resource_adaptor: the upstream and the mutex that every
 * call to it holds.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/// @brief Shared state of thread_safe_resource_adaptor. Not for direct use.
class thread_safe_resource_adaptor_impl {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  using lock_t                      = std::lock_guard<std::mutex>;
  static constexpr char const* name = "thread_safe_resource_adaptor";

 public:
  explicit thread_safe_resource_adaptor_impl(upstream_t upstream)
      : upstream_{std::move(upstream)} {}

  thread_safe_resource_adaptor_impl(thread_safe_resource_adaptor_impl const&)            = delete;
  thread_safe_resource_adaptor_impl& operator=(thread_safe_resource_adaptor_impl const&) = delete;
  ~thread_safe_resource_adaptor_impl()                                                   = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    lock_t const lock{mutex_};
    return upstream_.allocate(stream, bytes, alignment);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    lock_t const lock{mutex_};
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }

  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    lock_t const lock{mutex_};
    return upstream_.allocate_sync(bytes, alignment);
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    lock_t const lock{mutex_};
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }

  friend bool operator==(thread_safe_resource_adaptor_impl const& a,
                         thread_safe_resource_adaptor_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(thread_safe_resource_adaptor_impl const& a,
                         thread_safe_resource_adaptor_impl const& b) noexcept {
    return &a != &b;
  }

  friend thread_safe_resource_adaptor_impl* get_property(
      thread_safe_resource_adaptor_impl const& self,
      state_of<thread_safe_resource_adaptor_impl>) noexcept {
    return const_cast<thread_safe_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

 private:
  // Only the power of two is checked here (before locking), so that the message names this
  // adaptor; whether the upstream supports the alignment is for the upstream to say.
  static void expect_valid_alignment(std::size_t alignment) {
    RMM_EXPECTS(
        rmm::is_supported_alignment(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }

  upstream_t mutable upstream_;
  std::mutex mutex_;
};

}  // namespace rmm::mr::detail
