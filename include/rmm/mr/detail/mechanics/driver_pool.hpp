/**
 * @file driver_pool.hpp
 * @brief What the resources over CUDA's stream-ordered memory pools (`cudaMemPool_t`) share:
 * allocation with cudaMallocFromPoolAsync / cudaFreeAsync, the pool's statistics, a byte limit,
 * trimming, the device capability checks and the public statistics interface.
 *
 * The resources are cuda_async_memory_resource, cuda_async_view_memory_resource,
 * cuda_async_managed_memory_resource and cuda_async_pinned_memory_resource; docs/driver_pools.md
 * describes them. Nothing here is for direct use.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_oom.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace rmm::mr::detail {

// --- host-only logic (no CUDA calls; covered by the host suite) ---------------------------------

/**
 * @brief The byte limit that is @p fraction of @p total_bytes, rounded down.
 *
 * @throws rmm::logic_error naming @p fraction unless it is a finite number in [0, 1].
 * Thread-safety: a pure function.
 */
[[nodiscard]] inline std::size_t limit_for_fraction(double fraction,
                                                    std::size_t total_bytes,
                                                    char const* resource_name) {
  RMM_EXPECTS(
      std::isfinite(fraction) && fraction >= 0.0 && fraction <= 1.0,
      std::string{resource_name} + ": set_limit_fraction: fraction " +
          [fraction] {
            std::ostringstream out;
            out << fraction;
            return out.str();
          }() +
          " is not a number in [0, 1]");
  if (fraction >= 1.0) {
    return total_bytes;
  }
  auto const bytes =
      std::floor(static_cast<long double>(total_bytes) * static_cast<long double>(fraction));
  // A product that rounds up to the total (or beyond what size_t holds) is the total.
  if (bytes >= static_cast<long double>(total_bytes)) {
    return total_bytes;
  }
  return static_cast<std::size_t>(bytes);
}

/**
 * @brief Bytes handed out through the resources of this library over one pool, and an optional
 * limit on them (0 = none).
 *
 * Every resource of this library over the same `cudaMemPool_t` in a process shares one
 * pool_limit (see shared_pool_limit()), so that memory allocated through one resource and freed
 * through another equal one keeps the count right.
 *
 * Thread-safety: every member is lock-free and may be called concurrently (atomics; acquiring is
 * a compare-and-swap loop, so concurrent requests never take the count beyond the limit).
 */
class pool_limit {
 public:
  /// @brief The limit in bytes; 0 means none.
  [[nodiscard]] std::size_t limit() const noexcept {
    return limit_.load(std::memory_order_relaxed);
  }

  /// @brief Sets the limit (0 removes it). Allocations already made are not affected: a limit
  /// below the bytes in use only refuses later requests until enough is freed.
  void set_limit(std::size_t bytes) noexcept { limit_.store(bytes, std::memory_order_relaxed); }

  /// @brief Bytes acquired and not yet released.
  [[nodiscard]] std::size_t in_use() const noexcept {
    return in_use_.load(std::memory_order_relaxed);
  }

