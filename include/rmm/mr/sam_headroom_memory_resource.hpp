/**
 * @file sam_headroom_memory_resource.hpp
 * @brief System allocated memory (SAM) that prefers the GPU only while that leaves a reserved
 * headroom of device memory free for other CUDA calls.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/sam_headroom.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of sam_headroom_memory_resource. Not for direct use.
class sam_headroom_memory_resource_impl {
  static constexpr char const* name = "sam_headroom_memory_resource";

 public:
  explicit sam_headroom_memory_resource_impl(std::size_t headroom)
      : headroom_{headroom}, device_{get_current_cuda_device()}, page_size_{host_page_size()} {}

  sam_headroom_memory_resource_impl(sam_headroom_memory_resource_impl const&)            = delete;
  sam_headroom_memory_resource_impl& operator=(sam_headroom_memory_resource_impl const&) = delete;
  ~sam_headroom_memory_resource_impl()                                                   = default;

  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    if (ptr == nullptr) {
      return;
    }
    forget_advice(ptr, bytes);
    system_.deallocate(stream, ptr, bytes, alignment);  // synchronises the stream first
  }

  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    rmm::detail::expect_supported_alignment(alignment, system_memory_resource::max_alignment, name);
    if (bytes == 0) {
      return nullptr;
    }
    // Page-aligned (on 4 KiB-page hosts), so that the allocation shares no page with another
    // one whose preferred location may differ.
    void* ptr = nullptr;
    try {
      ptr = system_.allocate_sync(bytes, system_memory_resource::max_alignment);
    } catch (rmm::out_of_memory const& e) {
      // Under this resource's name, with the device whose headroom it keeps.
      out_of_memory_report report = rmm::detail::adaptor_report(name, bytes, "", e);
      rmm::detail::add_device_memory(report, device_.value());
      throw rmm::out_of_memory{std::move(report)};
    }
    try {
      advise(ptr, bytes);
    } catch (...) {
      system_.deallocate_sync(ptr, bytes, system_memory_resource::max_alignment);
      throw;
    }
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    if (ptr == nullptr) {
      return;
    }
    forget_advice(ptr, bytes);
    system_.deallocate_sync(ptr, bytes, alignment);
  }

  friend bool operator==(sam_headroom_memory_resource_impl const& a,
                         sam_headroom_memory_resource_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(sam_headroom_memory_resource_impl const& a,
                         sam_headroom_memory_resource_impl const& b) noexcept {
    return &a != &b;
  }

  friend sam_headroom_memory_resource_impl* get_property(
      sam_headroom_memory_resource_impl const& self,
      state_of<sam_headroom_memory_resource_impl>) noexcept {
    return const_cast<sam_headroom_memory_resource_impl*>(&self);
  }

  [[nodiscard]] std::size_t headroom() const noexcept { return headroom_; }
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

 private:
  static std::size_t host_page_size() noexcept {
    long const page = ::sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::size_t>(page) : std::size_t{4096};
  }

  // Prefers the GPU for the part that leaves the headroom free, the host for the rest.
  void advise(void* ptr, std::size_t bytes) {
    std::size_t free_bytes{};
    {
      cuda_set_device_raii const on_device{device_};
      free_bytes = available_device_memory().first;
    }
    auto const split = split_for_headroom(
        reinterpret_cast<std::uintptr_t>(ptr), bytes, free_bytes, headroom_, page_size_);
    if (split.device_bytes > 0) {
      cudaMemLocation const gpu{cudaMemLocationTypeDevice, device_.value()};
      RMM_CUDA_TRY(cudaMemAdvise(ptr, split.device_bytes, cudaMemAdviseSetPreferredLocation, gpu));
    }
    if (split.host_bytes > 0) {
      cudaMemLocation const host{cudaMemLocationTypeHost, 0};
      RMM_CUDA_TRY(cudaMemAdvise(static_cast<char*>(ptr) + split.device_bytes,
                                 split.host_bytes,
                                 cudaMemAdviseSetPreferredLocation,
                                 host));
    }
  }

  // The system allocator may hand these pages to an unrelated malloc later: drop the advice.
  static void forget_advice(void* ptr, std::size_t bytes) noexcept {
    cudaMemLocation const none{cudaMemLocationTypeHost, 0};  // ignored by the unset advice
    if (cudaMemAdvise(ptr, bytes, cudaMemAdviseUnsetPreferredLocation, none) != cudaSuccess) {
      rmm::detail::clear_last_cuda_error();
    }
  }

  system_memory_resource system_;  // checks pageable memory access on construction
  std::size_t headroom_;
  cuda_device_id device_;
  std::size_t page_size_;
};

}  // namespace detail

/**
 * @brief Resource that uses system_memory_resource to allocate memory with a headroom.
 *
 * System allocated memory (SAM) can be migrated to the GPU, but is never migrated back to the
 * host. If GPU memory is over-subscribed, this can cause other CUDA calls to fail with
 * out-of-memory errors. To work around this, some GPU memory is reserved as headroom for other
 * CUDA calls, and an allocation's preferred location is set to the GPU
 * (`cudaMemAdvise(..., cudaMemAdviseSetPreferredLocation, device)`) only as far as that does not
 * eat into the headroom:
 *
 * - if the whole allocation fits in (free device memory - headroom), all of it prefers the GPU;
 * - otherwise the longest page-aligned prefix that fits prefers the GPU and the rest prefers the
 *   host (detail::split_for_headroom(), which is the exact rule). With no room at all, the whole
 *   allocation prefers the host.
 *
 * "Free device memory" is what cudaMemGetInfo reports at the time of the allocation on the device
 * that was current at construction. It does not count SAM pages that earlier allocations were
 * advised to the GPU but that have not migrated yet, and concurrent allocations see the same
 * value, so the headroom is a heuristic, not a reservation. Since the check costs a
 * cudaMemGetInfo and one or two cudaMemAdvise calls per allocation, use another resource (e.g.
 * binning_memory_resource) for small allocations and this one for large ones.
 *
 * Allocations are aligned to 4096 bytes (one page on x86-64). Allocation is synchronous (the
 * stream is ignored); deallocation removes the preferred-location advice, synchronises the
 * stream, then frees. Requires a device with pageable memory access (HMM or ATS), as
 * system_memory_resource does. When the system allocator refuses a request, rmm::out_of_memory
 * reports it under this resource's name, with the device (and its memory) whose headroom it keeps.
 *
 * Thread-safety: all member functions may be called concurrently. Copies share one state and
 * compare equal; independently constructed resources compare unequal.
 */
