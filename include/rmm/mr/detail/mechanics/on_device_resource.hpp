/**
 * @file on_device_resource.hpp
 * @brief An adaptor that makes one device current around every call to a plain resource, so that
 * a pool made for device N keeps growing on device N whichever device is current when it grows.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <utility>

namespace rmm::mr::detail {

/**
 * @brief Forwards to @p Upstream (a device-accessible resource such as cuda_memory_resource) with
 * `device` current for the duration of each call (cuda_set_device_raii: a cudaGetDevice, plus
 * two cudaSetDevice calls only when another device is current).
 *
 * Copies are equal when their devices and upstreams are. Thread-safety: as @p Upstream; the
 * device switch affects the calling thread only.
 */
template <typename Upstream>
class on_device_resource {
 public:
  /// @brief Forwards to @p upstream with @p device current.
  on_device_resource(Upstream upstream, cuda_device_id device)
      : upstream_{std::move(upstream)}, device_{device} {}

  /// @brief Allocates from the upstream with the device current. Throws what it throws, or
  /// rmm::cuda_error if the device cannot be made current.
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    cuda_set_device_raii const on_device{device_};
    return upstream_.allocate(stream, bytes, alignment);
  }

  /// @brief Frees through the upstream with the device current (or the current one if it
  /// cannot be switched: freeing must not fail).
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    with_device([&] { upstream_.deallocate(stream, ptr, bytes, alignment); });
  }

  /// @brief Synchronous allocate().
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    cuda_set_device_raii const on_device{device_};
    return upstream_.allocate_sync(bytes, alignment);
  }

  /// @brief Synchronous deallocate().
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    with_device([&] { upstream_.deallocate_sync(ptr, bytes, alignment); });
  }

  /// @brief The device made current around each call.
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// @brief Equal when device and upstream are.
  friend bool operator==(on_device_resource const& a, on_device_resource const& b) noexcept {
    return a.device_ == b.device_ && a.upstream_ == b.upstream_;
  }
  /// @brief Negation of ==.
  friend bool operator!=(on_device_resource const& a, on_device_resource const& b) noexcept {
    return !(a == b);
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(on_device_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  template <typename F>
  void with_device(F&& free) noexcept {
    try {
      cuda_set_device_raii const on_device{device_};
      free();
      return;
    } catch (...) {
    }
    free();  // only reached if the device could not be made current
  }

  Upstream upstream_;
  cuda_device_id device_;
};

}  // namespace rmm::mr::detail
