/**
 * @file stateless_cuda_resource.hpp
 * @brief Shared mechanics of the stateless resources whose allocation is one CUDA call.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/alignment_checks.hpp>

#include <cuda/stream_ref>

#include <cstddef>

namespace rmm::mr::detail {

/**
 * @brief CRTP base of cuda_memory_resource, managed_memory_resource and
 * pinned_host_memory_resource.
 *
 * `Derived` provides `static constexpr char const* name`, `static void* do_allocate(std::size_t
 * bytes)` (throws on failure; never called with 0) and `static void do_deallocate(void* ptr)
 * noexcept` (never called with nullptr). The base adds what the three share: the stream is
 * ignored (the CUDA calls are synchronous), alignment is checked against 256, size 0 gives
 * nullptr, and all instances compare equal.
 *
 * Thread-safety: stateless; every function may be called concurrently.
 */
template <typename Derived>
class stateless_cuda_resource {
 public:
  /**
   * @brief Allocates at least @p bytes bytes. The stream argument is ignored.
   * @throws rmm::logic_error if @p alignment is not a power of two or exceeds 256.
   * @throws rmm::out_of_memory if CUDA reports out-of-memory; its report() gives the resource,
   * the requested bytes, the current device and its free and total memory, and the CUDA call and
   * error.
   * @throws rmm::bad_alloc if the allocation fails for any other reason.
   */
  void* allocate([[maybe_unused]] cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return allocate_sync(bytes, alignment);
  }

  /// @brief Frees @p ptr, which a call with the same @p bytes returned. The stream is ignored.
  void deallocate([[maybe_unused]] cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  /// @brief Allocates at least @p bytes bytes synchronously. Throws as allocate().
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    rmm::detail::expect_supported_alignment(
        alignment, rmm::CUDA_ALLOCATION_ALIGNMENT, Derived::name);
    if (bytes == 0) {
      return nullptr;
    }
    return Derived::do_allocate(bytes);
  }

  /// @brief Frees @p ptr synchronously. @p bytes and @p alignment are those given at allocation.
  void deallocate_sync(
      void* ptr,
      [[maybe_unused]] std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr != nullptr) {
      Derived::do_deallocate(ptr);
    }
  }

  // Comparisons are hidden friends taking Derived on both sides: a member of the base compared
  // two Derived objects through a derived-to-base conversion on one side only, which C++20's
  // reversed candidates make ambiguous (clang rejects it; so did cuda::mr::resource_with).

  /// @brief All instances are equivalent. @return true
  friend bool operator==(Derived const&, Derived const&) noexcept { return true; }
  /// @brief All instances are equivalent. @return false
  friend bool operator!=(Derived const&, Derived const&) noexcept { return false; }
};

}  // namespace rmm::mr::detail
