/**
 * @file unbounded_memory_resource.hpp
 * @brief Allocation straight from pinned host, device or system memory, with no upper bound: the
 * sensor-streaming SDK's unbounded allocator.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/storage_resource.hpp>
#include <rmm/mr/storage_type.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <type_traits>
#include <variant>

namespace rmm::mr {

/**
 * @brief Allocates every request directly from the chosen storage, with no pool and no upper
 * bound other than the memory itself: the SDK's unbounded allocator, recommended for prototyping
 * (switch to block_memory_pool_resource or a pool once the application works).
 *
 * | storage | allocation | stream use |
 * | --- | --- | --- |
 * | storage_type::device | cudaMalloc / cudaFree | synchronous; the stream is ignored |
 * | storage_type::pinned_host | cudaMallocHost / cudaFreeHost | synchronous; the stream is ignored
 * | | storage_type::system | the system allocator | deallocate synchronises the stream first |
 *
 * Alignment: at least 256 bytes; up to 256 for device and pinned storage, 4096 for system
 * storage. A request of 0 bytes returns nullptr. Out of memory throws rmm::out_of_memory.
 *
 * Properties: device_accessible. Pinned and system memory is also host accessible, but the
 * property is not declared because device memory is not (check storage()). storage_type::system
 * needs a device with pageable memory access (HMM or ATS).
 *
 * A small value type: copies are independent but equivalent; two resources compare equal when
 * their storage is the same. Thread-safety: all member functions may be called concurrently.
 */
class unbounded_memory_resource {
 public:
  /**
   * @brief A resource that allocates from @p storage.
   * @throws rmm::logic_error if @p storage is not an enumerator, or if it is storage_type::system
   * and the current device cannot access pageable system memory (the message names the device).
   */
  explicit unbounded_memory_resource(storage_type storage)
      : storage_{storage}, upstream_{detail::make_storage_resource(storage)} {}

  ~unbounded_memory_resource()                                               = default;
  unbounded_memory_resource(unbounded_memory_resource const&)                = default;  ///< Copy.
  unbounded_memory_resource(unbounded_memory_resource&&) noexcept            = default;  ///< Move.
  unbounded_memory_resource& operator=(unbounded_memory_resource const&)     = default;  ///< Copy.
  unbounded_memory_resource& operator=(unbounded_memory_resource&&) noexcept = default;  ///< Move.

  /**
   * @brief Allocates at least @p bytes bytes from the storage.
   * @throws rmm::logic_error if @p alignment is not a power of two or exceeds what the storage
   * honours (256, or 4096 for system memory); the message names this resource.
   * @throws rmm::out_of_memory if the storage is exhausted: the storage resource's own exception
   * (its report names cuda_memory_resource, pinned_host_memory_resource or
   * system_memory_resource, and the size).
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    check_alignment(alignment);
    return std::visit([&](auto& mr) { return mr.allocate(stream, bytes, alignment); }, upstream_);
  }

  /// @brief Frees @p ptr, which allocate() returned for @p bytes and @p alignment. Device and
  /// pinned memory is freed at once (the CUDA calls synchronise); system memory after
  /// synchronising @p stream.
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr != nullptr) {
      std::visit([&](auto& mr) { mr.deallocate(stream, ptr, bytes, alignment); }, upstream_);
    }
  }

  /// @brief Allocates synchronously. Throws as allocate().
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    check_alignment(alignment);
    return std::visit([&](auto& mr) { return mr.allocate_sync(bytes, alignment); }, upstream_);
  }

  /// @brief Frees synchronously.
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr != nullptr) {
      std::visit([&](auto& mr) { mr.deallocate_sync(ptr, bytes, alignment); }, upstream_);
    }
  }

  /// @brief The storage given at construction.
  [[nodiscard]] storage_type storage() const noexcept { return storage_; }

  /// @brief Equal when the storage is the same. @return storage() == other.storage()
  friend bool operator==(unbounded_memory_resource const& a,
                         unbounded_memory_resource const& b) noexcept {
    return a.storage_ == b.storage_;
  }
  /// @brief Unequal when the storage differs. @return storage() != other.storage()
  friend bool operator!=(unbounded_memory_resource const& a,
                         unbounded_memory_resource const& b) noexcept {
    return !(a == b);
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(unbounded_memory_resource const&, cuda::mr::device_accessible) noexcept {
  }

 private:
  static constexpr char const* name = "unbounded_memory_resource";

  void check_alignment(std::size_t alignment) const {
    rmm::detail::expect_supported_alignment(
        alignment, detail::storage_max_alignment(storage_), name);
  }

  storage_type storage_;
  detail::storage_resource upstream_;
};

static_assert(cuda::mr::resource_with<unbounded_memory_resource, cuda::mr::device_accessible>);
static_assert(std::is_nothrow_move_constructible_v<unbounded_memory_resource>);

}  // namespace rmm::mr
