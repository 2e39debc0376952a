/**
 * @file out_of_memory_report.hpp
 * @brief What an `rmm::out_of_memory` carries as data: the request, the resource, its memory and
 * the device's, and the reason; and the function that writes a report as the exception's message.
 *
 * Thread-safety: a report is a plain value (copy it freely; reading one from several threads is
 * safe); `to_string` is a pure function.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rmm {

/**
 * @brief Why an allocation failed, as data: what `rmm::out_of_memory::report()` returns for every
 * out-of-memory that a resource of this library throws.
 *
 * Every field that the throwing resource knows is set; the others are empty (`std::nullopt`).
 * The memory figures are those of the resource named in `resource`, taken when the allocation
 * failed (other threads may have changed them since). Which resource is named:
 * - a resource that holds memory (a pool, an arena, a driver pool) names itself and gives its own
 *   figures; when its upstream failed, `reason` quotes the upstream's report;
 * - an adaptor that holds no memory but changes the request (aligned_resource_adaptor) names
 *   itself and the caller's request, and keeps the figures of the upstream's report;
 * - adaptors and routers that neither hold memory nor change the request (binning,
 *   unbounded_memory_resource, failure_callback, statistics, tracking, logging, thread_safe,
 *   prefetch) let the exception of the resource that ran out pass unchanged.
 */
struct out_of_memory_report {
  /// The resource that could not serve the request ("pool_memory_resource"); empty for a bare
  /// CUDA allocation call checked with RMM_CUDA_TRY_ALLOC.
  std::string resource;
  /// The bytes asked of `resource` (the caller's size, before any rounding; for a constructor,
  /// what it asked its upstream for). 0 only where the failure was not of a request (creating a
  /// driver pool) or a bare CUDA call was checked without its size.
  std::size_t requested_bytes{};
  /// The specific why, in words: "the limit of 1024 bytes would be exceeded", the CUDA call and
  /// error that failed, an upstream's report. A reason that begins with '(' qualifies the request
  /// ("(69376 with alignment padding)") and follows it in the message after a space.
  std::string reason;
  /// Bytes the resource holds from its upstream or the driver (a pool's size, an arena's size,
  /// a driver pool's reserved memory, the physical memory a virtual-memory resource maps).
  std::optional<std::size_t> reserved_bytes;
  /// Bytes the resource has handed out and not yet taken back (as it counts them: a limiting
  /// adaptor counts sizes rounded up to its alignment).
  std::optional<std::size_t> used_bytes;
  /// Bytes free inside the resource (held, not handed out); a stream-ordered pool counts the
  /// free blocks of every stream.
  std::optional<std::size_t> free_bytes;
  /// The largest request the resource could serve from its free memory without growing.
  std::optional<std::size_t> largest_free_block;
  /// The most the resource may hold or hand out: a pool's maximum size, a limit, a capacity.
  std::optional<std::size_t> maximum_bytes;
  /// The device whose memory was asked for; for pinned host memory, the device current at the
  /// failure (its context made the call). Empty where no CUDA device could be asked, and for
  /// resources of pageable host memory or of no memory at all (system, simulated).
  std::optional<int> device;
  /// `device`'s free memory as cudaMemGetInfo reported it after the failure.
  std::optional<std::size_t> device_free_bytes;
  /// `device`'s total memory as cudaMemGetInfo reported it.
  std::optional<std::size_t> device_total_bytes;
  /// The stream of a stream-ordered request: the `cudaStream_t` handle as an integer,
  /// `reinterpret_cast<std::uintptr_t>(stream)` (0 is the default stream, 1 `cudaStreamLegacy`,
  /// 2 `cudaStreamPerThread`). Empty for resources that ignore the stream (cudaMalloc,
  /// cudaMallocHost, system memory) and for requests made in constructors.
  std::optional<std::uintptr_t> stream;
};

namespace detail {

/// @brief "0x" followed by @p value in lower-case hexadecimal.
[[nodiscard]] inline std::string oom_hex(std::uintptr_t value) {
  constexpr char const* digits = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[value % 16]);
    value /= 16;
  } while (value != 0);
  return "0x" + out;
}

/// @brief "N bytes".
[[nodiscard]] inline std::string oom_bytes(std::size_t bytes) {
  return std::to_string(bytes) + " bytes";
}

}  // namespace detail

/**
 * @brief The message of an out_of_memory, written from @p report's fields (without the
 * "out_of_memory: " that `what()` puts before it).
 *
 * With a `resource`: "RESOURCE: cannot allocate N bytes: REASON [FIELDS]" ("N bytes" left out
 * when `requested_bytes` is 0; the reason after a space instead of ": " when it begins with '('),
 * where FIELDS lists, separated by "; ", each field
 * that is set, in this order and with these names: "reserved N bytes", "used N bytes", "free N
 * bytes", "largest free block N bytes", "maximum N bytes", "device D free F of T bytes" (or
 * "device D" when its memory is unknown), "stream 0x..." (the brackets are left out when no field
 * is set).
 *
 * Without a `resource` (a bare CUDA call checked by RMM_CUDA_TRY_ALLOC), RMM's layout, which
 * begins with the reason (RMM's text): "REASON; requested N bytes on device D; device free F of T
 * bytes", then any other field in brackets as above.
 *
 * @throws std::bad_alloc if the string cannot be allocated. Thread-safe (a pure function).
 */
[[nodiscard]] inline std::string to_string(out_of_memory_report const& report) {
  using detail::oom_bytes;
  std::string fields;
  auto const add = [&fields](std::string const& text) {
    fields += (fields.empty() ? "" : "; ") + text;
  };
  bool const named = !report.resource.empty();
  if (report.reserved_bytes) {
    add("reserved " + oom_bytes(*report.reserved_bytes));
  }
  if (report.used_bytes) {
    add("used " + oom_bytes(*report.used_bytes));
  }
  if (report.free_bytes) {
    add("free " + oom_bytes(*report.free_bytes));
  }
  if (report.largest_free_block) {
    add("largest free block " + oom_bytes(*report.largest_free_block));
  }
  if (report.maximum_bytes) {
    add("maximum " + oom_bytes(*report.maximum_bytes));
  }
  bool const device_memory = report.device_free_bytes && report.device_total_bytes;
  if (named && report.device) {
    add("device " + std::to_string(*report.device) +
        (device_memory ? " free " + std::to_string(*report.device_free_bytes) + " of " +
                             oom_bytes(*report.device_total_bytes)
                       : std::string{}));
  }
  if (report.stream) {
    add("stream " + detail::oom_hex(*report.stream));
  }
  std::string out;
  if (named) {
    out = report.resource + ": cannot allocate";
    if (report.requested_bytes != 0) {
      out += " " + oom_bytes(report.requested_bytes);
    }
    if (!report.reason.empty()) {
      out += (report.reason.front() == '(' ? " " : ": ") + report.reason;
    }
  } else {
    out = report.reason.empty() ? std::string{"out of memory"} : report.reason;
    if (report.requested_bytes != 0) {
      out += "; requested " + oom_bytes(report.requested_bytes);
    }
    if (report.device) {
      out += " on device " + std::to_string(*report.device);
    }
    if (device_memory) {
      out += "; device free " + std::to_string(*report.device_free_bytes) + " of " +
             oom_bytes(*report.device_total_bytes);
    }
  }
  if (!fields.empty()) {
    out += " [" + fields + "]";
  }
  return out;
}

}  // namespace rmm
