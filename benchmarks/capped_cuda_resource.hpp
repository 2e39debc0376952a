/**
 * @file capped_cuda_resource.hpp
 * @brief cudaMalloc-backed upstream that refuses to hand out more than a cap in total and records
 * its peak: the replay benchmark's way to give a resource a capacity, and to measure how much a
 * growing resource took.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>

namespace rmm::bench {

/**
 * @brief Allocates with cudaMalloc while the bytes outstanding stay within a cap; beyond it throws
 * rmm::out_of_memory, as a device with that much memory would. Copies share the cap and the
 * counters (so that it can be passed by value as an `any_resource` upstream and still be read).
 */
class capped_cuda_resource {
 public:
  /// @brief A cap of @p cap_bytes in total; the default is no cap (counting only).
  explicit capped_cuda_resource(std::size_t cap_bytes = std::numeric_limits<std::size_t>::max())
      : state_{std::make_shared<state>()} {
    state_->cap = cap_bytes;
  }

  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    std::size_t const used = state_->used.fetch_add(bytes) + bytes;
    if (used > state_->cap || used < bytes) {
      state_->used.fetch_sub(bytes);
      throw rmm::out_of_memory{"capped_cuda_resource: " + std::to_string(bytes) +
                               " bytes would exceed the cap of " + std::to_string(state_->cap)};
    }
    void* ptr = nullptr;
    try {
      ptr = rmm::mr::cuda_memory_resource{}.allocate_sync(bytes, alignment);
    } catch (...) {
      state_->used.fetch_sub(bytes);
      throw;
    }
    std::size_t peak = state_->peak.load();
    while (used > peak && !state_->peak.compare_exchange_weak(peak, used)) {
    }
    return ptr;
  }

  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    rmm::mr::cuda_memory_resource{}.deallocate_sync(ptr, bytes, alignment);
    state_->used.fetch_sub(bytes);
  }

  void* allocate(cuda::stream_ref,
                 std::size_t bytes,
                 std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    return allocate_sync(bytes, alignment);
  }

  void deallocate(cuda::stream_ref,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  /// @brief Bytes handed out and not yet returned.
  [[nodiscard]] std::size_t used() const noexcept { return state_->used.load(); }
  /// @brief The most bytes outstanding at any time.
  [[nodiscard]] std::size_t peak() const noexcept { return state_->peak.load(); }

  bool operator==(capped_cuda_resource const& other) const noexcept {
    return state_ == other.state_;
  }
  bool operator!=(capped_cuda_resource const& other) const noexcept { return !(*this == other); }

  friend void get_property(capped_cuda_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    std::size_t cap{};
    std::atomic<std::size_t> used{0};
    std::atomic<std::size_t> peak{0};
  };
  std::shared_ptr<state> state_;
};

static_assert(cuda::mr::resource_with<capped_cuda_resource, cuda::mr::device_accessible>);

}  // namespace rmm::bench