  /**
   * @brief Adds @p bytes to the bytes in use unless that would exceed the limit (or overflow).
   * @param observed receives the bytes in use that were seen when the request was refused.
   * @return true if the bytes were acquired.
   */
  [[nodiscard]] bool try_acquire(std::size_t bytes, std::size_t& observed) noexcept {
    std::size_t current = in_use_.load(std::memory_order_relaxed);
    for (;;) {
      std::size_t const limit = limit_.load(std::memory_order_relaxed);
      bool const overflows    = bytes > std::numeric_limits<std::size_t>::max() - current;
      if (overflows || (limit != 0 && current + bytes > limit)) {
        observed = current;
        return false;
      }
      if (in_use_.compare_exchange_weak(
              current, current + bytes, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return true;
      }
    }
  }

  /// @brief Subtracts @p bytes from the bytes in use (never below 0).
  void release(std::size_t bytes) noexcept {
    std::size_t current = in_use_.load(std::memory_order_relaxed);
    while (!in_use_.compare_exchange_weak(current,
                                          current >= bytes ? current - bytes : 0,
                                          std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
    }
  }

 private:
  std::atomic<std::size_t> limit_{0};
  std::atomic<std::size_t> in_use_{0};
};

/**
 * @brief The names of the bits of a `cudaMemAllocationHandleType` mask, joined by '|'
 * ("none" for 0; unknown bits in hex).
 */
[[nodiscard]] inline std::string handle_type_names(int mask) {
  if (mask == 0) {
    return "none";
  }
  static constexpr std::pair<int, char const*> known[] = {
      {0x1, "posix_file_descriptor"}, {0x2, "win32"}, {0x4, "win32_kmt"}, {0x8, "fabric"}};
  // Appends rather than `"|" + std::string{...}`: GCC 12 at -O3 in C++20 reports a false
  // -Wrestrict inside libstdc++ for a literal + std::string (GCC bug 105651).
  std::string out;
  auto const add = [&out](char const* name) {
    if (!out.empty()) {
      out += '|';
    }
    out += name;
  };
  int rest = mask;
  for (auto const& [bit, text] : known) {
    if ((mask & bit) != 0) {
      add(text);
      rest &= ~bit;
    }
  }
  if (rest != 0) {
    char buffer[16];
    std::snprintf(buffer, sizeof(buffer), "0x%x", static_cast<unsigned>(rest));
    add(buffer);
  }
  return out;
}

/// @brief The bits of @p requested that @p supported lacks.
[[nodiscard]] constexpr int unsupported_handle_types(int requested, int supported) noexcept {
  return requested & ~supported;
}

// --- the process-wide map pool -> pool_limit (defined once, in librmm) ---------------------------

/**
 * @brief The pool_limit shared by every resource of this library over @p pool in this process,
 * made on first use. Entries live as long as a resource holds them.
 * Thread-safety: safe to call concurrently (one mutex).
 */
RMM_EXPORT std::shared_ptr<pool_limit> shared_pool_limit(cudaMemPool_t pool);

/**
 * @brief A new pool_limit for a pool that was just created or imported; it replaces whatever an
 * earlier pool with the same handle left behind. Thread-safety: as shared_pool_limit().
 */
RMM_EXPORT std::shared_ptr<pool_limit> fresh_pool_limit(cudaMemPool_t pool);

// --- device queries and pool set-up -------------------------------------------------------------

/// @brief `cudaDeviceGetAttribute(attr, device)`. @throws rmm::cuda_error on failure.
[[nodiscard]] inline int device_attribute(cudaDeviceAttr attr, int device) {
  int value{0};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

/// @brief @throws rmm::logic_error naming @p device unless it supports memory pools.
inline void expect_memory_pools_supported(int device, char const* resource_name) {
  RMM_EXPECTS(device_attribute(cudaDevAttrMemoryPoolsSupported, device) != 0,
              std::string{resource_name} + ": device " + std::to_string(device) +
                  " does not support stream-ordered memory pools "
                  "(cudaDevAttrMemoryPoolsSupported is 0; cudaMallocAsync is unavailable)");
}

/**
 * @brief @throws rmm::logic_error naming the handle types and @p device unless every bit of
 * @p requested is in the device's cudaDevAttrMemoryPoolSupportedHandleTypes.
 */
inline void expect_handle_types_supported(int requested, int device, char const* resource_name) {
  if (requested == 0) {
    return;
  }
  int const supported = device_attribute(cudaDevAttrMemoryPoolSupportedHandleTypes, device);
  int const missing   = unsupported_handle_types(requested, supported);
  RMM_EXPECTS(missing == 0,
              std::string{resource_name} + ": export handle type " + handle_type_names(requested) +
                  " is not supported for memory pools on device " + std::to_string(device) +
                  " (missing: " + handle_type_names(missing) +
                  "; cudaDevAttrMemoryPoolSupportedHandleTypes is " + handle_type_names(supported) +
                  ")");
}

/**
 * @brief Owns a `cudaMemPool_t` until release(): destroys the pool if set-up after creation
 * throws. Not copyable.
 */
class pool_guard {
 public:
  explicit pool_guard(cudaMemPool_t pool) noexcept : pool_{pool} {}
  pool_guard(pool_guard const&)            = delete;
  pool_guard& operator=(pool_guard const&) = delete;
  ~pool_guard() {
    if (pool_ != nullptr) {
      RMM_ASSERT_CUDA_SUCCESS(cudaMemPoolDestroy(pool_));
    }
  }
  /// @brief The pool, still owned.
  [[nodiscard]] cudaMemPool_t get() const noexcept { return pool_; }
  /// @brief Gives up ownership. @return the pool
  cudaMemPool_t release() noexcept { return std::exchange(pool_, nullptr); }

 private:
  cudaMemPool_t pool_;
};

/**
 * @brief `cudaMemPoolCreate(props)`. @p what describes the pool for messages ("on device 0").
 * @throws rmm::logic_error if the driver refuses it as unsupported or not permitted (for fabric
 * handles: no IMEX channel), rmm::out_of_memory if it reports out-of-memory, rmm::cuda_error
 * otherwise.
 */
[[nodiscard]] inline cudaMemPool_t create_pool(cudaMemPoolProps const& props,
                                               char const* resource_name,
                                               std::string const& what) {
  cudaMemPool_t pool{};
  cudaError_t const status = cudaMemPoolCreate(&pool, &props);
  if (status == cudaSuccess) {
    return pool;
  }
  rmm::detail::clear_last_cuda_error();
  std::string const call = "cudaMemPoolCreate " + what + " with export handle type " +
                           handle_type_names(static_cast<int>(props.handleTypes)) + " returned " +
                           cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  std::string const reason = std::string{resource_name} + ": " + call;
  if (status == cudaErrorNotSupported || status == cudaErrorNotPermitted) {
    RMM_FAIL(reason +
             ((props.handleTypes & cudaMemHandleTypeFabric) != 0
                  ? " (fabric handles need an IMEX channel under /dev/nvidia-caps-imex-channels)"
                  : ""));
  }
  if (status == cudaErrorMemoryAllocation) {  // not a request: requested_bytes stays 0
    bool const on_device = props.location.type == cudaMemLocationTypeDevice;
    out_of_memory_report report =
        pool_oom_report(resource_name, 0, std::nullopt, on_device ? props.location.id : -1);
    report.reason = call;
    throw rmm::out_of_memory{std::move(report)};
  }
  RMM_FAIL(reason, rmm::cuda_error);
}

/// @brief Sets the pool's release threshold. @throws rmm::cuda_error on failure.
inline void set_release_threshold(cudaMemPool_t pool, std::uint64_t threshold) {
  RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

/**
 * @brief Enables read-write access to @p pool from @p device if it is not enabled yet
 * (querying first: a device pool's own device may not be named in cudaMemPoolSetAccess).
 * @throws rmm::cuda_error on failure.
 */
inline void enable_device_access(cudaMemPool_t pool, int device) {
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id   = device;
  cudaMemAccessFlags flags{cudaMemAccessFlagsProtNone};
  RMM_CUDA_TRY(cudaMemPoolGetAccess(&flags, pool, &location));
  if (flags == cudaMemAccessFlagsProtReadWrite) {
    return;
  }
  cudaMemAccessDesc desc{};
  desc.location = location;
  desc.flags    = cudaMemAccessFlagsProtReadWrite;
  RMM_CUDA_TRY(cudaMemPoolSetAccess(pool, &desc, 1));
}

/// @brief Physical memory of the host in bytes (sysconf); 0 if unknown.
[[nodiscard]] inline std::size_t host_physical_memory() noexcept {
  long const pages = ::sysconf(_SC_PHYS_PAGES);
  long const size  = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) {
    return 0;
  }
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(size);
}

// --- the core every driver-pool resource holds ---------------------------------------------------

/// @brief What a pool's memory is: it decides the base of set_limit_fraction() and messages.
enum class pool_memory_kind { device, managed, pinned_host };

/**
 * @brief A pool handle with the operations the driver-pool resources share. A value type: copies
 * refer to the same pool and share its pool_limit. It never creates or destroys the pool; the
 * owning resources do.
 *
 * Thread-safety: every const member may be called concurrently (CUDA's pool calls are
 * thread-safe; the limit is atomic). Assigning a new core is not thread-safe.
 */
class driver_pool_core {
 public:
  /// @brief No pool: every operation but the trivial ones throws rmm::logic_error.
  explicit driver_pool_core(char const* resource_name) noexcept : name_{resource_name} {}

  /**
   * @brief Refers to @p pool.
   * @param limit the pool's shared limit (shared_pool_limit / fresh_pool_limit).
   * @param device the device whose memory the pool holds (-1 for host memory).
   * @param max_size the pool's maximum size if known (0: unknown or none).
   */
  driver_pool_core(cudaMemPool_t pool,
                   std::shared_ptr<pool_limit> limit,
                   char const* resource_name,
                   pool_memory_kind kind,
                   int device,
                   std::size_t max_size = 0) noexcept
      : pool_{pool},
        limit_{std::move(limit)},
        name_{resource_name},
        kind_{kind},
        device_{device},
        max_size_{max_size} {}

  /// @brief The pool (nullptr if none).
  [[nodiscard]] cudaMemPool_t handle() const noexcept { return pool_; }

  /// @brief The resource's name, for messages.
  [[nodiscard]] char const* name() const noexcept { return name_; }

  /// @brief What the pool holds.
  [[nodiscard]] pool_memory_kind kind() const noexcept { return kind_; }

  /// @brief The device whose memory the pool holds (-1 for host memory).
  [[nodiscard]] int device() const noexcept { return device_; }

  /// @brief Forgets the pool (after its owner destroyed it); keeps the name.
  void reset() noexcept { *this = driver_pool_core{name_}; }

  /**
   * @brief cudaMallocFromPoolAsync of @p bytes on @p stream, within the limit.
   * @throws rmm::logic_error for a bad alignment or when there is no pool.
   * @throws rmm::out_of_memory if the limit or the pool's max_size would be exceeded, or CUDA
   * reports out-of-memory; its report() gives the request, the pool's reserved, used and free
   * bytes, its limit or max_size (maximum), the stream and the device with its memory
   * (driver_pool_oom.hpp).
   * @throws rmm::bad_alloc for any other CUDA failure.
   */
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) const {
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name_);
    if (bytes == 0) {
      return nullptr;
    }
    expect_pool();
    if (kind_ == pool_memory_kind::device) {
      check_device(device_, name_, "allocate", stream.get());  // debug builds only
    }
    if (max_size_ != 0 && bytes > max_size_) {
      throw_above_max_size(name_, pool_, bytes, stream.get(), device_, max_size_);
    }
    std::size_t observed{0};
    if (!limit_->try_acquire(bytes, observed)) {
      throw_above_limit(name_, pool_, bytes, stream.get(), device_, limit_->limit(), observed);
    }
    void* ptr{nullptr};
    cudaError_t const status = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream.get());
    if (status != cudaSuccess) {
      limit_->release(bytes);
      throw_pool_allocation_error(
          status, name_, pool_, bytes, stream.get(), device_, limit_->limit(), max_size_);
    }
    return ptr;
  }

