/**
 * @file expandable_pool.hpp
 * @brief The expandable pool as the replay tools measure it: pool_memory_resource over a
 * virtual_memory_resource, keeping the latter to report the most memory it mapped. Internal.
 */
#pragma once

#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <cuda/stream_ref>

#include <cstddef>
#include <optional>

namespace rmm::replay {

/// @brief pool_memory_resource over a virtual_memory_resource with default arguments;
/// peak_reserved_bytes() is the most memory the latter mapped (what the pool took).
class expandable_pool {
 public:
  /// @brief A pool that maps at most @p maximum bytes (no limit by default).
  explicit expandable_pool(std::optional<std::size_t> maximum = std::nullopt)
      : pool_{vmm_, 0, maximum} {}
  /// @brief Allocates from the pool.
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    return pool_.allocate(stream, bytes, alignment);
  }
  /// @brief Frees to the pool.
  void deallocate(cuda::stream_ref stream, void* p, std::size_t bytes, std::size_t alignment) {
    pool_.deallocate(stream, p, bytes, alignment);
  }
  /// @brief How many times the pool defragmented (pool_memory_resource::defragmentations).
  [[nodiscard]] std::size_t defragmentations() const { return pool_.defragmentations(); }
  /// @brief The most bytes the virtual memory resource had mapped at once.
  [[nodiscard]] std::size_t peak_reserved_bytes() const { return vmm_.statistics().peak_mapped; }

 private:
  rmm::mr::virtual_memory_resource vmm_;
  rmm::mr::pool_memory_resource pool_;
};

}  // namespace rmm::replay
