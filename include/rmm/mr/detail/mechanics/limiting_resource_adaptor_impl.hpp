/**
 * @file limiting_resource_adaptor_impl.hpp
 * @brief Shared state of limiting_resource_adaptor: the upstream, the limit and an atomic count.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace rmm::mr::detail {

/// @brief Shared state of limiting_resource_adaptor. Not for direct use.
class limiting_resource_adaptor_impl : public stream_resource_base<limiting_resource_adaptor_impl> {
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  static constexpr char const* name = "limiting_resource_adaptor";

 public:
  limiting_resource_adaptor_impl(upstream_t upstream,
                                 std::size_t allocation_limit,
                                 std::size_t alignment)
      : upstream_{std::move(upstream)}, allocation_limit_{allocation_limit}, alignment_{alignment} {
    RMM_EXPECTS(
        rmm::is_pow2(alignment),
        std::string{name} + ": alignment " + std::to_string(alignment) + " is not a power of two");
  }

  limiting_resource_adaptor_impl(limiting_resource_adaptor_impl const&)            = delete;
  limiting_resource_adaptor_impl& operator=(limiting_resource_adaptor_impl const&) = delete;
  ~limiting_resource_adaptor_impl()                                                = default;

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    std::size_t const charged = reserve(bytes, reinterpret_cast<std::uintptr_t>(stream.get()));
    try {
      return upstream_.allocate(stream, bytes, alignment);
    } catch (...) {
      allocated_bytes_.fetch_sub(charged);
      throw;
    }
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    upstream_.deallocate(stream, ptr, bytes, alignment);
    allocated_bytes_.fetch_sub(rmm::align_up(bytes, alignment_));
  }

  // The synchronous forms go to the upstream's synchronous forms: see
  // statistics_resource_adaptor_impl for why.
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    std::size_t const charged = reserve(bytes, std::nullopt);
    try {
      return upstream_.allocate_sync(bytes, alignment);
    } catch (...) {
      allocated_bytes_.fetch_sub(charged);
      throw;
    }
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    upstream_.deallocate_sync(ptr, bytes, alignment);
    allocated_bytes_.fetch_sub(rmm::align_up(bytes, alignment_));
  }

  friend limiting_resource_adaptor_impl* get_property(
      limiting_resource_adaptor_impl const& self,
      state_of<limiting_resource_adaptor_impl>) noexcept {
    return const_cast<limiting_resource_adaptor_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{upstream_};
  }

  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept { return allocated_bytes_.load(); }
  [[nodiscard]] std::size_t get_allocation_limit() const noexcept { return allocation_limit_; }

 private:
  // Charges the request, rounded up to the adaptor's alignment, against the limit before the
  // upstream is asked, so that concurrent requests can never overshoot it together. Throws
  // out_of_memory (charging nothing) if it does not fit: its report gives the bytes in use (used),
  // the limit (maximum), the stream of a stream-ordered request and the current device.
  std::size_t reserve(std::size_t bytes, std::optional<std::uintptr_t> stream) {
    std::size_t in_use = allocated_bytes_.load();
    if (bytes <= max_request()) {
      std::size_t const charged = rmm::align_up(bytes, alignment_);
      while (charged <= allocation_limit_ && in_use <= allocation_limit_ - charged) {
        if (allocated_bytes_.compare_exchange_weak(in_use, in_use + charged)) {
          return charged;
        }
      }
    }
    out_of_memory_report report;
    report.resource        = name;
    report.requested_bytes = bytes;
    // RMM's text first ("Exceeded memory limit (failed to allocate 1.953125 KiB)"), then ours.
    report.reason = "Exceeded memory limit (failed to allocate " + format_bytes(bytes) +
                    "): the allocation limit of " + std::to_string(allocation_limit_) +
                    " bytes would be exceeded with " + std::to_string(in_use) +
                    " bytes in use (sizes count rounded up to multiples of " +
                    std::to_string(alignment_) + " bytes)";
    report.used_bytes    = in_use;
    report.maximum_bytes = allocation_limit_;
    report.stream        = stream;
    rmm::detail::add_device_memory(report);
    throw rmm::out_of_memory{std::move(report)};
  }

  // A size in the largest binary unit that leaves at most 1024 of it, as RMM writes sizes
  // ("1.953125 KiB").
  static std::string format_bytes(std::size_t bytes) {
    constexpr char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    auto value                    = static_cast<double>(bytes);
    std::size_t unit              = 0;
    while (value > 1024 && unit + 1 < sizeof(units) / sizeof(units[0])) {
      value /= 1024;
      ++unit;
    }
    return std::to_string(value) + ' ' + units[unit];
  }

  // The largest request whose rounding up does not wrap around.
  [[nodiscard]] std::size_t max_request() const noexcept { return ~std::size_t{0} - alignment_; }

  upstream_t mutable upstream_;
  std::size_t allocation_limit_;
  std::size_t alignment_;
  std::atomic<std::size_t> allocated_bytes_{0};
};

}  // namespace rmm::mr::detail
