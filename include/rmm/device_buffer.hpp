/**
 * @file device_buffer.hpp
 * @brief rmm::device_buffer: an owning, untyped, uninitialised, stream-ordered device allocation.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/container_device_guard.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace rmm {

/**
 * @brief RAII owner of untyped, *uninitialised* device memory, allocated and freed in stream
 * order from a memory resource.
 *
 * The buffer owns its resource as a `cuda::mr::any_resource<cuda::mr::device_accessible>`: a
 * resource passed by value (a pool, an adaptor, any resource object) is copied into the buffer,
 * and since this library's stateful resources are shared handles, the copy keeps the resource's
 * state alive for as long as the buffer lives, even after the caller's own handle is gone. A
 * `device_async_resource_ref` passed in (the default, `mr::get_current_device_resource_ref()`, is
 * one) is stored as a reference: the referenced resource must then outlive the buffer, as in RMM.
 *
 * Every allocation is made with `alignment()` bytes of alignment (at least
 * `rmm::CUDA_ALLOCATION_ALIGNMENT` unless a smaller power of two was asked for explicitly) and is
 * freed with exactly the size and alignment it was allocated with, on `stream()`, with the device
 * that was current at construction made current for the call.
 *
 * Reading the contents before writing them is undefined behaviour: nothing is initialised.
 *
 * Thread-safety: not thread-safe. A buffer may be used by one thread at a time; distinct buffers
 * may be used concurrently (their resources' own thread-safety applies).
 *
 * @code{.cpp}
 * rmm::cuda_stream stream;
 * rmm::device_buffer buf(100, stream);           // 100 bytes from the current device resource
 * rmm::device_buffer copy(buf, stream);          // deep copy on `stream`
 * rmm::device_buffer moved(std::move(buf));      // `buf` is now empty
 * moved.resize(200, stream);                     // reallocates exactly 200 bytes and copies
 * @endcode
 */
class device_buffer {
 public:
  /// Copying without a stream is not allowed: the copy would have no stream to run on. Use the
  /// copy constructor that takes a stream.
  device_buffer(device_buffer const& other) = delete;
  /// Copy assignment is deleted for the same reason as the copy constructor.
  device_buffer& operator=(device_buffer const& other) = delete;

  /**
   * @brief Constructs an empty buffer (no allocation) that uses the current device resource.
   * @throws rmm::cuda_error if the current device cannot be determined.
   */
  device_buffer() : _mr{mr::get_current_device_resource_ref()} {}

