/**
 * @file statistics_resource_adaptor_impl.hpp
 * @brief Shared state of statistics_resource_adaptor: the upstream and a stack of counter pairs.
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/// @brief Shared state of statistics_resource_adaptor. Not for direct use.
class statistics_resource_adaptor_impl
    : public stream_resource_base<statistics_resource_adaptor_impl> {
  using upstream_t = cuda::mr::any_resource<cuda::mr::device_accessible>;

 public:
  /// @brief Shared-reader lock type used to protect the counter stack.
  using read_lock_t = std::shared_lock<std::shared_mutex>;
  /// @brief Exclusive-writer lock type used to protect the counter stack.
  using write_lock_t = std::unique_lock<std::shared_mutex>;

  /**
   * @brief Utility struct for counting the current, peak, and total value of a number.
   *
   * Values are signed so that a free of memory allocated before the counters were pushed (which
   * subtracts from a level that never added it) shows as a negative current value instead of
   * wrapping around.
   */
  struct counter {
    std::int64_t value{0};  ///< Current value
    std::int64_t peak{0};   ///< Max value of `value`
    std::int64_t total{0};  ///< Sum of all added values

    /**
     * @brief Add @p val to the current value and update the peak value if necessary.
     * @param val Value to add
     * @return Reference to this object
     */
    counter& operator+=(std::int64_t val) {
      value += val;
      total += val;
      peak = std::max(value, peak);
      return *this;
    }

    /**
     * @brief Subtract @p val from the current value (the peak and the total are unchanged).
     * @param val Value to subtract
     * @return Reference to this object
     */
    counter& operator-=(std::int64_t val) {
      value -= val;
      return *this;
    }

    /**
     * @brief Add the counts of @p val, which tracked a code block nested inside the block this
     * counter tracks, to this counter.
     *
     * Nested statistics cascade: what the inner block allocated counts for the outer block too.
     * The inner peak was measured from zero when the inner block began, so in the outer block's
     * terms it is the outer value at that time plus the inner peak: the new peak is
     * `max(value + val.peak, peak)`.
     * @param val Counter of the nested block
     */
    void add_counters_from_tracked_sub_block(counter const& val) {
      peak = std::max(value + val.peak, peak);
      value += val.value;
      total += val.total;
    }
  };

  explicit statistics_resource_adaptor_impl(upstream_t upstream)
      : upstream_{std::move(upstream)}, stack_(1) {}

  statistics_resource_adaptor_impl(statistics_resource_adaptor_impl const&)            = delete;
  statistics_resource_adaptor_impl& operator=(statistics_resource_adaptor_impl const&) = delete;
  ~statistics_resource_adaptor_impl()                                                  = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    void* ptr = upstream_.allocate(stream, bytes, alignment);
    record_allocation(bytes);
    return ptr;
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    upstream_.deallocate(stream, ptr, bytes, alignment);
    record_deallocation(bytes);
  }

  // The synchronous forms go to the upstream's synchronous forms (rather than through the default
  // stream as stream_resource_base does): the adaptor keeps whatever "synchronous" means to the
  // upstream, and an upstream of host memory is reached without a CUDA call.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    record_allocation(bytes);
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    upstream_.deallocate_sync(ptr, bytes, alignment);
    record_deallocation(bytes);
  }

  friend statistics_resource_adaptor_impl* get_property(
      statistics_resource_adaptor_impl const& self,
      state_of<statistics_resource_adaptor_impl>) noexcept {
    return const_cast<statistics_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  [[nodiscard]] counter get_bytes_counter() const noexcept {
    read_lock_t lock(mutex_);
    return stack_.back().first;
  }

  [[nodiscard]] counter get_allocations_counter() const noexcept {
    read_lock_t lock(mutex_);
    return stack_.back().second;
  }

  std::pair<counter, counter> push_counters() {
    write_lock_t lock(mutex_);
    auto const top = stack_.back();
    stack_.emplace_back();
    return top;
  }

  std::pair<counter, counter> pop_counters() {
    write_lock_t lock(mutex_);
    if (stack_.size() < 2) {  // RMM's text first, as RMM throws it (without a location)
      throw rmm::out_of_range{
          "cannot pop the last counter pair: statistics_resource_adaptor::pop_counters() was "
          "called without a matching push_counters()"};
    }
    auto const top = stack_.back();
    stack_.pop_back();
    stack_.back().first.add_counters_from_tracked_sub_block(top.first);
    stack_.back().second.add_counters_from_tracked_sub_block(top.second);
    return top;
  }

 private:
  void record_allocation(std::size_t bytes) noexcept {
    write_lock_t lock(mutex_);
    stack_.back().first += static_cast<std::int64_t>(bytes);
    stack_.back().second += 1;
  }

  void record_deallocation(std::size_t bytes) noexcept {
    write_lock_t lock(mutex_);
    stack_.back().first -= static_cast<std::int64_t>(bytes);
    stack_.back().second -= 1;
  }

  upstream_t mutable upstream_;
  // Pairs <bytes, allocations>, innermost level last. Invariant: never empty.
  std::vector<std::pair<counter, counter>> stack_;
  std::shared_mutex mutable mutex_;
};

}  // namespace rmm::mr::detail
