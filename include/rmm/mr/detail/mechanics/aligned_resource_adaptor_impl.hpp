/**
 * @file aligned_resource_adaptor_impl.hpp
 * @brief Shared state of aligned_resource_adaptor: the upstream, the alignment policy and the
 * map from each aligned pointer handed out to the upstream pointer it lies in.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace rmm::mr::detail {

/**
 * @brief Shared state of aligned_resource_adaptor. Not for direct use.
 *
 * An allocation of `bytes` with per-call alignment `a` is served with the effective alignment
 * `max(a, 256, bytes >= threshold ? alignment : 0)`. When that is 256 the request goes to the
 * upstream unchanged. Otherwise the upstream is asked for `align_up(bytes, effective) +
 * (effective - 256)` bytes at alignment 256, which holds an `effective`-aligned span of
 * `align_up(bytes, effective)` bytes wherever the upstream places it; the aligned pointer is
 * returned and, if it differs from the upstream's, remembered. Deallocation recomputes the
 * effective alignment from the same `bytes` and `a` and so finds the same path again.
 */
class aligned_resource_adaptor_impl {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "aligned_resource_adaptor";

 public:
  static constexpr std::size_t default_alignment_threshold = 0;

  aligned_resource_adaptor_impl(upstream_t upstream,
                                std::size_t alignment,
                                std::size_t alignment_threshold)
      : upstream_{std::move(upstream)},
        alignment_{std::max(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT)},
        alignment_threshold_{alignment_threshold} {
    RMM_EXPECTS(
        rmm::is_supported_alignment(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }

  aligned_resource_adaptor_impl(aligned_resource_adaptor_impl const&)            = delete;
  aligned_resource_adaptor_impl& operator=(aligned_resource_adaptor_impl const&) = delete;
  ~aligned_resource_adaptor_impl()                                               = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    std::size_t const effective = effective_alignment(bytes, alignment);
    if (effective == 0) {
      return upstream_.allocate(stream, bytes, passthrough(alignment));
    }
    std::size_t const size = upstream_size(bytes, effective);
    void* raw              = nullptr;
    try {
      raw = upstream_.allocate(stream, size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    } catch (rmm::out_of_memory const& e) {
      throw_out_of_memory(bytes, size, e);
    }
    try {
      return remember(raw, effective);
    } catch (...) {
      upstream_.deallocate(stream, raw, size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      throw;
    }
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    std::size_t const effective = effective_alignment_unchecked(bytes, alignment);
    if (effective == 0) {
      upstream_.deallocate(stream, ptr, bytes, passthrough(alignment));
      return;
    }
    if (ptr == nullptr) {
      return;
    }
    upstream_.deallocate(
        stream, forget(ptr), upstream_size(bytes, effective), rmm::CUDA_ALLOCATION_ALIGNMENT);
  }

  // The synchronous forms use the upstream's own synchronous forms, with the same layout.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    std::size_t const effective = effective_alignment(bytes, alignment);
    if (effective == 0) {
      return upstream_.allocate_sync(bytes, passthrough(alignment));
    }
    std::size_t const size = upstream_size(bytes, effective);
    void* raw              = nullptr;
    try {
      raw = upstream_.allocate_sync(size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    } catch (rmm::out_of_memory const& e) {
      throw_out_of_memory(bytes, size, e);
    }
    try {
      return remember(raw, effective);
    } catch (...) {
      upstream_.deallocate_sync(raw, size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      throw;
    }
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t const effective = effective_alignment_unchecked(bytes, alignment);
    if (effective == 0) {
      upstream_.deallocate_sync(ptr, bytes, passthrough(alignment));
      return;
    }
    if (ptr == nullptr) {
      return;
    }
    upstream_.deallocate_sync(
        forget(ptr), upstream_size(bytes, effective), rmm::CUDA_ALLOCATION_ALIGNMENT);
  }

  friend bool operator==(aligned_resource_adaptor_impl const& a,
                         aligned_resource_adaptor_impl const& b) noexcept {
    return &a == &b;
  }
  friend bool operator!=(aligned_resource_adaptor_impl const& a,
                         aligned_resource_adaptor_impl const& b) noexcept {
    return &a != &b;
  }

  friend aligned_resource_adaptor_impl* get_property(
      aligned_resource_adaptor_impl const& self, state_of<aligned_resource_adaptor_impl>) noexcept {
    return const_cast<aligned_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }
  [[nodiscard]] std::size_t alignment_threshold() const noexcept { return alignment_threshold_; }

  /// @brief Allocations whose upstream pointer differs from the aligned one (for tests).
  [[nodiscard]] std::size_t tracked_allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pointers_.size();
  }

 private:
  // The largest per-call alignment: the adaptor's own (which is at least 256).
  [[nodiscard]] std::size_t max_alignment() const noexcept { return alignment_; }

  // 0 means "pass the request through unchanged"; otherwise the alignment to pad for.
  [[nodiscard]] std::size_t effective_alignment(std::size_t bytes, std::size_t alignment) const {
    RMM_EXPECTS(
        rmm::is_supported_alignment(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
    RMM_EXPECTS(alignment <= max_alignment(),
                std::string{name} + ": alignment " + std::to_string(alignment) +
                    " exceeds the largest supported alignment " + std::to_string(max_alignment()));
    std::size_t const effective    = effective_alignment_unchecked(bytes, alignment);
    constexpr std::size_t max_size = std::numeric_limits<std::size_t>::max();
    if (effective != 0 && (effective > max_size / 4 || bytes > max_size - 2 * effective)) {
      out_of_memory_report report;
      report.resource        = name;
      report.requested_bytes = bytes;
      report.reason = "aligned to " + std::to_string(effective) + ", the padded size overflows";
      rmm::detail::add_device_memory(report);
      throw rmm::out_of_memory(std::move(report));
    }
    return effective;
  }

  [[nodiscard]] std::size_t effective_alignment_unchecked(std::size_t bytes,
                                                          std::size_t alignment) const noexcept {
    if (bytes == 0) {
      return 0;  // nothing to align: the upstream decides what a 0-byte request returns
    }
    std::size_t effective = std::max(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT);
    if (bytes >= alignment_threshold_) {
      effective = std::max(effective, alignment_);
    }
    return effective == rmm::CUDA_ALLOCATION_ALIGNMENT ? 0 : effective;
  }

  // What a passed-through request asks of the upstream: the caller's alignment, which is at most
  // 256 unless the request is for 0 bytes (then nothing is aligned and 256 is always supported).
  [[nodiscard]] static std::size_t passthrough(std::size_t alignment) noexcept {
    return std::min(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }

  // Every byte of the aligned span [p, p + align_up(bytes, alignment)) lies in the upstream
  // allocation, wherever in its first (alignment - 256) bytes the aligned pointer falls.
  [[nodiscard]] static std::size_t upstream_size(std::size_t bytes,
                                                 std::size_t alignment) noexcept {
    return rmm::align_up(bytes, alignment) + (alignment - rmm::CUDA_ALLOCATION_ALIGNMENT);
  }

  void* remember(void* raw, std::size_t alignment) {
    auto const address = reinterpret_cast<std::uintptr_t>(raw);
    void* aligned      = reinterpret_cast<void*>(rmm::align_up(address, alignment));
    if (aligned != raw) {
      std::lock_guard<std::mutex> lock(mutex_);
      bool const inserted = pointers_.emplace(aligned, raw).second;
      RMM_EXPECTS(inserted,
                  std::string{name} + ": the upstream returned memory that holds a live " +
                      "allocation's aligned pointer");
    }
    return aligned;
  }

  // The upstream pointer of an aligned pointer: itself unless remembered.
  void* forget(void* aligned) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    auto const found = pointers_.find(aligned);
    if (found == pointers_.end()) {
      return aligned;
    }
    void* raw = found->second;
    pointers_.erase(found);
    return raw;
  }

  // The upstream's report (its figures: this adaptor holds no memory) under the adaptor's name
  // and the caller's request; the reason names the padded size and the upstream's failure.
  [[noreturn]] static void throw_out_of_memory(std::size_t bytes,
                                               std::size_t size,
                                               rmm::out_of_memory const& e) {
    throw rmm::out_of_memory(rmm::detail::adaptor_report(
        name,
        bytes,
        "(" + std::to_string(size) + " with alignment padding) from the upstream: ",
        e));
  }

  upstream_t mutable upstream_;
  std::size_t alignment_;
  std::size_t alignment_threshold_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, void*> pointers_;  // aligned pointer -> upstream pointer
};

}  // namespace rmm::mr::detail