  /**
   * @brief Allocates @p size uninitialised bytes on @p stream from @p mr, aligned to at least
   * `rmm::CUDA_ALLOCATION_ALIGNMENT`. A size of 0 allocates nothing (`data() == nullptr`).
   *
   * @param size Number of bytes.
   * @param stream Stream on which the memory is allocated (and later freed, see set_stream()).
   * @param mr The resource, owned by the buffer (see the class description).
   * @throws rmm::bad_alloc (or rmm::out_of_memory) if the allocation fails.
   */
  explicit device_buffer(std::size_t size,
                         cuda_stream_view stream,
                         cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                             mr::get_current_device_resource_ref())
      : device_buffer{size, CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)} {}

  /**
   * @brief Allocates @p size uninitialised bytes on @p stream from @p mr, aligned to at least
   * @p alignment bytes.
   *
   * @param size Number of bytes.
   * @param alignment Required alignment; a power of two. Kept as alignment() and used for every
   * later allocation and deallocation of this buffer.
   * @param stream Stream on which the memory is allocated.
   * @param mr The resource, owned by the buffer.
   * @throws rmm::invalid_argument if @p alignment is not a power of two (the message names it).
   * @throws rmm::bad_alloc if the resource cannot allocate with that alignment, or at all.
   */
  explicit device_buffer(std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                             mr::get_current_device_resource_ref())
      : _alignment{checked_alignment(alignment)}, _stream{stream}, _mr{std::move(mr)} {
    allocate(size);
  }

  /**
   * @brief Allocates @p size bytes and copies them from @p source_data (host or device memory)
   * with `cudaMemcpyAsync` on @p stream, aligned to at least `rmm::CUDA_ALLOCATION_ALIGNMENT`.
   *
   * Does not synchronise @p stream: @p source_data must stay valid until the copy has run.
   *
   * @throws rmm::logic_error if @p source_data is null and @p size is not 0.
   * @throws rmm::bad_alloc if the allocation fails.
   * @throws rmm::cuda_error if the copy cannot be enqueued (the allocation is then freed).
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                    mr::get_current_device_resource_ref())
      : device_buffer{source_data, size, CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)} {}

  /**
   * @brief Like device_buffer(void const*, std::size_t, cuda_stream_view, ...), with an explicit
   * @p alignment (a power of two).
   *
   * @throws rmm::invalid_argument if @p alignment is not a power of two.
   * @throws rmm::logic_error if @p source_data is null and @p size is not 0.
   * @throws rmm::bad_alloc if the allocation fails.
   * @throws rmm::cuda_error if the copy cannot be enqueued (the allocation is then freed).
   */
  explicit device_buffer(void const* source_data,
                         std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                             mr::get_current_device_resource_ref())
      // Delegation makes the object complete before the copy: if the copy throws, the destructor
      // frees the allocation.
      : device_buffer{checked_source(source_data, size), alignment, stream, std::move(mr)} {
    if (size > 0) {
      RMM_CUDA_TRY(cudaMemcpyAsync(_data, source_data, size, cudaMemcpyDefault, _stream.value()));
    }
  }

  /**
   * @brief Deep copy of @p other's first `other.size()` bytes into a new allocation of exactly
   * that size (so `capacity() == size()`), with `other.alignment()`, made and copied on
   * @p stream from @p mr.
   *
   * Does not synchronise @p stream: @p other must not be modified or freed before the copy runs.
   *
   * @throws rmm::bad_alloc if the allocation fails.
   * @throws rmm::cuda_error if the copy cannot be enqueued.
   */
  device_buffer(device_buffer const& other,
                cuda_stream_view stream,
                cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                    mr::get_current_device_resource_ref())
      : device_buffer{other.data(), other.size(), other.alignment(), stream, std::move(mr)} {}

  /**
   * @brief Takes over @p other's allocation, stream, resource and device.
   *
   * Afterwards @p other is a valid, empty buffer: `data() == nullptr`, `size() == capacity() ==
   * 0`, its stream is the default stream (as in RMM) and it still holds (a copy of) its resource,
   * so that it can be reused.
   */
  device_buffer(device_buffer&& other) noexcept
      : _data{std::exchange(other._data, nullptr)},
        _size{std::exchange(other._size, 0)},
        _capacity{std::exchange(other._capacity, 0)},
        _alignment{other._alignment},
        _stream{std::exchange(other._stream, cuda_stream_view{})},
        _mr{other._mr},
        _device{std::exchange(other._device, cuda_device_id{-1})} {}

  /**
   * @brief Frees this buffer's allocation on stream() with its own resource, then takes over
   * @p other's allocation, stream, resource and device; @p other is left empty as after the move
   * constructor. Self-assignment does nothing.
   * @return `*this`.
   */
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (&other != this) {
      deallocate_noexcept();
      _data      = std::exchange(other._data, nullptr);
      _size      = std::exchange(other._size, 0);
      _capacity  = std::exchange(other._capacity, 0);
      _alignment = other._alignment;
      _stream    = std::exchange(other._stream, cuda_stream_view{});
      _mr        = other._mr;
      _device    = std::exchange(other._device, cuda_device_id{-1});
    }
    return *this;
  }

  /// @brief Frees the allocation (if any) on stream(), with the size and alignment it was
  /// allocated with, on the device that was current at construction.
  ~device_buffer() noexcept { deallocate_noexcept(); }

  /**
   * @brief Makes the capacity at least @p new_capacity bytes; `size()` is unchanged.
   *
   * If @p new_capacity is larger than capacity(), allocates exactly @p new_capacity bytes on
   * @p stream, copies the first size() bytes there on @p stream and frees the old allocation on
   * @p stream; otherwise does nothing. In both cases @p stream becomes stream(). Bytes past size()
   * are uninitialised. Does not synchronise.
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails. On either
   * the buffer is unchanged (apart from its stream).
   */
  void reserve(std::size_t new_capacity, cuda_stream_view stream) {
    set_stream(stream);
    if (new_capacity > capacity()) {
      reallocate(new_capacity);
    }
  }

  /**
   * @brief Sets size() to @p new_size.
   *
   * If @p new_size is at most capacity(), only the size changes (no allocation, no copy);
   * otherwise exactly @p new_size bytes are allocated on @p stream, the first size() bytes are
   * copied there and the old allocation is freed, all on @p stream. Bytes past the old size are
   * uninitialised. @p stream becomes stream(). The invariant `size() <= capacity()` holds. Does
   * not synchronise.
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails. On either
   * the buffer is unchanged (apart from its stream).
   */
  void resize(std::size_t new_size, cuda_stream_view stream) {
    set_stream(stream);
    if (new_size > capacity()) {
      reallocate(new_size);
    }
    _size = new_size;
  }

  /**
   * @brief Reallocates to make capacity() equal to size(), copying the contents, all on
   * @p stream; does nothing if they are already equal. A size of 0 frees the allocation.
   * @p stream becomes stream(). Does not synchronise.
   *
   * @throws rmm::bad_alloc if the allocation fails; rmm::cuda_error if the copy fails.
   */
  void shrink_to_fit(cuda_stream_view stream) {
    set_stream(stream);
    if (size() != capacity()) {
      reallocate(size());
    }
  }

  /// @brief Pointer to the device memory (null when capacity() is 0).
  [[nodiscard]] void const* data() const noexcept { return _data; }

  /// @brief Pointer to the device memory (null when capacity() is 0).
  void* data() noexcept { return _data; }

  /// @brief Number of bytes in use.
  [[nodiscard]] std::size_t size() const noexcept { return _size; }

  /// @brief size() as a signed number. @pre size() fits in `std::int64_t` (asserted).
  [[nodiscard]] std::int64_t ssize() const noexcept {
    assert(size() < static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()) &&
           "Size overflows signed integer");
    return static_cast<std::int64_t>(size());
  }

  /// @brief True if size() is 0 (an allocation may still be held: see capacity()).
  [[nodiscard]] bool is_empty() const noexcept { return 0 == size(); }

  /// @brief Number of bytes actually allocated; `size() <= capacity()`.
  [[nodiscard]] std::size_t capacity() const noexcept { return _capacity; }

  /// @brief The alignment in bytes with which the memory is allocated and freed.
  [[nodiscard]] std::size_t alignment() const noexcept { return _alignment; }

  /// @brief The stream most recently given to this buffer: the one the destructor frees on.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return _stream; }

  /**
   * @brief Sets the stream used for deallocation (by the destructor, or by a later call that
   * reallocates, which also replaces it with its own stream argument).
   */
  void set_stream(cuda_stream_view stream) noexcept { _stream = stream; }

  /// @brief Reference to the resource the buffer allocates from and frees to. Compares equal to
  /// the resource given at construction (or to the then-current device resource by default).
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept {
    return rmm::device_async_resource_ref{_mr};
  }

 private:
  void* _data{nullptr};                                     ///< The allocation, or null
  std::size_t _size{};                                      ///< Bytes in use
  std::size_t _capacity{};                                  ///< Bytes allocated
  std::size_t _alignment{CUDA_ALLOCATION_ALIGNMENT};        ///< Alignment of every allocation
  cuda_stream_view _stream{};                               ///< Stream for (de)allocation
  cuda::mr::any_resource<cuda::mr::device_accessible> _mr;  ///< The owned resource
  cuda_device_id _device{get_current_cuda_device()};        ///< Device of the allocation; -1 once
                                                            ///< moved from

  /// @brief @p alignment if it is a power of two. @throws rmm::invalid_argument otherwise.
  static std::size_t checked_alignment(std::size_t alignment) {
    RMM_EXPECTS(is_pow2(alignment),
                "device_buffer: alignment " + std::to_string(alignment) + " is not a power of two",
                rmm::invalid_argument);
    return alignment;
  }

  /// @brief @p size if @p source_data may be copied from. @throws rmm::logic_error otherwise.
  static std::size_t checked_source(void const* source_data, std::size_t size) {
    RMM_EXPECTS(
        source_data != nullptr || size == 0,
        "device_buffer: source_data is null but size is " + std::to_string(size) + " bytes");
    return size;
  }

  /// @brief Stream-ordered view of stream() for the resource calls.
  [[nodiscard]] cuda::stream_ref resource_stream() const noexcept {
    return cuda::stream_ref{_stream.value()};
  }

  /// @brief A buffer that was moved from has no device; it adopts the current one when it next
  /// allocates.
  void adopt_device_if_none() {
    if (_device.value() < 0) {
      _device = get_current_cuda_device();
    }
  }

  /// @brief Allocates @p bytes on stream() into an empty buffer; 0 bytes allocate nothing.
  void allocate(std::size_t bytes) {
    if (bytes > 0) {
      _data = _mr.allocate(resource_stream(), bytes, _alignment);
    }
    _size     = bytes;
    _capacity = bytes;
  }

  /**
   * @brief Replaces the allocation by one of exactly @p new_capacity bytes (none if 0), copying
   * the first min(size(), new_capacity) bytes, all on stream(). Strong guarantee: on an exception
   * the old allocation and size are untouched. size() is left to the caller.
   */
  void reallocate(std::size_t new_capacity) {
    adopt_device_if_none();
    cuda_set_device_raii const on_device{_device};
    auto const stream = resource_stream();
    void* const fresh = new_capacity > 0 ? _mr.allocate(stream, new_capacity, _alignment) : nullptr;
    auto const to_keep = _size < new_capacity ? _size : new_capacity;
    if (to_keep > 0) {
      try {
        RMM_CUDA_TRY(cudaMemcpyAsync(fresh, _data, to_keep, cudaMemcpyDefault, _stream.value()));
      } catch (...) {
        _mr.deallocate(stream, fresh, new_capacity, _alignment);
        throw;
      }
    }
    if (_capacity > 0) {
      _mr.deallocate(stream, _data, _capacity, _alignment);
    }
    _data     = fresh;
    _capacity = new_capacity;
    if (_size > new_capacity) {
      _size = new_capacity;
    }
  }

  /// @brief Frees the allocation (if any) on stream() and empties the buffer. Never throws.
  void deallocate_noexcept() noexcept {
    if (_capacity > 0) {
      detail::device_guard_noexcept const on_device{_device};
      _mr.deallocate(resource_stream(), _data, _capacity, _alignment);
    }
    _data     = nullptr;
    _size     = 0;
    _capacity = 0;
  }
};

}  // namespace rmm
