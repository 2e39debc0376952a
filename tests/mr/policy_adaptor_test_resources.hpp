// Test doubles for the policy adaptors' tests (failure_callback, aligned, prefetch, thread_safe),
// usable over any upstream, also host_backed_resource where there is no GPU:
//   failing_resource         fails the first k allocations with a chosen exception type, then
//                            those its rule picks (every k-th, seeded random, ...)
//   capacity_resource        throws rmm::out_of_memory beyond a capacity, like a full device
//   offset_resource          returns pointers a chosen multiple of 256 bytes past a 64 KiB
//                            boundary, so that an aligning adaptor must (or need not) pad
//   unsynchronized_resource  counts with plain integers and a plain map, and records how many
//                            calls were ever inside it at once: not thread-safe on purpose
// Each is copyable; copies share their state. They live in a named namespace: clang drops the
// hidden-friend get_property of a class with internal linkage (-Wunneeded-internal-declaration).
#pragma once

#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::test::policy_adaptor_fakes {

/// @brief An exception of type @p E with @p message where E takes one.
template <typename E>
E make_exception(std::string const& message) {
  if constexpr (std::is_constructible_v<E, std::string>) {
    return E{message};
  } else {
    return E{};
  }
}

/// Fails the first `failures` allocation requests (stream-ordered or synchronous) by throwing
/// @p Exception, then those for which the rule set with fail_when() returns true (none without
/// one), and forwards the others to the upstream. Records the size of every request and counts
/// the failures. Thread-safe: the rule is called under the resource's lock.
template <typename Exception = rmm::out_of_memory>
class failing_resource {
 public:
  failing_resource(any_device_resource upstream, int failures)
      : state_{std::make_shared<state>(std::move(upstream), failures)} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    maybe_fail(bytes);
    return state_->upstream.allocate(stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    state_->upstream.deallocate(stream, ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    maybe_fail(bytes);
    return state_->upstream.allocate_sync(bytes, alignment);
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    state_->upstream.deallocate_sync(ptr, bytes, alignment);
  }

  /// The sizes of all requests so far, failed or not, in order.
  [[nodiscard]] std::vector<std::size_t> requests() const {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->requests;
  }
  /// Arms the resource to fail the next @p failures requests.
  void fail_next(int failures) {
    std::lock_guard<std::mutex> lock(state_->mtx);
    state_->failures_left = failures;
  }
  /// After the armed failures, fails each request for which @p rule returns true (an empty rule:
  /// none). The rule may keep state (a counter, a generator): calls are serialised.
  void fail_when(std::function<bool()> rule) {
    std::lock_guard<std::mutex> lock(state_->mtx);
    state_->rule = std::move(rule);
  }
  /// How many requests have failed so far.
  [[nodiscard]] std::size_t failures() const {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->failed;
  }

  bool operator==(failing_resource const& other) const noexcept { return state_ == other.state_; }
  bool operator!=(failing_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(failing_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    state(any_device_resource u, int f) : upstream{std::move(u)}, failures_left{f} {}
    any_device_resource upstream;
    std::mutex mtx;
    int failures_left;
    std::vector<std::size_t> requests;
    std::function<bool()> rule;
    std::size_t failed{0};
  };

  void maybe_fail(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(state_->mtx);
    state_->requests.push_back(bytes);
    bool const armed = state_->failures_left > 0;
    if (armed) {
      --state_->failures_left;
    }
    if (armed || (state_->rule && state_->rule())) {
      ++state_->failed;
      throw make_exception<Exception>("failing_resource: deliberate failure of " +
                                      std::to_string(bytes) + " bytes");
    }
  }

  std::shared_ptr<state> state_;
};

/// Forwards to the upstream while at most `capacity` bytes are outstanding; beyond that throws
/// rmm::out_of_memory, like a device that is full.
class capacity_resource {
 public:
  capacity_resource(any_device_resource upstream, std::size_t capacity)
      : state_{std::make_shared<state>(std::move(upstream), capacity)} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    reserve(bytes);
    try {
      return state_->upstream.allocate(stream, bytes, alignment);
    } catch (...) {
      unreserve(bytes);
      throw;
    }
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    state_->upstream.deallocate(stream, ptr, bytes, alignment);
    unreserve(bytes);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    reserve(bytes);
    try {
      return state_->upstream.allocate_sync(bytes, alignment);
    } catch (...) {
      unreserve(bytes);
      throw;
    }
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    state_->upstream.deallocate_sync(ptr, bytes, alignment);
    unreserve(bytes);
  }

  [[nodiscard]] std::size_t outstanding() const {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->outstanding;
  }

  bool operator==(capacity_resource const& other) const noexcept { return state_ == other.state_; }
  bool operator!=(capacity_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(capacity_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    state(any_device_resource u, std::size_t c) : upstream{std::move(u)}, capacity{c} {}
    any_device_resource upstream;
    std::mutex mtx;
    std::size_t capacity;
    std::size_t outstanding{0};
  };

  void reserve(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (bytes > state_->capacity - state_->outstanding) {
      throw rmm::out_of_memory("capacity_resource: " + std::to_string(bytes) +
                               " bytes do not fit (" + std::to_string(state_->outstanding) +
                               " of " + std::to_string(state_->capacity) + " outstanding)");
    }
    state_->outstanding += bytes;
  }
  void unreserve(std::size_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(state_->mtx);
    state_->outstanding -= bytes;
  }

  std::shared_ptr<state> state_;
};

/// Host memory whose pointers lie exactly `offset` bytes past a 64 KiB boundary (offset a multiple
/// of 256 below 64 KiB): 256-byte aligned as every resource promises, and no more. Frees check
/// nothing; stack a verifying_resource on top to check them.
class offset_resource {
 public:
  static constexpr std::size_t base_alignment = std::size_t{64} * 1024;

  explicit offset_resource(std::size_t offset) : offset_{offset} {}

  void* allocate_sync(std::size_t bytes, std::size_t = CUDA_ALLOCATION_ALIGNMENT) {
    if (bytes == 0) {
      return nullptr;
    }
    void* base = std::aligned_alloc(base_alignment, align_up(bytes + offset_, base_alignment));
    if (base == nullptr) {
      throw std::bad_alloc{};
    }
    return static_cast<char*>(base) + offset_;
  }
  void deallocate_sync(void* ptr, std::size_t, std::size_t = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (ptr != nullptr) {
      std::free(static_cast<char*>(ptr) - offset_);
    }
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }

  bool operator==(offset_resource const& other) const noexcept { return offset_ == other.offset_; }
  bool operator!=(offset_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(offset_resource const&, cuda::mr::device_accessible) noexcept {}
  friend void get_property(offset_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  std::size_t offset_;
};

/// Deliberately not thread-safe: plain integer counters and a plain std::unordered_map of live
/// allocations, updated with a yield in between to widen any race. Alongside, an atomic records
/// the largest number of calls that were ever inside the resource at once: 1 means every call
/// was serialised.
class unsynchronized_resource {
 public:
  explicit unsynchronized_resource(any_device_resource upstream)
      : state_{std::make_shared<state>(std::move(upstream))} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    scope const inside{*state_};
    void* ptr = state_->upstream.allocate(stream, bytes, alignment);
    record_allocation(ptr, bytes);
    return ptr;
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    scope const inside{*state_};
    record_deallocation(ptr, bytes);
    state_->upstream.deallocate(stream, ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    scope const inside{*state_};
    void* ptr = state_->upstream.allocate_sync(bytes, alignment);
    record_allocation(ptr, bytes);
    return ptr;
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    scope const inside{*state_};
    record_deallocation(ptr, bytes);
    state_->upstream.deallocate_sync(ptr, bytes, alignment);
  }

  // Read these only while no other thread uses the resource.
  [[nodiscard]] long allocations() const noexcept { return state_->allocations; }
  [[nodiscard]] long deallocations() const noexcept { return state_->deallocations; }
  [[nodiscard]] long bytes_outstanding() const noexcept { return state_->bytes_outstanding; }
  [[nodiscard]] std::size_t live() const noexcept { return state_->live.size(); }
  [[nodiscard]] long unknown_frees() const noexcept { return state_->unknown_frees; }
  [[nodiscard]] int max_concurrent_calls() const noexcept { return state_->max_inside.load(); }

  bool operator==(unsynchronized_resource const& other) const noexcept {
    return state_ == other.state_;
  }
  bool operator!=(unsynchronized_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(unsynchronized_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    explicit state(any_device_resource u) : upstream{std::move(u)} {}
    any_device_resource upstream;
    long allocations{0};
    long deallocations{0};
    long bytes_outstanding{0};
    long unknown_frees{0};
    std::unordered_map<void*, std::size_t> live;
    std::atomic<int> inside{0};
    std::atomic<int> max_inside{0};
  };

  // Counts the calls inside the resource and keeps the maximum.
  struct scope {
    explicit scope(state& s) noexcept : s_{s} {
      int const now = ++s_.inside;
      int seen      = s_.max_inside.load();
      while (now > seen && !s_.max_inside.compare_exchange_weak(seen, now)) {
      }
    }
    ~scope() { --s_.inside; }
    scope(scope const&)            = delete;
    scope& operator=(scope const&) = delete;
    state& s_;
  };

  void record_allocation(void* ptr, std::size_t bytes) {
    long const count = state_->allocations;
    std::this_thread::yield();  // a read-modify-write split by a yield: races lose updates
    state_->allocations = count + 1;
    state_->bytes_outstanding += static_cast<long>(bytes);
    if (ptr != nullptr) {
      state_->live.emplace(ptr, bytes);
    }
  }
  void record_deallocation(void* ptr, std::size_t bytes) noexcept {
    long const count = state_->deallocations;
    std::this_thread::yield();
    state_->deallocations = count + 1;
    state_->bytes_outstanding -= static_cast<long>(bytes);
    if (ptr != nullptr && state_->live.erase(ptr) == 0) {
      ++state_->unknown_frees;
    }
  }

  std::shared_ptr<state> state_;
};

static_assert(cuda::mr::resource_with<failing_resource<>, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<capacity_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<offset_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<unsynchronized_resource, cuda::mr::device_accessible>);

}  // namespace rmm::test::policy_adaptor_fakes