class sam_headroom_memory_resource
    : public cuda::mr::shared_resource<detail::sam_headroom_memory_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::sam_headroom_memory_resource_impl>;

 public:
  /**
   * @brief Construct a headroom memory resource on the current device.
   *
   * @param headroom Size of the reserved GPU memory as headroom, in bytes.
   * @throws rmm::logic_error if the current device cannot access pageable system memory (no HMM
   * or ATS); the message names the device.
   * @throws rmm::cuda_error if the device cannot be queried.
   */
  explicit sam_headroom_memory_resource(std::size_t headroom)
      : shared_base{cuda::std::in_place_type<detail::sam_headroom_memory_resource_impl>, headroom} {
  }

  sam_headroom_memory_resource()  = delete;
  ~sam_headroom_memory_resource() = default;
  sam_headroom_memory_resource(sam_headroom_memory_resource const&) =
      default;  ///< Default copy constructor.
  sam_headroom_memory_resource(sam_headroom_memory_resource&&) =
      default;  ///< Default move constructor.
  /// @brief Default copy assignment operator. @return Reference to the assigned object
  sam_headroom_memory_resource& operator=(sam_headroom_memory_resource const&) = default;
  /// @brief Default move assignment operator. @return Reference to the assigned object
  sam_headroom_memory_resource& operator=(sam_headroom_memory_resource&&) = default;

  /// @brief The headroom given at construction, in bytes. @pre Not moved-from.
  [[nodiscard]] std::size_t headroom() const noexcept { return state().headroom(); }

  /// @brief The device whose free memory and preferred location are used. @pre Not moved-from.
  [[nodiscard]] cuda_device_id device() const noexcept { return state().device(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(sam_headroom_memory_resource const&,
                           cuda::mr::device_accessible) noexcept {}

  /// @brief Enables the cuda::mr::host_accessible property.
  friend void get_property(sam_headroom_memory_resource const&,
                           cuda::mr::host_accessible) noexcept {}

 private:
  [[nodiscard]] detail::sam_headroom_memory_resource_impl& state() const noexcept {
    return detail::shared_state<detail::sam_headroom_memory_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<sam_headroom_memory_resource,
                                      cuda::mr::device_accessible,
                                      cuda::mr::host_accessible>);

}  // namespace rmm::mr
