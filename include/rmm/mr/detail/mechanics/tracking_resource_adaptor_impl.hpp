/**
 * @file tracking_resource_adaptor_impl.hpp
 * @brief Shared state of tracking_resource_adaptor: the upstream and a map of live allocations.
 */
#pragma once

#include <rmm/detail/stack_trace.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/// @brief Shared state of tracking_resource_adaptor. Not for direct use.
class tracking_resource_adaptor_impl : public stream_resource_base<tracking_resource_adaptor_impl> {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "tracking_resource_adaptor";

 public:
  /// @brief Shared-reader lock type used to protect the allocations map.
  using read_lock_t = std::shared_lock<std::shared_mutex>;
  /// @brief Exclusive-writer lock type used to protect the allocations map.
  using write_lock_t = std::unique_lock<std::shared_mutex>;

  /**
   * @brief Information stored about an allocation: its size and, if the adaptor was constructed
   * to capture stacks, the stack of the call that allocated it. Move-only.
   */
  struct allocation_info {
    std::unique_ptr<rmm::detail::stack_trace> strace;  ///< Stack at allocation, or null
    std::size_t allocation_size;                       ///< Size of the allocation in bytes

    allocation_info() = delete;
    /**
     * @brief Records an allocation of @p size bytes, capturing the calling thread's stack if
     * @p capture_stack.
     */
    allocation_info(std::size_t size, bool capture_stack)
        : strace{capture_stack ? std::make_unique<rmm::detail::stack_trace>() : nullptr},
          allocation_size{size} {}
  };

  tracking_resource_adaptor_impl(upstream_t upstream, bool capture_stacks)
      : capture_stacks_{capture_stacks}, upstream_{std::move(upstream)} {}

  tracking_resource_adaptor_impl(tracking_resource_adaptor_impl const&)            = delete;
  tracking_resource_adaptor_impl& operator=(tracking_resource_adaptor_impl const&) = delete;
  ~tracking_resource_adaptor_impl()                                                = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    void* ptr = upstream_.allocate(stream, bytes, alignment);
    record_allocation(
        ptr, bytes, [&]() noexcept { upstream_.deallocate(stream, ptr, bytes, alignment); });
    return ptr;
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    bytes = record_deallocation(ptr, bytes);
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }

  // The synchronous forms go to the upstream's synchronous forms: see
  // statistics_resource_adaptor_impl for why.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    record_allocation(
        ptr, bytes, [&]() noexcept { upstream_.deallocate_sync(ptr, bytes, alignment); });
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    bytes = record_deallocation(ptr, bytes);
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }

  friend tracking_resource_adaptor_impl* get_property(
      tracking_resource_adaptor_impl const& self,
      state_of<tracking_resource_adaptor_impl>) noexcept {
    return const_cast<tracking_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  [[nodiscard]] std::map<void*, allocation_info> const& get_outstanding_allocations()
      const noexcept {
    return allocations_;
  }

  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept { return allocated_bytes_.load(); }

  [[nodiscard]] std::string get_outstanding_allocations_str() const {
    read_lock_t lock(mutex_);
    std::ostringstream oss;
    for (auto const& [ptr, info] : allocations_) {
      oss << ptr << ": " << info.allocation_size << " B";
      if (info.strace != nullptr) {
        oss << " : callstack:\n" << *info.strace;
      }
      oss << '\n';
    }
    return oss.str();
  }

  void log_outstanding_allocations() const {
    // Building the string takes the lock and walks the map: skip it when debug is filtered out.
    if (rmm::get_log_level() <= level_enum::debug) {
      rmm::log(level_enum::debug, "Outstanding Allocations: " + get_outstanding_allocations_str());
    }
  }

 private:
  // Zero-byte requests are not tracked (their pointer, often null, identifies nothing). A pointer
  // that is already tracked means that it was freed behind the adaptor's back and handed out
  // again: the new allocation goes back to the upstream and the error is reported.
  template <typename GiveBack>
  void record_allocation(void* ptr, std::size_t bytes, GiveBack give_back) {
    if (bytes == 0) {
      return;
    }
    bool inserted{false};
    try {
      allocation_info info{bytes, capture_stacks_};  // the stack is captured outside the lock
      write_lock_t lock(mutex_);
      inserted = allocations_.try_emplace(ptr, std::move(info)).second;
    } catch (...) {  // out of host memory for the record: the allocation fails as a whole
      give_back();
      throw;
    }
    if (!inserted) {
      give_back();
      std::ostringstream oss;  // RMM's text first, then ours
      oss << "pointer is already tracked: " << name << ": the upstream returned " << ptr << " ("
          << bytes << " bytes), which was freed without going through this adaptor";
      RMM_FAIL(oss.str());
    }
    allocated_bytes_.fetch_add(bytes);
  }

  // Returns the size to give back to the upstream: the tracked size where the caller's differs.
  std::size_t record_deallocation(void* ptr, std::size_t bytes) noexcept {
    if (bytes == 0) {
      return bytes;
    }
    std::size_t tracked{0};
    std::size_t outstanding{0};
    bool found{false};
    {
      write_lock_t lock(mutex_);
      auto const it = allocations_.find(ptr);
      if (it != allocations_.end()) {
        found   = true;
        tracked = it->second.allocation_size;
        allocations_.erase(it);
      }
      outstanding = allocations_.size();
    }
    // RMM's texts first (printf formats, as RMM logs them), then ours.
    if (!found) {
      report([&](std::ostream& os) {
        char text[160];
        std::snprintf(text,
                      sizeof(text),
                      "Deallocating a pointer that was not tracked. Ptr: %p [%zuB], Current Num. "
                      "Allocations: %zu",
                      ptr,
                      bytes,
                      outstanding);
        os << text << "; " << name << ": the free is passed to the upstream unchanged";
      });
      return bytes;
    }
    allocated_bytes_.fetch_sub(tracked);
    if (tracked != bytes) {
      report([&](std::ostream& os) {
        char text[96];
        std::snprintf(text,
                      sizeof(text),
                      "Alloc bytes (%zu) and Dealloc bytes (%zu) do not match",
                      tracked,
                      bytes);
        os << text << "; " << name << ": pointer " << ptr
           << ", the allocated size is given back to the upstream";
      });
    }
    return tracked;
  }

  // Logs an error from a noexcept path: failing to format it must not terminate the program.
  template <typename Write>
  static void report(Write write) noexcept {
    try {
      std::ostringstream oss;
      write(oss);
      rmm::log(level_enum::error, oss.str());
    } catch (...) {
    }
  }

  bool capture_stacks_;
  std::map<void*, allocation_info> allocations_;
  std::atomic<std::size_t> allocated_bytes_{0};
  std::shared_mutex mutable mutex_;
  upstream_t mutable upstream_;
};

}  // namespace rmm::mr::detail
