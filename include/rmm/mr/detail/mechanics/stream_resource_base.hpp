/**
 * @file stream_resource_base.hpp
 * @brief What every stream-ordered shared state adds to its allocate/deallocate: the synchronous
 * forms required by cuda::mr::shared_resource, and identity comparison.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>

#include <cstddef>

namespace rmm::mr::detail {

/**
 * @brief CRTP base of a resource state `Impl` that has `allocate(stream, bytes, alignment)` and
 * `deallocate(stream, ptr, bytes, alignment)`.
 *
 * Synchronous use means "usable on any stream on return": allocate_sync orders the allocation on
 * the legacy default stream and waits for it; deallocate_sync frees on that stream. Two states
 * compare equal only if they are the same object (copies of the public resource share one).
 */
template <typename Impl>
class stream_resource_base {
 public:
  /// @brief Allocates on the legacy default stream and synchronises it.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr = self().allocate(cuda_stream_default, bytes, alignment);
    cuda_stream_default.synchronize();
    return ptr;
  }

  /// @brief Frees on the legacy default stream.
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    self().deallocate(cuda_stream_default, ptr, bytes, alignment);
  }

  friend bool operator==(Impl const& a, Impl const& b) noexcept { return &a == &b; }
  friend bool operator!=(Impl const& a, Impl const& b) noexcept { return &a != &b; }

 private:
  Impl& self() noexcept { return static_cast<Impl&>(*this); }
};

}  // namespace rmm::mr::detail