  /// @brief cudaFreeAsync of @p ptr on @p stream; @p bytes as given to allocate().
  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t bytes) const noexcept {
    if (ptr == nullptr) {
      return;
    }
    if (kind_ == pool_memory_kind::device) {
      check_device_noexcept(device_, name_, "deallocate", stream.get());  // debug builds only
    }
    RMM_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream.get()));
    if (limit_) {
      limit_->release(bytes);
    }
  }

  /// @brief allocate() on the default stream, which is then synchronised.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) const {
    void* ptr = allocate(cuda_stream_default, bytes, alignment);
    cuda_stream_default.synchronize();
    return ptr;
  }

  /// @brief deallocate() on the default stream.
  void deallocate_sync(void* ptr, std::size_t bytes) const noexcept {
    deallocate(cuda_stream_default, ptr, bytes);
  }

  /// @name Statistics (pool attributes)
  ///@{
  [[nodiscard]] std::size_t used_bytes() const { return attribute(cudaMemPoolAttrUsedMemCurrent); }
  [[nodiscard]] std::size_t reserved_bytes() const {
    return attribute(cudaMemPoolAttrReservedMemCurrent);
  }
  [[nodiscard]] std::size_t free_bytes() const {
    std::size_t const reserved = reserved_bytes();
    std::size_t const used     = used_bytes();
    return reserved > used ? reserved - used : 0;
  }
  [[nodiscard]] std::size_t peak_used_bytes() const {
    return attribute(cudaMemPoolAttrUsedMemHigh);
  }
  [[nodiscard]] std::size_t peak_reserved_bytes() const {
    return attribute(cudaMemPoolAttrReservedMemHigh);
  }
  void reset_peaks() const {
    expect_pool();
    std::uint64_t zero{0};
    RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero));
    RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero));
  }
  ///@}

  /// @name Limit
  ///@{
  void set_limit(std::size_t bytes) const {
    expect_pool();
    limit_->set_limit(bytes);
  }
  void set_limit_fraction(double fraction) const {
    expect_pool();
    limit_->set_limit(limit_for_fraction(fraction, capacity(), name_));
  }
  [[nodiscard]] std::size_t get_limit() const {
    expect_pool();
    return limit_->limit();
  }
  ///@}

  /**
   * @brief Synchronises the pool's device (the current device for host pools), so that every
   * pending stream-ordered free has happened, then cudaMemPoolTrimTo(keep_bytes).
   */
  void release(std::size_t keep_bytes) const {
    expect_pool();
    {
      cuda_set_device_raii const guard{device_ >= 0 ? cuda_device_id{device_}
                                                    : get_current_cuda_device()};
      RMM_CUDA_TRY(cudaDeviceSynchronize());
    }
    RMM_CUDA_TRY(cudaMemPoolTrimTo(pool_, keep_bytes));
  }

 private:
  void expect_pool() const {
    RMM_EXPECTS(pool_ != nullptr && limit_ != nullptr,
                std::string{name_} +
                    ": the resource has no memory pool (default-constructed, moved-from or "
                    "closed)");
  }

  [[nodiscard]] std::size_t attribute(cudaMemPoolAttr attr) const {
    expect_pool();
    std::uint64_t value{0};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool_, attr, &value));
    return static_cast<std::size_t>(value);
  }

  /// @brief The bytes set_limit_fraction() takes a fraction of.
  [[nodiscard]] std::size_t capacity() const {
    if (kind_ == pool_memory_kind::pinned_host) {
      std::size_t const bytes = host_physical_memory();
      RMM_EXPECTS(bytes != 0, std::string{name_} + ": cannot determine the host's physical memory");
      return bytes;
    }
    cuda_set_device_raii const guard{cuda_device_id{device_}};
    return available_device_memory().second;
  }

  cudaMemPool_t pool_{nullptr};
  std::shared_ptr<pool_limit> limit_;
  char const* name_;
  pool_memory_kind kind_{pool_memory_kind::device};
  int device_{-1};
  std::size_t max_size_{0};
};

