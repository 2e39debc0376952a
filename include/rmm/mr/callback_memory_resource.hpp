/**
 * @file callback_memory_resource.hpp
 * @brief A device memory resource that delegates to user-provided callbacks.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief Callback function type used by callback_memory_resource for allocation.
 *
 * `void* allocate_callback_t(std::size_t bytes, cuda_stream_view stream, void* arg)` returns a
 * pointer to an allocation of at least `bytes` bytes usable immediately on `stream`; `arg` is the
 * value given to the resource's constructor. A callback that cannot allocate should throw
 * (preferably rmm::out_of_memory or rmm::bad_alloc): whatever it returns, nullptr included, is
 * handed to the caller of allocate() unchanged.
 */
using allocate_callback_t = std::function<void*(std::size_t, cuda_stream_view, void*)>;

/**
 * @brief Callback function type used by callback_memory_resource for deallocation.
 *
 * `void deallocate_callback_t(void* ptr, std::size_t bytes, cuda_stream_view stream, void* arg)`
 * frees `ptr`; `bytes` equals the value passed to the allocate callback.
 */
using deallocate_callback_t = std::function<void(void*, std::size_t, cuda_stream_view, void*)>;

namespace detail {

/// @brief Shared state of callback_memory_resource. Not for direct use.
class callback_memory_resource_impl : public stream_resource_base<callback_memory_resource_impl> {
 public:
  callback_memory_resource_impl(allocate_callback_t allocate_callback,
                                deallocate_callback_t deallocate_callback,
                                void* allocate_callback_arg,
                                void* deallocate_callback_arg)
      : allocate_callback_{std::move(allocate_callback)},
        deallocate_callback_{std::move(deallocate_callback)},
        allocate_callback_arg_{allocate_callback_arg},
        deallocate_callback_arg_{deallocate_callback_arg} {
    RMM_EXPECTS(static_cast<bool>(allocate_callback_),
                "callback_memory_resource: allocate_callback is empty");
    RMM_EXPECTS(static_cast<bool>(deallocate_callback_),
                "callback_memory_resource: deallocate_callback is empty");
  }

  // The callback's result is returned as is (as RMM does): a callback reports failure by
  // throwing, and a nullptr it returns reaches the caller unchanged.
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t /*alignment*/) {
    return allocate_callback_(bytes, cuda_stream_view{stream}, allocate_callback_arg_);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t /*alignment*/) noexcept {
    deallocate_callback_(ptr, bytes, cuda_stream_view{stream}, deallocate_callback_arg_);
  }

 private:
  allocate_callback_t allocate_callback_;
  deallocate_callback_t deallocate_callback_;
  void* allocate_callback_arg_;
  void* deallocate_callback_arg_;
};

}  // namespace detail

/**
 * @brief A device memory resource that uses the provided callbacks for memory allocation and
 * deallocation.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and use the same callbacks.
 *
 * allocate() returns exactly what the allocate callback returns and propagates what it throws;
 * it checks nothing (as in RMM). A callback that fails must therefore throw (for example
 * rmm::out_of_memory): a nullptr it returns for a non-zero size is not turned into an exception.
 * The alignment argument of allocate() is not passed to the callbacks: they must return memory
 * aligned as their users need (256 bytes for device memory, like cudaMalloc).
 *
 * Thread-safety: as thread-safe as the callbacks are; the resource adds no shared mutable state.
 */
class callback_memory_resource
    : public cuda::mr::shared_resource<detail::callback_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::callback_memory_resource_impl>;

 public:
  /**
   * @brief Constructs a callback memory resource.
   * @param allocate_callback The callback used for allocation.
   * @param deallocate_callback The callback used for deallocation.
   * @param allocate_callback_arg Context passed to every call of @p allocate_callback; the caller
   * keeps the pointed-to data alive for the lifetime of the resource.
   * @param deallocate_callback_arg Context passed to every call of @p deallocate_callback; as
   * above.
   * @throws rmm::logic_error if either callback is empty.
   */
  callback_memory_resource(allocate_callback_t allocate_callback,
                           deallocate_callback_t deallocate_callback,
                           void* allocate_callback_arg   = nullptr,
                           void* deallocate_callback_arg = nullptr)
      : shared_base{cuda::std::in_place_type<detail::callback_memory_resource_impl>,
                    std::move(allocate_callback),
                    std::move(deallocate_callback),
                    allocate_callback_arg,
                    deallocate_callback_arg} {}
  callback_memory_resource()  = delete;
  ~callback_memory_resource() = default;

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(callback_memory_resource const&, cuda::mr::device_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<callback_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
