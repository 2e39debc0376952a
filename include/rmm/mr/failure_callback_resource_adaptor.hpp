/**
 * @file failure_callback_resource_adaptor.hpp
 * @brief An adaptor that calls a callback when an allocation from its upstream throws, and lets
 * the callback decide between retrying and rethrowing.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/failure_callback_resource_adaptor_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/failure_callback_t.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief A device memory resource that calls a callback function when allocations throw a
 * specified exception type.
 *
 * Each allocation goes to the upstream. When the upstream throws an exception of type
 * `ExceptionType` (or derived from it), the adaptor calls `callback(bytes, callback_arg)`: if it
 * returns true the allocation is tried again (and the callback called again on the next failure),
 * if it returns false the caught exception is rethrown unchanged. Other exceptions propagate
 * without calling the callback. Deallocation goes straight to the upstream.
 *
 * A callback that frees memory (drops a cache, spills to the host, synchronises to let
 * stream-ordered frees complete) and then returns true turns an out-of-memory error into a
 * successful, later allocation. To avoid an infinite loop, a callback must return false at some
 * point, for example after one retry:
 *
 * @code{.cpp}
 * bool retry_once(std::size_t bytes, void* arg) {
 *   bool& retried = *static_cast<bool*>(arg);
 *   if (!retried) {
 *     retried = true;
 *     return true;   // first failure: try again
 *   }
 *   return false;    // second failure: let rmm::out_of_memory propagate
 * }
 *
 * bool retried{false};
 * rmm::mr::failure_callback_resource_adaptor<> mr{
 *     rmm::mr::get_current_device_resource_ref(), retry_once, &retried};
 * @endcode
 *
 * Cost: none on success beyond the upstream's (a try block); the callback runs only on failure.
 *
 * Thread-safety: as thread-safe as the upstream. The adaptor takes no lock, so the callback may
 * run concurrently in several threads whose allocations fail at the same time, and must then
 * protect its own state (the example above is for one thread).
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal, independently constructed adaptors do not.
 *
 * @tparam ExceptionType The type of exception that this adaptor responds to: rmm::out_of_memory
 * (memory exhausted) by default; rmm::bad_alloc or std::bad_alloc to respond to every allocation
 * failure.
 */
template <typename ExceptionType = rmm::out_of_memory>
class failure_callback_resource_adaptor
    : public cuda::mr::shared_resource<
          detail::failure_callback_resource_adaptor_impl<ExceptionType>> {
  using impl_t      = detail::failure_callback_resource_adaptor_impl<ExceptionType>;
  using shared_base = cuda::mr::shared_resource<impl_t>;

 public:
  using exception_type = ExceptionType;  ///< The type of exception this object catches/throws.

  /**
   * @brief Construct a new failure_callback_resource_adaptor using @p upstream to satisfy
   * allocation requests.
   *
   * @param upstream The resource used for allocating/deallocating device memory; any
   * device-accessible resource, held by value (resources of this library share their state, so
   * the adaptor and the caller's copy use the same pool). A resource_ref is held as a reference:
   * its resource must outlive the adaptor.
   * @param callback Callback function, see failure_callback_t.
   * @param callback_arg Extra argument passed to @p callback; the caller keeps what it points to
   * alive for the lifetime of the adaptor.
   * @throws rmm::logic_error if @p callback is empty.
   */
  failure_callback_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                    failure_callback_t callback,
                                    void* callback_arg)
      : shared_base{cuda::std::in_place_type<impl_t>,
                    std::move(upstream),
                    std::move(callback),
                    callback_arg} {}

  ~failure_callback_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   * @pre Not moved-from.
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return detail::shared_state<impl_t>(static_cast<shared_base const&>(*this))
        .get_upstream_resource();
  }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(failure_callback_resource_adaptor const&,
                           cuda::mr::device_accessible) noexcept {}
};

static_assert(
    cuda::mr::resource_with<failure_callback_resource_adaptor<>, cuda::mr::device_accessible>);

}  // namespace rmm::mr
