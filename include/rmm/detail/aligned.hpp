/**
 * @file detail/aligned.hpp
 * @brief Aligned host allocation over any allocate function, as RMM's <rmm/detail/aligned.hpp>
 * offers (aligned_host_allocate / aligned_host_deallocate), and the alignment helpers of
 * <rmm/aligned.hpp> under rmm::detail, where older RMM code names them.
 *
 * Thread-safety: the functions hold no state; they are as thread-safe as the callables given.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace rmm::detail {

// The helpers RMM once declared here and now declares in namespace rmm (<rmm/aligned.hpp>).
using rmm::align_down;
using rmm::align_up;
using rmm::is_aligned;
using rmm::is_pointer_aligned;
using rmm::is_pow2;
using rmm::is_supported_alignment;

/**
 * @brief Allocates at least @p bytes of host-accessible memory aligned to @p alignment, using
 * @p alloc (a callable taking a size and returning `void*`) for the underlying block.
 *
 * The block is `bytes + alignment + sizeof(std::ptrdiff_t)` bytes; the returned pointer lies
 * inside it, and the distance back to the block's start is stored in the `std::ptrdiff_t` just
 * before the returned pointer (which is why the memory must be host-accessible). Free it only with
 * aligned_host_deallocate, giving the same @p bytes and @p alignment and a callable that frees
 * what @p alloc returned.
 *
 * @return the aligned pointer, or nullptr if @p alloc returned nullptr.
 * @throws rmm::logic_error naming @p alignment unless it is a power of two.
 * @throws rmm::bad_alloc naming @p bytes if the padded size does not fit in `std::size_t`.
 * @throws whatever @p alloc throws.
 */
template <typename Alloc>
void* aligned_host_allocate(std::size_t bytes, std::size_t alignment, Alloc alloc) {
  RMM_EXPECTS(
      rmm::is_supported_alignment(alignment),
      "aligned_host_allocate: alignment " + std::to_string(alignment) + " is not a power of two");
  constexpr std::size_t header = sizeof(std::ptrdiff_t);
  RMM_EXPECTS(bytes <= std::numeric_limits<std::size_t>::max() - alignment - header,
              "aligned_host_allocate: " + std::to_string(bytes) + " bytes aligned to " +
                  std::to_string(alignment) + " overflow std::size_t once padded",
              rmm::bad_alloc);
  std::size_t const padded = bytes + alignment + header;
  void* const block        = alloc(padded);
  if (block == nullptr) {
    return nullptr;
  }
  auto const start   = reinterpret_cast<std::uintptr_t>(block);
  auto const aligned = rmm::align_up(start + header, alignment);
  auto const offset  = static_cast<std::ptrdiff_t>(aligned - start);
  // memcpy: the header slot need not be aligned for std::ptrdiff_t when alignment is small.
  std::memcpy(reinterpret_cast<void*>(aligned - header), &offset, header);
  return reinterpret_cast<void*>(aligned);
}

/**
 * @brief Frees @p ptr, a pointer returned by aligned_host_allocate(@p bytes, @p alignment, ...),
 * by giving the underlying block to @p dealloc (a callable taking `void*`). Does nothing for
 * nullptr. @p bytes and @p alignment are accepted for symmetry with RMM; the block's start is
 * recovered from the offset stored before @p ptr.
 */
template <typename Dealloc>
void aligned_host_deallocate(void* ptr,
                             [[maybe_unused]] std::size_t bytes,
                             [[maybe_unused]] std::size_t alignment,
                             Dealloc dealloc) noexcept {
  if (ptr == nullptr) {
    return;
  }
  std::ptrdiff_t offset{};
  std::memcpy(&offset, static_cast<char*>(ptr) - sizeof(std::ptrdiff_t), sizeof(offset));
  dealloc(static_cast<void*>(static_cast<char*>(ptr) - offset));
}

}  // namespace rmm::detail
