/**
 * @file device_uvector.hpp
 * @brief rmm::device_uvector: a typed, *uninitialised*, stream-ordered vector in device memory.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/iterator>
#include <cuda/std/span>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm {

/**
 * @brief A contiguous vector of `T` in device memory whose elements are *not* initialised.
 *
 * Like `thrust::device_vector` without the initialisation kernel: creating a vector to hold the
 * output of some operation costs an allocation only. Because elements are never constructed or
 * destroyed, `T` must be trivially copyable; elements are copied as if by `memcpy`. Every
 * operation that allocates, copies or frees takes the stream it runs on.
 *
 * The storage is a device_buffer (see release()), so the vector owns its resource exactly as a
 * device_buffer does, frees on stream() with the size and alignment it allocated with, and is
 * aligned to at least `max(alignof(T), rmm::CUDA_ALLOCATION_ALIGNMENT)`.
 *
 * Thread-safety: not thread-safe; one thread at a time per vector.
 *
 * @code{.cpp}
 * rmm::device_uvector<int> v(100, stream, pool);   // 100 uninitialised ints from `pool`
 * v.set_element_to_zero_async(0, stream);
 * int const last = v.back_element(stream);          // synchronises `stream`
 * @endcode
 *
 * @tparam T Trivially copyable element type.
 */
template <typename T>
class device_uvector {
  static_assert(std::is_trivially_copyable_v<T>,
                "device_uvector only supports types that are trivially copyable.");

 public:
  using value_type      = T;                  ///< The element type
  using size_type       = std::size_t;        ///< The type of sizes and indices
  using reference       = value_type&;        ///< Reference to an element (device memory)
  using const_reference = value_type const&;  ///< Const reference to an element (device memory)
  using pointer         = value_type*;        ///< The type returned by data()
  using const_pointer   = value_type const*;  ///< The type returned by data() const
  using iterator        = pointer;            ///< The type returned by begin()
  using const_iterator  = const_pointer;      ///< The type returned by cbegin()
  using reverse_iterator =
      cuda::std::reverse_iterator<iterator>;  ///< The type returned by rbegin()
  using const_reverse_iterator =
      cuda::std::reverse_iterator<const_iterator>;  ///< The type returned by crbegin()

  /// @brief Frees the storage on stream().
  RMM_EXEC_CHECK_DISABLE
  ~device_uvector() = default;

  /// @brief Takes over @p other's storage; @p other is left empty (as device_buffer's move).
  RMM_EXEC_CHECK_DISABLE
  device_uvector(device_uvector&&) noexcept = default;

  /// @brief Frees this vector's storage on stream(), then takes over @p other's.
  /// @return `*this`.
  RMM_EXEC_CHECK_DISABLE
  device_uvector& operator=(device_uvector&&) noexcept = default;

  /// @brief Copying without a stream is not allowed; use the copy constructor taking a stream.
  device_uvector(device_uvector const&) = delete;

  /// @brief Copy assignment is not allowed: it would have no stream to run on.
  device_uvector& operator=(device_uvector const&) = delete;

  /// @brief No default constructor: construction needs a stream.
  device_uvector() = delete;

  /**
   * @brief Allocates uninitialised storage for @p size elements on @p stream from @p mr.
   *
   * @param size Number of elements (0 allocates nothing).
   * @param stream Stream on which to allocate (and, until changed, to free).
   * @param mr The resource, owned by the vector (see device_buffer).
   * @throws rmm::bad_alloc if the allocation fails, if the resource cannot satisfy the alignment
   * of `T`, or if `size * sizeof(T)` does not fit in `std::size_t` (the message names @p size).
   */
  explicit device_uvector(size_type size,
                          cuda_stream_view stream,
                          cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                              mr::get_current_device_resource_ref())
      : _storage{elements_to_bytes(size), storage_alignment, stream, std::move(mr)} {}

  /**
   * @brief Deep copy of @p other (as if by `memcpy`, `T`'s copy constructor is not used) into
   * new storage of exactly `other.size()` elements, allocated and copied on @p stream.
   * Does not synchronise @p stream.
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  explicit device_uvector(device_uvector const& other,
                          cuda_stream_view stream,
                          cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                              mr::get_current_device_resource_ref())
      : _storage{other._storage, stream, std::move(mr)} {}

  /**
   * @brief Pointer to element @p element_index.
   * @pre `element_index < size()` (asserted in debug builds; otherwise undefined behaviour).
   */
  [[nodiscard]] pointer element_ptr(size_type element_index) noexcept {
    assert(element_index < size());
    return data() + element_index;
  }

  /// @copydoc element_ptr(size_type)
  [[nodiscard]] const_pointer element_ptr(size_type element_index) const noexcept {
    assert(element_index < size());
    return data() + element_index;
  }

