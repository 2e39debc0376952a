/**
 * @file statistics_resource_adaptor.hpp
 * @brief An adaptor that counts the bytes and allocations passing through it to its upstream.
 */
#pragma once

#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/statistics_resource_adaptor_impl.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that uses an upstream resource to allocate memory and tracks allocation
 * statistics (current, peak, total bytes and allocation counts).
 *
 * Every allocation and deallocation is forwarded unchanged to the upstream (same stream, size and
 * alignment) and then counted. Allocations made before the adaptor existed, or through the
 * upstream directly, are not counted; freeing them through the adaptor subtracts from the
 * counters anyway (the current values may then go negative).
 *
 * Counters nest: push_counters() starts a new level whose counters begin at zero, so that the
 * statistics of a code block can be read; pop_counters() ends it and adds what it counted to the
 * enclosing level, so the statistics of a block include those of every block nested in it.
 *
 * Thread-safety: every member may be called concurrently. The counters are guarded by one
 * std::shared_mutex: each allocation and deallocation takes it exclusively, the getters share it.
 * Intended for debugging and measuring; the lock is a point of contention under many threads.
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and update the same counters. To stack one
 * statistics adaptor over another, pass the inner one wrapped in an
 * `cuda::mr::any_resource<cuda::mr::device_accessible>`: passing it directly copies it instead.
 */
class statistics_resource_adaptor
    : public cuda::mr::shared_resource<detail::statistics_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::statistics_resource_adaptor_impl>;

 public:
  /// @brief Counter type tracking current, peak, and total bytes or allocations.
  using counter = detail::statistics_resource_adaptor_impl::counter;
  /// @brief Shared-reader lock type used to protect the counter stack.
  using read_lock_t = detail::statistics_resource_adaptor_impl::read_lock_t;
  /// @brief Exclusive-writer lock type used to protect the counter stack.
  using write_lock_t = detail::statistics_resource_adaptor_impl::write_lock_t;

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(statistics_resource_adaptor const&,
                           cuda::mr::device_accessible) noexcept {}

  /**
   * @brief Construct a statistics resource adaptor using @p upstream to satisfy allocation
   * requests.
   * @param upstream The resource used for allocating/deallocating device memory (held by value:
   * a resource with shared state keeps that state alive).
   */
  explicit statistics_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
      : shared_base{cuda::std::in_place_type<detail::statistics_resource_adaptor_impl>,
                    std::move(upstream)} {}

  ~statistics_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Returns a counter struct for bytes allocated since construction (or last push): the
   * current, peak, and total number of bytes allocated through this adaptor.
   *
   * Thread-safe (shared lock).
   * @return counter struct containing bytes count
   */
  [[nodiscard]] counter get_bytes_counter() const noexcept { return state().get_bytes_counter(); }

  /**
   * @brief Returns a counter struct for allocations since construction (or last push): the
   * current, peak, and total number of allocations made through this adaptor.
   *
   * Thread-safe (shared lock).
   * @return counter struct containing allocations count
   */
  [[nodiscard]] counter get_allocations_counter() const noexcept {
    return state().get_allocations_counter();
  }

  /**
   * @brief Push a pair of zero counters on the stack, which becomes the new counters returned by
   * get_bytes_counter() and get_allocations_counter().
   *
   * Thread-safe (exclusive lock). The stack is shared by all threads and all copies.
   * @return top pair of counters <bytes, allocations> from the stack _before_ the push
   */
  std::pair<counter, counter> push_counters() { return state().push_counters(); }

  /**
   * @brief Pop a pair of counters from the stack, adding what they counted to the pair below
   * (see counter::add_counters_from_tracked_sub_block).
   *
   * Thread-safe (exclusive lock).
   * @throws std::out_of_range (as rmm::out_of_range) if the counter stack has fewer than two
   * entries, i.e. without a matching push_counters().
   * @return top pair of counters <bytes, allocations> from the stack _before_ the pop
   */
  std::pair<counter, counter> pop_counters() { return state().pop_counters(); }

 private:
  [[nodiscard]] detail::statistics_resource_adaptor_impl& state() const noexcept {
    return detail::shared_state<detail::statistics_resource_adaptor_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<statistics_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
