/**
 * @file null_memory_resource.hpp
 * @brief A resource that hands out fake device addresses and owns no memory: the benchmarks' floor.
 *
 * Benchmark-only (it lives in benchmarks/, not include/). Running a workload through it measures
 * everything the harness does around the allocator (random numbers, the live list, the loop, the
 * final synchronisation) and nothing of an allocator.
 */
#pragma once

#include <rmm/aligned.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>

namespace rmm::bench {

/**
 * @brief allocate() returns increasing fake addresses (a per-thread bump pointer over a fake base,
 * aligned to 256 and wrapping inside a 2^44-byte window); deallocate() does nothing.
 *
 * The addresses must never be dereferenced. Each thread bumps its own counter, so that the
 * multi-thread floor has no shared state; addresses of different threads may coincide, which does
 * not matter because nothing is stored at them. All instances compare equal.
 */
class null_memory_resource {
 public:
  /// @brief A fake, 256-aligned, non-null address; @p bytes may be 0.
  void* allocate_sync(std::size_t bytes,
                      [[maybe_unused]] std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    thread_local std::uintptr_t next = 0;
    std::uintptr_t const offset      = next;
    next = (next + align_up(bytes, CUDA_ALLOCATION_ALIGNMENT)) & (window - 1);
    return reinterpret_cast<void*>(base + offset);  // NOLINT(performance-no-int-to-ptr)
  }

  /// @brief Does nothing.
  void deallocate_sync(
      [[maybe_unused]] void* ptr,
      [[maybe_unused]] std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {}

  /// @brief As allocate_sync(); the stream is ignored.
  void* allocate([[maybe_unused]] cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    return allocate_sync(bytes, alignment);
  }

  /// @brief Does nothing.
  void deallocate([[maybe_unused]] cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  bool operator==(null_memory_resource const&) const noexcept { return true; }
  bool operator!=(null_memory_resource const&) const noexcept { return false; }

  /// @brief Claims device accessibility so that it passes wherever a device resource does.
  friend void get_property(null_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  static constexpr std::uintptr_t base   = std::uintptr_t{0x7e0000000000};
  static constexpr std::uintptr_t window = std::uintptr_t{1} << 44;
};

static_assert(cuda::mr::resource_with<null_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::bench
