/**
 * @file simulated_memory_resource.hpp
 * @brief A device-memory resource that hands out addresses only, with a capacity: for replaying
 * allocation logs through the pooling resources on a machine without a GPU.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace rmm::mr {

/**
 * @brief A resource that hands out addresses with no memory behind them, up to a capacity.
 *
 * It models a device with @p capacity bytes: an allocation that would take the bytes outstanding
 * beyond the capacity throws rmm::out_of_memory, as the device would. The addresses are distinct,
 * aligned and non-null, taken from a range of the address space that holds no memory (they start
 * at `base_address`, and the range restarts there whenever nothing is outstanding): they must
 * never be dereferenced, on the host or on a device. It makes no CUDA call, so that a resource
 * that only does address arithmetic on its upstream's memory (a pool, a free list) can run over
 * it without a GPU, for instance to replay an allocation log and measure how much memory the
 * resource would reserve (`rmm-replay --simulated`, see docs/replay.md).
 *
 * It declares `cuda::mr::device_accessible`, like the real device upstreams, so that it can be
 * passed wherever they can (as `cuda::mr::any_resource<cuda::mr::device_accessible>`). Whether a
 * resource over it works without a GPU depends on whether that resource itself makes CUDA calls:
 * see docs/replay.md.
 *
 * Statistics: the bytes outstanding, their peak, and frees that match no allocation (a free of an
 * address it did not hand out, or with another size, is counted and otherwise ignored).
 *
 * Thread-safety: every member may be called concurrently (one mutex per resource). Copies share
 * the state (capacity, addresses, statistics) and compare equal; instances made separately compare
 * unequal.
 */
class simulated_memory_resource {
 public:
  /// @brief The first address handed out (1 TiB, an address no host or device memory uses here).
  static constexpr std::uintptr_t base_address = std::uintptr_t{1} << 40U;

  /// @brief Snapshot of the counters; see statistics().
  struct counters {
    std::size_t capacity{};            ///< bytes that may be outstanding at once
    std::size_t current_bytes{};       ///< bytes handed out and not yet freed
    std::size_t peak_bytes{};          ///< the most bytes outstanding at any time
    std::size_t allocations{};         ///< allocations that succeeded
    std::size_t failed_allocations{};  ///< allocations refused with rmm::out_of_memory
    std::size_t mismatched_frees{};    ///< frees of unknown addresses or with a wrong size
  };

  /**
   * @brief A resource that lets at most @p capacity bytes be outstanding.
   * @param capacity The capacity in bytes (each allocation counts its requested size).
   */
  explicit simulated_memory_resource(std::size_t capacity)
      : state_{std::make_shared<state>(capacity)} {}

  /**
   * @brief Hands out an address for @p bytes bytes aligned to @p alignment. The stream is ignored.
   * @return nullptr for 0 bytes, else a distinct address that must never be dereferenced.
   * @throws rmm::logic_error if @p alignment is not a power of two.
   * @throws rmm::out_of_memory if the bytes outstanding would exceed the capacity; its report()
   * gives the request, the bytes outstanding (used), the capacity left (free, and the largest
   * free block: no fragmentation here) and the capacity (maximum), and no device.
   */
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }

  /// @brief Takes back @p ptr, which allocate() returned for @p bytes. The stream is ignored.
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  /// @brief Like allocate(), without a stream. @copydetails allocate
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    RMM_EXPECTS(rmm::is_pow2(alignment),
                "simulated_memory_resource: alignment " + std::to_string(alignment) +
                    " is not a power of two");
    if (bytes == 0) {
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    counters& c = state_->stats;
    if (bytes > c.capacity - c.current_bytes) {
      ++c.failed_allocations;
      // No device: this resource makes no CUDA call, not even for its report.
      out_of_memory_report report;
      report.resource        = "simulated_memory_resource";
      report.requested_bytes = bytes;
      report.reason          = std::to_string(c.current_bytes) + " of the capacity of " +
                      std::to_string(c.capacity) + " bytes are in use";
      report.used_bytes         = c.current_bytes;
      report.free_bytes         = c.capacity - c.current_bytes;
      report.largest_free_block = c.capacity - c.current_bytes;  // addresses: no fragmentation
      report.maximum_bytes      = c.capacity;
      throw rmm::out_of_memory{std::move(report)};
    }
    std::uintptr_t const address =
        rmm::align_up(state_->cursor, std::max(alignment, CUDA_ALLOCATION_ALIGNMENT));
    state_->cursor = address + rmm::align_up(bytes, CUDA_ALLOCATION_ALIGNMENT);
    state_->live.emplace(address, bytes);
    c.current_bytes += bytes;
    c.peak_bytes = std::max(c.peak_bytes, c.current_bytes);
    ++c.allocations;
    return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
  }

  /// @brief Like deallocate(), without a stream.
  void deallocate_sync(
      void* ptr,
      std::size_t bytes,
      [[maybe_unused]] std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr == nullptr) {
      return;
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto const found = state_->live.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (found == state_->live.end() || found->second != bytes) {
      ++state_->stats.mismatched_frees;
      return;
    }
    state_->stats.current_bytes -= bytes;
    state_->live.erase(found);
    if (state_->live.empty()) {
      state_->cursor = base_address;
    }
  }

  /// @brief The counters at this moment.
  [[nodiscard]] counters statistics() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->stats;
  }

  /// @brief The capacity in bytes.
  [[nodiscard]] std::size_t capacity() const noexcept { return state_->stats.capacity; }

  /// @brief Bytes handed out and not yet freed.
  [[nodiscard]] std::size_t current_bytes() const { return statistics().current_bytes; }

  /// @brief The most bytes outstanding at any time.
  [[nodiscard]] std::size_t peak_bytes() const { return statistics().peak_bytes; }

  /// @brief Copies compare equal (they share the state). @return whether they share it
  bool operator==(simulated_memory_resource const& other) const noexcept {
    return state_ == other.state_;
  }
  /// @brief The negation of operator==. @return whether the states differ
  bool operator!=(simulated_memory_resource const& other) const noexcept {
    return !(*this == other);
  }

  /**
   * @brief Enables the cuda::mr::device_accessible property: it stands for device memory.
   */
  friend void get_property(simulated_memory_resource const&, cuda::mr::device_accessible) noexcept {
  }

 private:
  struct state {
    explicit state(std::size_t capacity) { stats.capacity = capacity; }
    std::mutex mutex;
    counters stats;
    std::uintptr_t cursor{base_address};
    std::unordered_map<std::uintptr_t, std::size_t> live;
  };
  std::shared_ptr<state> state_;
};

static_assert(cuda::mr::resource_with<simulated_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
