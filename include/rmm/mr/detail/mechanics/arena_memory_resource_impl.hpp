/**
 * @file arena_memory_resource_impl.hpp
 * @brief The shared state of arena_memory_resource as the resource sees it: the stream-ordered
 * calls, the synchronous calls and identity, over arena_state (arena_state.hpp).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/mechanics/arena_state.hpp>

#include <cuda/stream_ref>

#include <cstddef>
#include <memory>
#include <utility>

namespace rmm::mr::detail {

/// @brief Shared state of arena_memory_resource. Not for direct use.
class arena_memory_resource_impl {
 public:
  explicit arena_memory_resource_impl(std::unique_ptr<arena_state> state)
      : state_{std::move(state)} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    return state_->allocate(stream, bytes, alignment);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    state_->deallocate(stream, ptr, bytes, alignment);
  }

  // Synchronous use means "usable on any stream on return": allocate on the legacy default
  // stream and wait for it.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr = allocate(cuda_stream_legacy, bytes, alignment);
    cuda_stream_legacy.synchronize();
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate(cuda_stream_legacy, ptr, bytes, alignment);
  }

  // Identity: two states are the same resource only if they are the same object.
  friend bool operator==(arena_memory_resource_impl const& a,
                         arena_memory_resource_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(arena_memory_resource_impl const& a,
                         arena_memory_resource_impl const& b) noexcept {
    return &a != &b;
  }

 private:
  std::unique_ptr<arena_state> state_;
};

}  // namespace rmm::mr::detail
