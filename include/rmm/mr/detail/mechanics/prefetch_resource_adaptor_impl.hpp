/**
 * @file prefetch_resource_adaptor_impl.hpp
 * @brief Shared state of prefetch_resource_adaptor: the upstream, and rmm::prefetch of each
 * allocation it hands out.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/// @brief Shared state of prefetch_resource_adaptor. Not for direct use.
class prefetch_resource_adaptor_impl {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "prefetch_resource_adaptor";

 public:
  explicit prefetch_resource_adaptor_impl(upstream_t upstream) : upstream_{std::move(upstream)} {}

  prefetch_resource_adaptor_impl(prefetch_resource_adaptor_impl const&)            = delete;
  prefetch_resource_adaptor_impl& operator=(prefetch_resource_adaptor_impl const&) = delete;
  ~prefetch_resource_adaptor_impl()                                                = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    void* ptr = upstream_.allocate(stream, bytes, alignment);
    try {
      prefetch(ptr, bytes, stream);
    } catch (...) {
      upstream_.deallocate(stream, ptr, bytes, alignment);
      throw;
    }
    return ptr;
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }

  // The upstream's synchronous allocation is usable on every stream on return. The prefetch is
  // then enqueued on the default stream and not waited for: a migration in flight does not stop
  // other streams from using the memory (managed memory stays coherent), it only moves it.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    expect_valid_alignment(alignment);
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    try {
      prefetch(ptr, bytes, cuda_stream_default);
    } catch (...) {
      upstream_.deallocate_sync(ptr, bytes, alignment);
      throw;
    }
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }

  friend bool operator==(prefetch_resource_adaptor_impl const& a,
                         prefetch_resource_adaptor_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(prefetch_resource_adaptor_impl const& a,
                         prefetch_resource_adaptor_impl const& b) noexcept {
    return &a != &b;
  }

  friend prefetch_resource_adaptor_impl* get_property(
      prefetch_resource_adaptor_impl const& self,
      state_of<prefetch_resource_adaptor_impl>) noexcept {
    return const_cast<prefetch_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

 private:
  static void expect_valid_alignment(std::size_t alignment) {
    RMM_EXPECTS(
        rmm::is_supported_alignment(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }

  // To the device current at the time of the allocation. rmm::prefetch ignores memory that is
  // not managed (and devices that cannot prefetch), so every upstream works.
  static void prefetch(void const* ptr, std::size_t bytes, cuda::stream_ref stream) {
    if (ptr == nullptr || bytes == 0) {
      return;
    }
    rmm::prefetch(ptr, bytes, get_current_cuda_device(), cuda_stream_view{stream});
  }

  upstream_t mutable upstream_;
};

}  // namespace rmm::mr::detail
