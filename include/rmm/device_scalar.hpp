/**
 * @file device_scalar.hpp
 * @brief rmm::device_scalar: a single object of a trivially copyable type in device memory.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <type_traits>
#include <utility>

namespace rmm {

/**
 * @brief Container for one object of type `T` in device memory, stored in a device_uvector<T> of
 * size 1 (so it owns its resource and frees on stream() like the other containers).
 *
 * The value is only safe to use in kernels and copies on the stream given to the constructor, or
 * on another stream after a dependency has been established (e.g. `cudaStreamWaitEvent()`).
 *
 * Thread-safety: not thread-safe; one thread at a time per scalar.
 *
 * @code{.cpp}
 * int const initial = 42;
 * rmm::device_scalar<int> s(initial, stream, pool);
 * kernel<<<1, 1, 0, stream>>>(s.data());
 * int const result = s.value(stream);   // synchronises `stream`
 * @endcode
 *
 * @tparam T The object's type; must be trivially copyable.
 */
template <typename T>
class device_scalar {
 public:
  static_assert(std::is_trivially_copyable_v<T>, "Scalar type must be trivially copyable");

  using value_type      = typename device_uvector<T>::value_type;       ///< T
  using size_type       = typename device_uvector<T>::size_type;        ///< The type of size()
  using reference       = typename device_uvector<T>::reference;        ///< value_type&
  using const_reference = typename device_uvector<T>::const_reference;  ///< value_type const&
  using pointer         = typename device_uvector<T>::pointer;  ///< The type returned by data()
  using const_pointer =
      typename device_uvector<T>::const_pointer;  ///< The type returned by data() const

  /// @brief Frees the storage on stream().
  RMM_EXEC_CHECK_DISABLE
  ~device_scalar() = default;

  /// @brief Takes over @p other's storage; @p other no longer holds a value.
  RMM_EXEC_CHECK_DISABLE
  device_scalar(device_scalar&&) noexcept = default;

  /// @brief Frees this scalar's storage on stream(), then takes over @p other's.
  /// @return `*this`.
  device_scalar& operator=(device_scalar&&) noexcept = default;

  /// @brief Copying without a stream is not allowed; use the copy constructor taking a stream.
  device_scalar(device_scalar const&) = delete;

  /// @brief Copy assignment is not allowed: it would have no stream to run on.
  device_scalar& operator=(device_scalar const&) = delete;

  /// @brief No default constructor: construction needs a stream.
  device_scalar() = delete;

  /**
   * @brief Allocates uninitialised storage for one `T` on @p stream from @p mr. Does not
   * synchronise.
   * @throws rmm::bad_alloc if the allocation fails.
   */
  explicit device_scalar(cuda_stream_view stream,
                         cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                             mr::get_current_device_resource_ref())
      : _storage{1, stream, std::move(mr)} {}

  /**
   * @brief Allocates storage for one `T` and copies @p initial_value there, both on @p stream.
   * Does not synchronise: @p initial_value must stay alive and unchanged until the copy has run.
   *
   * @throws rmm::bad_alloc if the allocation fails, or the resource cannot satisfy the alignment
   * of `T`.
   * @throws rmm::cuda_error if the copy cannot be enqueued.
   */
  explicit device_scalar(value_type const& initial_value,
                         cuda_stream_view stream,
                         cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                             mr::get_current_device_resource_ref())
      : _storage{1, stream, std::move(mr)} {
    set_value_async(initial_value, stream);
  }

  /**
   * @brief Deep copy of @p other's value into new storage, allocated and copied on @p stream.
   * Does not synchronise.
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  device_scalar(device_scalar const& other,
                cuda_stream_view stream,
                cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                    mr::get_current_device_resource_ref())
      : _storage{other._storage, stream, std::move(mr)} {}

  /**
   * @brief Copies the value to the host on @p stream, synchronises @p stream and returns it.
   *
   * If @p stream is not the stream the value was last written on, the caller orders the two.
   * @throws rmm::cuda_error if the copy or the synchronisation fails.
   */
  [[nodiscard]] value_type value(cuda_stream_view stream) const {
    return _storage.front_element(stream);
  }

  /**
   * @brief Copies @p value to the device on @p stream. Does not synchronise: @p value must stay
   * alive and unchanged until @p stream has reached the copy (rvalues are therefore rejected).
   * @throws rmm::cuda_error if the copy cannot be enqueued.
   */
  void set_value_async(value_type const& value, cuda_stream_view stream) {
    _storage.set_element_async(0, value, stream);
  }

  /// Deleted: an rvalue could be destroyed before the asynchronous copy reads it.
  void set_value_async(value_type&&, cuda_stream_view) = delete;

  /**
   * @brief Sets the value's bytes to zero with a memset on @p stream. Does not synchronise.
   * @throws rmm::cuda_error if the memset cannot be enqueued.
   */
  void set_value_to_zero_async(cuda_stream_view stream) {
    _storage.set_element_to_zero_async(0, stream);
  }

  /// @brief Pointer to the object in device memory.
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(_storage.data()); }

  /// @brief Const pointer to the object in device memory.
  [[nodiscard]] const_pointer data() const noexcept {
    return static_cast<const_pointer>(_storage.data());
  }

  /// @brief Always 1.
  [[nodiscard]] constexpr size_type size() const noexcept { return 1; }

  /// @brief The stream most recently given to this scalar: the one the destructor frees on.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return _storage.stream(); }

  /// @brief Sets the stream used for deallocation.
  void set_stream(cuda_stream_view stream) noexcept { _storage.set_stream(stream); }

  /**
   * @brief Reference to the resource the storage is allocated from and freed to.
   * @note An addition of this library: RMM 26.06's device_scalar has no such member.
   */
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept {
    return _storage.memory_resource();
  }

 private:
  device_uvector<T> _storage;  ///< Storage for exactly one element
};

}  // namespace rmm
