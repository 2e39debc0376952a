/**
 * @file polymorphic_allocator.hpp
 * @brief Stream-ordered allocator over a type-erased resource, and an adaptor that gives any
 * stream-ordered allocator the standard Allocator interface.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief A stream-ordered Allocator using a type-erased device resource to satisfy
 * (de)allocations.
 *
 * Like `std::pmr::polymorphic_allocator`, containers with this static allocator type
 * interoperate while behaving differently depending on the resource. Unlike STL allocators,
 * allocate() and deallocate() take a stream; use stream_allocator_adaptor for interfaces that
 * need a standard Allocator.
 *
 * The allocator holds its resource as an owning `cuda::mr::any_resource`: given a resource
 * object it shares or copies it; given a reference (the default, or a
 * device_async_resource_ref) it refers to it, and the caller keeps the referenced resource
 * alive. Allocations are aligned to at least CUDA_ALLOCATION_ALIGNMENT.
 *
 * Thread-safety: as thread-safe as the resource; copies may be used concurrently.
 *
 * @tparam T The allocator's value type.
 */
template <typename T>
class polymorphic_allocator {
 public:
  using value_type = T;  ///< T, the value type of objects allocated by this allocator.

  /**
   * @brief Construct a polymorphic_allocator using the return value of
   * rmm::mr::get_current_device_resource_ref() as the underlying memory resource.
   * @throws rmm::cuda_error if there is no current device.
   */
  polymorphic_allocator() = default;

  /**
   * @brief Construct a polymorphic_allocator using the provided memory resource. This
   * constructor provides an implicit conversion from device_async_resource_ref.
   * @param mr The upstream memory resource to use for allocation.
   */
  polymorphic_allocator(cuda::mr::any_resource<cuda::mr::device_accessible> mr)
      : mr_{std::move(mr)} {}

  /**
   * @brief Construct a polymorphic_allocator using the underlying memory resource of @p other
   * (a copy of its owning handle, so the new allocator does not depend on @p other's lifetime).
   */
  template <typename U>
  polymorphic_allocator(polymorphic_allocator<U> const& other) noexcept : mr_{other.mr_} {}

  /**
   * @brief Allocates storage for @p num objects of type T on @p stream.
   * @throws rmm::bad_alloc if `num * sizeof(T)` overflows (the message names @p num); otherwise
   * what the resource throws (rmm::out_of_memory, rmm::bad_alloc).
   */
  value_type* allocate(std::size_t num, cuda_stream_view stream) {
    RMM_EXPECTS(num <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                "polymorphic_allocator: " + std::to_string(num) + " objects of " +
                    std::to_string(sizeof(T)) + " bytes overflow std::size_t",
                rmm::bad_alloc);
    return static_cast<value_type*>(mr_.allocate(stream, num * sizeof(T), alignment));
  }

  /**
   * @brief Deallocates storage pointed to by @p ptr on @p stream.
   * @pre @p ptr was returned by allocate(num, s) of an allocator that compares equal.
   */
  void deallocate(value_type* ptr, std::size_t num, cuda_stream_view stream) noexcept {
    mr_.deallocate(stream, ptr, num * sizeof(T), alignment);
  }

  /// @brief rmm::device_async_resource_ref to the upstream resource.
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept {
    return rmm::device_async_resource_ref{mr_};
  }

 private:
  template <typename U>
  friend class polymorphic_allocator;

  static constexpr std::size_t alignment = alignof(T) > CUDA_ALLOCATION_ALIGNMENT
                                               ? alignof(T)
                                               : CUDA_ALLOCATION_ALIGNMENT;

  // mutable: the type-erased reference needs a non-const object; the allocator's logical state
  // (which resource it uses) never changes through it.
  mutable cuda::mr::any_resource<cuda::mr::device_accessible> mr_{
      get_current_device_resource_ref()};
};

/**
 * @brief Two polymorphic_allocators are equal if their underlying memory resources compare equal.
 */
template <typename T, typename U>
bool operator==(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs) {
  return lhs.get_upstream_resource() == rhs.get_upstream_resource();
}

/**
 * @brief Two polymorphic_allocators are not equal if their underlying memory resources compare
 * not equal.
 */
template <typename T, typename U>
bool operator!=(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs) {
  return !(lhs == rhs);
}

/**
 * @brief Adapts a stream-ordered allocator to provide a standard Allocator interface.
 *
 * Wraps a stream-ordered allocator and a stream; allocate() and deallocate() call the wrapped
 * allocator on that stream.
 *
 * ```
 * rmm::mr::polymorphic_allocator<int> a{rmm::mr::managed_memory_resource{}};
 * auto adapted = rmm::mr::stream_allocator_adaptor(a, stream);
 * std::vector<int, decltype(adapted)> v(n, 0, adapted);
 * ```
 *
 * Thread-safety: as thread-safe as the wrapped allocator.
 *
 * @tparam Allocator Stream-ordered allocator type to adapt.
 */
template <typename Allocator>
class stream_allocator_adaptor {
 public:
  /// The value type of objects allocated by this allocator.
  using value_type = typename std::allocator_traits<Allocator>::value_type;

  stream_allocator_adaptor() = delete;

  /**
   * @brief Construct a stream_allocator_adaptor using @p allocator as the underlying allocator.
   * @note @p stream must outlive the adaptor and its copies.
   */
  stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream)
      : alloc_{allocator}, stream_{stream} {}

  /**
   * @brief Construct from `other.underlying_allocator()` (converted) and `other.stream()`.
   */
  template <typename OtherAllocator>
  stream_allocator_adaptor(stream_allocator_adaptor<OtherAllocator> const& other)
      : stream_allocator_adaptor{Allocator{other.underlying_allocator()}, other.stream()} {}

  /// @brief Rebinds the allocator to the specified type.
  template <typename T>
  struct rebind {
    /// The type to bind to.
    using other = stream_allocator_adaptor<
        typename std::allocator_traits<Allocator>::template rebind_alloc<T>>;
  };

  /// @brief Allocates storage for @p num objects on stream(). Throws what the allocator throws.
  value_type* allocate(std::size_t num) { return alloc_.allocate(num, stream()); }

  /// @brief Deallocates storage pointed to by @p ptr on stream().
  void deallocate(value_type* ptr, std::size_t num) noexcept {
    alloc_.deallocate(ptr, num, stream());
  }

  /// @brief The stream on which calls to the underlying allocator are made.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  /// @brief The underlying allocator.
  [[nodiscard]] Allocator underlying_allocator() const noexcept { return alloc_; }

 private:
  Allocator alloc_;
  cuda_stream_view stream_;
};

/// @brief Two stream_allocator_adaptors are equal if their underlying allocators compare equal.
template <typename A, typename O>
bool operator==(stream_allocator_adaptor<A> const& lhs, stream_allocator_adaptor<O> const& rhs) {
  return lhs.underlying_allocator() == rhs.underlying_allocator();
}

/// @brief Two stream_allocator_adaptors are unequal if their underlying allocators are unequal.
template <typename A, typename O>
bool operator!=(stream_allocator_adaptor<A> const& lhs, stream_allocator_adaptor<O> const& rhs) {
  return !(lhs == rhs);
}

/**
 * @brief Factory for a stream_allocator_adaptor of @p allocator on @p stream.
 */
template <typename Allocator>
auto make_stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream) {
  return stream_allocator_adaptor<Allocator>{allocator, stream};
}

}  // namespace rmm::mr
