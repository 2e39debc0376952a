/**
 * @file tracking_resource_adaptor.hpp
 * @brief An adaptor that records every live allocation made through it (size, optional stack).
 */
#pragma once

#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/tracking_resource_adaptor_impl.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <map>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that uses an upstream resource to allocate memory and tracks allocations.
 *
 * Tracks every allocation (size, pointer, and optionally stack trace) until it is freed, so that
 * leaks can be listed (get_outstanding_allocations_str(), log_outstanding_allocations()).
 * Allocations and deallocations are forwarded to the upstream with the caller's stream, size and
 * alignment. Zero-byte allocations are not tracked.
 *
 * Freeing a pointer the adaptor does not track logs an error (level error, through rmm::log) and
 * still forwards the free to the upstream; get_allocated_bytes() is unchanged by it. Freeing a
 * tracked pointer with a size different from its allocation's logs an error and gives the
 * allocated size to the upstream.
 *
 * Thread-safety: allocation, deallocation and the getters may be called concurrently (one
 * std::shared_mutex guards the map; each allocation and deallocation takes it exclusively),
 * except get_outstanding_allocations(), whose reference is only safe to read while no thread
 * allocates or frees through the adaptor. Intended as a debug adaptor; capturing stacks makes
 * every allocation much slower (a backtrace() call, a few microseconds).
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and share one map.
 */
class tracking_resource_adaptor
    : public cuda::mr::shared_resource<detail::tracking_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::tracking_resource_adaptor_impl>;

 public:
  /// @brief Allocation info type (pointer, size, optional stack trace).
  using allocation_info = detail::tracking_resource_adaptor_impl::allocation_info;
  /// @brief Shared-reader lock type used to protect the allocations map.
  using read_lock_t = detail::tracking_resource_adaptor_impl::read_lock_t;
  /// @brief Exclusive-writer lock type used to protect the allocations map.
  using write_lock_t = detail::tracking_resource_adaptor_impl::write_lock_t;

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(tracking_resource_adaptor const&, cuda::mr::device_accessible) noexcept {
  }

  /**
   * @brief Construct a tracking resource adaptor using @p upstream to satisfy allocation
   * requests.
   *
   * @param upstream The resource used for allocating/deallocating device memory.
   * @param capture_stacks If true, capture stacks for each allocation (with backtrace() from
   * <execinfo.h>; where that does not exist the traces are empty).
   */
  tracking_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                            bool capture_stacks = false)
      : shared_base{cuda::std::in_place_type<detail::tracking_resource_adaptor_impl>,
                    std::move(upstream),
                    capture_stacks} {}

  ~tracking_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Get the outstanding allocations map.
   *
   * @warning The returned reference is a view of internal mutable state. It is only safe to use
   * when the caller ensures no concurrent allocations or deallocations are made through this
   * tracking resource adaptor (or its copies).
   * @return map of outstanding allocations (pointer -> allocation_info)
   */
  [[nodiscard]] std::map<void*, allocation_info> const& get_outstanding_allocations()
      const noexcept {
    return state().get_outstanding_allocations();
  }

  /**
   * @brief Query the number of bytes currently allocated (the sum of the tracked sizes).
   *
   * Thread-safe (atomic).
   * @return std::size_t number of bytes currently allocated
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept {
    return state().get_allocated_bytes();
  }

  /**
   * @brief Gets a string describing all outstanding allocations (pointer, size, optional stack).
   *
   * One entry per allocation in address order: `<pointer>: <size> B`, followed, when stacks are
   * captured, by ` : callstack:` and one line per frame; each entry ends with a newline.
   * Thread-safe (shared lock).
   * @return std::string describing outstanding allocations
   */
  [[nodiscard]] std::string get_outstanding_allocations_str() const {
    return state().get_outstanding_allocations_str();
  }

  /**
   * @brief Log any outstanding allocations at level debug through rmm::log ("Outstanding
   * Allocations: " followed by get_outstanding_allocations_str()). Does nothing unless the log
   * level is debug or lower (rmm::set_log_level, RMM_LOG_LEVEL).
   */
  void log_outstanding_allocations() const { state().log_outstanding_allocations(); }

 private:
  [[nodiscard]] detail::tracking_resource_adaptor_impl& state() const noexcept {
    return detail::shared_state<detail::tracking_resource_adaptor_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<tracking_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