  /**
   * @brief Copies @p value to element @p element_index with `cudaMemcpyAsync` on @p stream.
   *
   * Does not synchronise: @p value must stay alive and unchanged until @p stream has reached the
   * copy. For that reason rvalues (literals, temporaries) are rejected at compile time.
   *
   * @throws rmm::out_of_range if `element_index >= size()` (the message names both).
   * @throws rmm::cuda_error if the copy cannot be enqueued.
   */
  void set_element_async(size_type element_index,
                         value_type const& value,
                         cuda_stream_view stream) {
    check_index(element_index);
    RMM_CUDA_TRY(cudaMemcpyAsync(
        element_ptr(element_index), &value, sizeof(value), cudaMemcpyDefault, stream.value()));
  }

  /// Deleted: an rvalue could be destroyed before the asynchronous copy reads it.
  void set_element_async(size_type, value_type const&&, cuda_stream_view) = delete;

  /**
   * @brief Sets the bytes of element @p element_index to zero with `cudaMemsetAsync` on
   * @p stream. Does not synchronise.
   *
   * @throws rmm::out_of_range if `element_index >= size()`.
   * @throws rmm::cuda_error if the memset cannot be enqueued.
   */
  void set_element_to_zero_async(size_type element_index, cuda_stream_view stream) {
    check_index(element_index);
    RMM_CUDA_TRY(
        cudaMemsetAsync(element_ptr(element_index), 0, sizeof(value_type), stream.value()));
  }

  /**
   * @brief Copies @p value to element @p element_index on @p stream and synchronises @p stream,
   * so @p value may be changed or destroyed as soon as this returns.
   *
   * @throws rmm::out_of_range if `element_index >= size()`.
   * @throws rmm::cuda_error if the copy cannot be enqueued. A failure of the synchronisation
   * itself is asserted in debug builds, not thrown (as in RMM).
   */
  void set_element(size_type element_index, T const& value, cuda_stream_view stream) {
    set_element_async(element_index, value, stream);
    stream.synchronize_no_throw();
  }

  /**
   * @brief Returns a host copy of element @p element_index, read on @p stream; synchronises
   * @p stream.
   *
   * @throws rmm::out_of_range if `element_index >= size()`.
   * @throws rmm::cuda_error if the copy or the synchronisation fails.
   */
  [[nodiscard]] value_type element(size_type element_index, cuda_stream_view stream) const {
    check_index(element_index);
    value_type value;
    RMM_CUDA_TRY(cudaMemcpyAsync(
        &value, element_ptr(element_index), sizeof(value), cudaMemcpyDefault, stream.value()));
    stream.synchronize();
    return value;
  }

  /**
   * @brief The first element, copied to the host on @p stream; synchronises @p stream.
   * @throws rmm::out_of_range if the vector is empty.
   * @throws rmm::cuda_error if the copy or the synchronisation fails.
   */
  [[nodiscard]] value_type front_element(cuda_stream_view stream) const {
    return element(0, stream);
  }

  /**
   * @brief The last element, copied to the host on @p stream; synchronises @p stream.
   * @throws rmm::out_of_range if the vector is empty.
   * @throws rmm::cuda_error if the copy or the synchronisation fails.
   */
  [[nodiscard]] value_type back_element(cuda_stream_view stream) const {
    // For an empty vector size() - 1 wraps to the largest index, which element() rejects.
    return element(size() - 1, stream);
  }

  /**
   * @brief Makes capacity() at least @p new_capacity elements.
   *
   * If @p new_capacity > capacity(), allocates storage for exactly @p new_capacity elements,
   * copies the size() elements as if by `memcpy` and frees the old storage, all on @p stream;
   * otherwise does nothing. @p stream becomes stream().
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  void reserve(size_type new_capacity, cuda_stream_view stream) {
    _storage.reserve(elements_to_bytes(new_capacity), stream);
  }

  /**
   * @brief Makes size() equal to @p new_size.
   *
   * New elements are uninitialised. If @p new_size <= capacity() only the size changes;
   * otherwise storage for exactly @p new_size elements is allocated and the elements are copied
   * as if by `memcpy`, on @p stream. `size() <= capacity()` always holds. @p stream becomes
   * stream().
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  void resize(size_type new_size, cuda_stream_view stream) {
    _storage.resize(elements_to_bytes(new_size), stream);
  }

  /**
   * @brief If capacity() > size(), reallocates to exactly size() elements and copies them, on
   * @p stream. @p stream becomes stream().
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  void shrink_to_fit(cuda_stream_view stream) { _storage.shrink_to_fit(stream); }

  /**
   * @brief Gives up the storage: returns the device_buffer that holds the elements (with its
   * resource and stream); the vector is left empty.
   */
  device_buffer release() noexcept { return std::move(_storage); }

