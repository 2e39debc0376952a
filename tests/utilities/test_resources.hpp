// Test doubles reused by every suite:
//   host_backed_resource  a "device" resource over aligned host memory, for CPU-only logic tests
//   counting_resource     counts calls and bytes outstanding
//   verifying_resource    fails the test on a free whose pointer, size or alignment differs from
//                         its allocation, and on leaks
//   delayed_resource      holds frees back and performs them later, as a stream-ordered upstream
//                         whose frees complete late would
// The wrappers take any upstream as cuda::mr::any_resource<device_accessible>; copies share state.
#pragma once

#include <rmm/aligned.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::test {

using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

/// Aligned host memory presented as device-accessible: lets allocator logic run without a GPU.
/// Instances are equal when they were copied from one another.
class host_backed_resource {
 public:
  host_backed_resource() = default;

  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    if (bytes == 0) {
      return nullptr;
    }
    auto const align =
        alignment < CUDA_ALLOCATION_ALIGNMENT ? CUDA_ALLOCATION_ALIGNMENT : alignment;
    void* ptr = std::aligned_alloc(align, align_up(bytes, align));
    if (ptr == nullptr) {
      throw std::bad_alloc{};
    }
    return ptr;
  }
  void deallocate_sync(void* ptr, std::size_t, std::size_t = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    std::free(ptr);
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }
  bool operator==(host_backed_resource const& other) const noexcept { return id_ == other.id_; }
  bool operator!=(host_backed_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(host_backed_resource const&, cuda::mr::device_accessible) noexcept {}
  friend void get_property(host_backed_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  std::shared_ptr<int> id_ = std::make_shared<int>(0);
};

/// Counts allocations, deallocations and bytes outstanding (thread-safe, shared by copies).
class counting_resource {
 public:
  struct counters {
    std::atomic<std::size_t> allocations{0};
    std::atomic<std::size_t> deallocations{0};
    std::atomic<std::size_t> bytes_outstanding{0};
  };

  explicit counting_resource(any_device_resource upstream) : upstream_{std::move(upstream)} {}

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
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    record_allocation(bytes);
    return ptr;
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    upstream_.deallocate_sync(ptr, bytes, alignment);
    record_deallocation(bytes);
  }

  [[nodiscard]] counters const& counts() const noexcept { return *counters_; }

  bool operator==(counting_resource const& other) const noexcept {
    return counters_ == other.counters_;
  }
  bool operator!=(counting_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(counting_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  void record_allocation(std::size_t bytes) noexcept {
    counters_->allocations.fetch_add(1);
    counters_->bytes_outstanding.fetch_add(bytes);
  }
  void record_deallocation(std::size_t bytes) noexcept {
    counters_->deallocations.fetch_add(1);
    counters_->bytes_outstanding.fetch_sub(bytes);
  }

  any_device_resource upstream_;
  std::shared_ptr<counters> counters_ = std::make_shared<counters>();
};

/// Records every live allocation and reports each free that does not match one (wrong pointer,
/// size or alignment). Tests assert failures().empty() and live_allocations() == 0.
class verifying_resource {
 public:
  explicit verifying_resource(any_device_resource upstream) : upstream_{std::move(upstream)} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    void* ptr = upstream_.allocate(stream, bytes, alignment);
    record_allocation(ptr, bytes, alignment);
    return ptr;
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    // A mismatched free is not forwarded: passing wrong sizes on would corrupt the upstream.
    if (record_deallocation(ptr, bytes, alignment)) {
      upstream_.deallocate(stream, ptr, bytes, alignment);
    }
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    record_allocation(ptr, bytes, alignment);
    return ptr;
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    if (record_deallocation(ptr, bytes, alignment)) {
      upstream_.deallocate_sync(ptr, bytes, alignment);
    }
  }

  [[nodiscard]] std::vector<std::string> failures() const {
    std::lock_guard<std::mutex> guard{state_->lock};
    return state_->failures;
  }
  [[nodiscard]] std::size_t live_allocations() const {
    std::lock_guard<std::mutex> guard{state_->lock};
    return state_->live.size();
  }

  bool operator==(verifying_resource const& other) const noexcept { return state_ == other.state_; }
  bool operator!=(verifying_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(verifying_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct record {
    std::size_t bytes;
    std::size_t alignment;
  };
  struct shared_state {
    std::mutex lock;
    std::unordered_map<void*, record> live;
    std::vector<std::string> failures;
  };

  void record_allocation(void* ptr, std::size_t bytes, std::size_t alignment) {
    if (ptr == nullptr) {
      return;
    }
    std::lock_guard<std::mutex> guard{state_->lock};
    if (!state_->live.emplace(ptr, record{bytes, alignment}).second) {
      state_->failures.push_back(
          describe("allocation returned a live pointer", ptr, bytes, alignment));
    }
  }

  bool record_deallocation(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    if (ptr == nullptr) {
      return true;
    }
    std::lock_guard<std::mutex> guard{state_->lock};
    auto found = state_->live.find(ptr);
    if (found == state_->live.end()) {
      state_->failures.push_back(describe("free of an unknown pointer", ptr, bytes, alignment));
      return false;
    }
    if (found->second.bytes != bytes || found->second.alignment != alignment) {
      state_->failures.push_back(describe("free with a different size or alignment (allocated " +
                                              std::to_string(found->second.bytes) +
                                              " bytes, alignment " +
                                              std::to_string(found->second.alignment) + ")",
                                          ptr,
                                          bytes,
                                          alignment));
      return false;
    }
    state_->live.erase(found);
    return true;
  }

  static std::string describe(std::string const& what,
                              void* ptr,
                              std::size_t bytes,
                              std::size_t alignment) {
    std::ostringstream out;
    out << what << ": ptr " << ptr << ", bytes " << bytes << ", alignment " << alignment;
    return out.str();
  }

  any_device_resource upstream_;
  std::shared_ptr<shared_state> state_ = std::make_shared<shared_state>();
};

/// Holds each free back until `delay` further operations have happened (or flush() is called),
/// like an upstream whose stream-ordered frees complete late. Memory that an adaptor reuses too
/// early is then still allocated in the upstream, which a verifying_resource below detects.
class delayed_resource {
 public:
  delayed_resource(any_device_resource upstream, std::size_t delay)
      : upstream_{std::move(upstream)}, state_{std::make_shared<shared_state>(delay)} {}

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    tick();
    return upstream_.allocate(stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    {
      std::lock_guard<std::mutex> guard{state_->lock};
      state_->pending.push_back(
          pending_free{stream, ptr, bytes, alignment, state_->clock + state_->delay});
    }
    tick();
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) {
    tick();
    return upstream_.allocate_sync(bytes, alignment);
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept {
    deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, bytes, alignment);
  }

  /// Performs every held-back free now.
  void flush() noexcept { release_due(SIZE_MAX); }
  [[nodiscard]] std::size_t pending() const {
    std::lock_guard<std::mutex> guard{state_->lock};
    return state_->pending.size();
  }

  bool operator==(delayed_resource const& other) const noexcept { return state_ == other.state_; }
  bool operator!=(delayed_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(delayed_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct pending_free {
    cuda::stream_ref stream;
    void* ptr;
    std::size_t bytes;
    std::size_t alignment;
    std::size_t due;
  };
  struct shared_state {
    explicit shared_state(std::size_t d) : delay{d} {}
    std::mutex lock;
    std::size_t delay;
    std::size_t clock{0};
    std::deque<pending_free> pending;
  };

  void tick() noexcept {
    std::size_t now{};
    {
      std::lock_guard<std::mutex> guard{state_->lock};
      now = ++state_->clock;
    }
    release_due(now);
  }

  void release_due(std::size_t now) noexcept {
    std::vector<pending_free> due;
    {
      std::lock_guard<std::mutex> guard{state_->lock};
      while (!state_->pending.empty() && state_->pending.front().due <= now) {
        due.push_back(state_->pending.front());
        state_->pending.pop_front();
      }
    }
    for (auto const& f : due) {
      upstream_.deallocate(f.stream, f.ptr, f.bytes, f.alignment);
    }
  }

  any_device_resource upstream_;
  std::shared_ptr<shared_state> state_;
};

static_assert(cuda::mr::resource_with<host_backed_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<counting_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<verifying_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<delayed_resource, cuda::mr::device_accessible>);

}  // namespace rmm::test