/**
 * @brief CRTP base of the shared states (impls) of the resources over one driver pool: the
 * stream-ordered calls, state_of access and equality, all forwarded to one driver_pool_core.
 *
 * Impl constructs `core_` and may hide allocate/allocate_sync to check first (the pinned
 * resource refuses to allocate from an imported pool). Two states are equal if they are the same
 * object or share a pool handle: resources over one pool are interchangeable (and share its
 * limit). Thread-safety: as driver_pool_core.
 */
template <typename Impl>
class driver_pool_impl_base {
 public:
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    return core_.allocate(stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t /*alignment*/) noexcept {
    core_.deallocate(stream, ptr, bytes);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    return core_.allocate_sync(bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t /*alignment*/) noexcept {
    core_.deallocate_sync(ptr, bytes);
  }

  [[nodiscard]] driver_pool_core const& core() const noexcept { return core_; }

  friend Impl* get_property(Impl const& self, state_of<Impl>) noexcept {
    return const_cast<Impl*>(&self);
  }
  friend bool operator==(Impl const& a, Impl const& b) noexcept {
    return &a == &b || (a.core_.handle() != nullptr && a.core_.handle() == b.core_.handle());
  }
  friend bool operator!=(Impl const& a, Impl const& b) noexcept { return !(a == b); }

 protected:
  explicit driver_pool_impl_base(char const* name) : core_{name} {}

  driver_pool_core core_;
};

}  // namespace rmm::mr::detail
