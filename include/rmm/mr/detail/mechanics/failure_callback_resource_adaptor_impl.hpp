/**
 * @file failure_callback_resource_adaptor_impl.hpp
 * @brief Shared state of failure_callback_resource_adaptor: the upstream, the callback and its
 * argument, and the retry loop.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/failure_callback_t.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/**
 * @brief Shared state of failure_callback_resource_adaptor<ExceptionType>. Not for direct use.
 *
 * Holds no lock: allocations from several threads run the retry loop independently, each calling
 * the callback for its own failures. Deallocation is forwarded untouched.
 */
template <typename ExceptionType>
class failure_callback_resource_adaptor_impl {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "failure_callback_resource_adaptor";

 public:
  failure_callback_resource_adaptor_impl(upstream_t upstream,
                                         failure_callback_t callback,
                                         void* callback_arg)
      : upstream_{std::move(upstream)},
        callback_{std::move(callback)},
        callback_arg_{callback_arg} {
    RMM_EXPECTS(static_cast<bool>(callback_), std::string{name} + ": the callback is empty");
  }

  failure_callback_resource_adaptor_impl(failure_callback_resource_adaptor_impl const&) = delete;
  failure_callback_resource_adaptor_impl& operator=(failure_callback_resource_adaptor_impl const&) =
      delete;
  ~failure_callback_resource_adaptor_impl() = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    return with_retries(bytes, [&] { return upstream_.allocate(stream, bytes, alignment); });
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }

  // The synchronous forms go to the upstream's own synchronous forms: what "usable on return"
  // costs is the upstream's business, and an upstream that needs no CUDA call needs no GPU.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    return with_retries(bytes, [&] { return upstream_.allocate_sync(bytes, alignment); });
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }

  friend bool operator==(failure_callback_resource_adaptor_impl const& a,
                         failure_callback_resource_adaptor_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(failure_callback_resource_adaptor_impl const& a,
                         failure_callback_resource_adaptor_impl const& b) noexcept {
    return &a != &b;
  }

  friend failure_callback_resource_adaptor_impl* get_property(
      failure_callback_resource_adaptor_impl const& self,
      state_of<failure_callback_resource_adaptor_impl>) noexcept {
    return const_cast<failure_callback_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

 private:
  // Only the power of two is checked here, so that the message names this adaptor; whether the
  // upstream supports the alignment is for the upstream to say.
  static void expect_valid_alignment(std::size_t alignment) {
    RMM_EXPECTS(
        rmm::is_supported_alignment(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }

  template <typename Allocate>
  void* with_retries(std::size_t bytes, Allocate&& allocate) {
    while (true) {
      try {
        return allocate();
      } catch (ExceptionType const&) {
        if (!callback_(bytes, callback_arg_)) {
          throw;  // the upstream's exception, unchanged
        }
      }
    }
  }

  upstream_t mutable upstream_;
  failure_callback_t callback_;
  void* callback_arg_;
};

}  // namespace rmm::mr::detail