  /// @brief Number of elements the current storage holds without reallocating.
  [[nodiscard]] size_type capacity() const noexcept {
    return bytes_to_elements(_storage.capacity());
  }

  /// @brief Pointer to the first element in device memory; do not dereference when empty (it
  /// may or may not be null then).
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(_storage.data()); }

  /// @copydoc data()
  [[nodiscard]] const_pointer data() const noexcept {
    return static_cast<const_pointer>(_storage.data());
  }

  /// @brief Iterator to the first element; equals end() when empty.
  [[nodiscard]] iterator begin() noexcept { return data(); }

  /// @brief Const iterator to the first element; equals cend() when empty.
  [[nodiscard]] const_iterator cbegin() const noexcept { return data(); }

  /// @copydoc cbegin()
  [[nodiscard]] const_iterator begin() const noexcept { return cbegin(); }

  /// @brief Iterator one past the last element (not dereferenceable).
  [[nodiscard]] iterator end() noexcept { return data() + size(); }

  /// @brief Const iterator one past the last element (not dereferenceable).
  [[nodiscard]] const_iterator cend() const noexcept { return data() + size(); }

  /// @copydoc cend()
  [[nodiscard]] const_iterator end() const noexcept { return cend(); }

  /// @brief Reverse iterator to the last element; equals rend() when empty.
  [[nodiscard]] reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }

  /// @brief Const reverse iterator to the last element; equals crend() when empty.
  [[nodiscard]] const_reverse_iterator crbegin() const noexcept {
    return const_reverse_iterator(cend());
  }

  /// @copydoc crbegin()
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return crbegin(); }

  /// @brief Reverse iterator before the first element (not dereferenceable).
  [[nodiscard]] reverse_iterator rend() noexcept { return reverse_iterator(begin()); }

  /// @brief Const reverse iterator before the first element (not dereferenceable).
  [[nodiscard]] const_reverse_iterator crend() const noexcept {
    return const_reverse_iterator(cbegin());
  }

  /// @copydoc crend()
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return crend(); }

  /// @brief Number of elements.
  [[nodiscard]] size_type size() const noexcept { return bytes_to_elements(_storage.size()); }

  /// @brief size() as a signed number. @pre size() fits in `std::int64_t` (asserted).
  [[nodiscard]] std::int64_t ssize() const noexcept {
    assert(size() < static_cast<size_type>(std::numeric_limits<std::int64_t>::max()) &&
           "Size overflows signed integer");
    return static_cast<std::int64_t>(size());
  }

  /// @brief True if size() is 0.
  [[nodiscard]] bool is_empty() const noexcept { return size() == 0; }

  /// @brief A read-only span over the elements (device memory).
  [[nodiscard]] operator cuda::std::span<T const>() const noexcept {
    return cuda::std::span<T const>(data(), size());
  }

  /// @brief A span over the elements (device memory).
  [[nodiscard]] operator cuda::std::span<T>() noexcept {
    return cuda::std::span<T>(data(), size());
  }

  /// @brief Reference to the resource the storage is allocated from and freed to.
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept {
    return _storage.memory_resource();
  }

  /// @brief The stream most recently given to this vector: the one the destructor frees on.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return _storage.stream(); }

  /**
   * @brief Sets the stream used for deallocation (a later reserve(), resize() or
   * shrink_to_fit() replaces it with its own stream argument).
   */
  void set_stream(cuda_stream_view stream) noexcept { _storage.set_stream(stream); }

 private:
  /// Alignment of the storage: what `T` needs, and never less than what RMM guarantees.
  static constexpr std::size_t storage_alignment = alignof(T) > CUDA_ALLOCATION_ALIGNMENT
                                                       ? alignof(T)
                                                       : CUDA_ALLOCATION_ALIGNMENT;

  device_buffer _storage;  ///< The elements' bytes

  /// @brief Bytes for @p num_elements. @throws rmm::bad_alloc if the product overflows.
  [[nodiscard]] static size_type elements_to_bytes(size_type num_elements) {
    RMM_EXPECTS(num_elements <= std::numeric_limits<size_type>::max() / sizeof(value_type),
                "device_uvector: " + std::to_string(num_elements) + " elements of " +
                    std::to_string(sizeof(value_type)) + " bytes do not fit in std::size_t",
                rmm::bad_alloc);
    return num_elements * sizeof(value_type);
  }

  [[nodiscard]] static constexpr size_type bytes_to_elements(size_type num_bytes) noexcept {
    return num_bytes / sizeof(value_type);
  }

  /// @throws rmm::out_of_range naming @p element_index and size() if it is not below size().
  void check_index(size_type element_index) const {
    RMM_EXPECTS(element_index < size(),
                "Attempt to access out of bounds element: index " + std::to_string(element_index) +
                    " is not below the size " + std::to_string(size()),
                rmm::out_of_range);
  }
};

}  // namespace rmm
