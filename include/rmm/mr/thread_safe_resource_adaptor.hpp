/**
 * @file thread_safe_resource_adaptor.hpp
 * @brief An adaptor that serialises every allocation and deallocation of its upstream with a
 * mutex, for upstreams that are not thread-safe.
 */
#pragma once

#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/thread_safe_resource_adaptor_impl.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <mutex>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that adapts an upstream resource to be thread safe.
 *
 * An instance of this resource can be constructed with an existing, upstream resource in order
 * to satisfy allocation requests. This adaptor wraps allocations and deallocations from the
 * upstream in a mutex lock: allocate, deallocate, allocate_sync and deallocate_sync of all
 * copies of one adaptor hold the same std::mutex for the duration of the upstream's call, so the
 * upstream never sees two calls at once. Nothing else of the upstream is protected: code that
 * uses the upstream directly (or through another adaptor) at the same time is not serialised
 * with this one.
 *
 * Every resource of this library is already thread-safe; this adaptor is for user-written or
 * third-party resources that are not. Cost: one uncontended lock and unlock per call; under
 * contention the upstream's calls run one at a time, including any synchronisation an upstream
 * does inside them (a deallocate_sync that waits for a stream holds the lock while it waits).
 * The upstream must not call back into the same adaptor (the mutex is not recursive).
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and share the mutex; independently constructed
 * adaptors compare unequal and do not serialise with each other.
 */
class thread_safe_resource_adaptor
    : public cuda::mr::shared_resource<detail::thread_safe_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::thread_safe_resource_adaptor_impl>;

 public:
  using lock_t = std::lock_guard<std::mutex>;  ///< Type of lock used to synchronize access.

  /**
   * @brief Construct a new thread safe resource adaptor using @p upstream to satisfy allocation
   * requests.
   *
   * All allocations and frees are protected by a mutex lock.
   *
   * @param upstream The resource used for allocating/deallocating device memory; any
   * device-accessible resource, held by value. A resource_ref is held as a reference: its
   * resource must outlive the adaptor.
   */
  explicit thread_safe_resource_adaptor(
      cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
      : shared_base{cuda::std::in_place_type<detail::thread_safe_resource_adaptor_impl>,
                    std::move(upstream)} {}

  ~thread_safe_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   * @pre Not moved-from.
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return detail::shared_state<detail::thread_safe_resource_adaptor_impl>(
               static_cast<shared_base const&>(*this))
        .get_upstream_resource();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(thread_safe_resource_adaptor const&,
                           cuda::mr::device_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<thread_safe_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
