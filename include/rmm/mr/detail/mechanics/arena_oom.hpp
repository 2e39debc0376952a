/**
 * @file arena_oom.hpp
 * @brief The out-of-memory reports of arena_memory_resource, and the names it gives streams in
 * them and in its failure dump.
 *
 * Thread-safety: pure functions (the device query changes nothing the caller can see); safe to
 * call concurrently.
 */
#pragma once

#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace rmm::mr::detail {

/// @brief The arena's name for the stream of @p key: "legacy default", "per-thread default of
/// thread N", or the handle in hexadecimal.
[[nodiscard]] inline std::string arena_stream_name(stream_key const& key) {
  if (key.handle == cudaStreamLegacy) {
    return "legacy default";
  }
  if (key.per_thread()) {
    std::ostringstream os;
    os << "per-thread default of thread " << key.owner;
    return os.str();
  }
  return format_hex(reinterpret_cast<std::uintptr_t>(key.handle));
}

/// @brief What an arena holds when a request fails: its size, and the free bytes and largest
/// free block over the global arena and every stream arena.
struct arena_figures {
  std::size_t arena_size{};  ///< the global arena's size: all the arena holds and may hold
  std::size_t free_bytes{};  ///< free in the global and the stream arenas
  std::size_t largest{};     ///< the largest free block anywhere
};

/**
 * @brief The report of a request of @p bytes on @p stream that the arena could not serve:
 * @p why followed by the arena size as reason, the figures, the stream (as passed) and device
 * @p device (the current one if negative) with its memory.
 */
[[nodiscard]] inline out_of_memory_report arena_oom_report(std::size_t bytes,
                                                           cudaStream_t stream,
                                                           arena_figures const& figures,
                                                           char const* why,
                                                           int device) {
  out_of_memory_report report;
  report.resource        = "arena_memory_resource";
  report.requested_bytes = bytes;
  report.reason = std::string{why} + " " + std::to_string(figures.arena_size) + " bytes (stream " +
                  arena_stream_name(stream_key::of(stream)) + ")";
  report.reserved_bytes     = figures.arena_size;
  report.used_bytes         = figures.arena_size - std::min(figures.arena_size, figures.free_bytes);
  report.free_bytes         = figures.free_bytes;
  report.largest_free_block = figures.largest;
  report.maximum_bytes      = figures.arena_size;
  report.stream             = reinterpret_cast<std::uintptr_t>(stream);
  rmm::detail::add_device_memory(report, device);
  return report;
}

/**
 * @brief The report of an arena of @p size bytes that its upstream could not provide at
 * construction (@p e): the arena size as the request, nothing held yet, the upstream's failure
 * as reason, and device @p device (the current one if negative) with its memory.
 */
[[nodiscard]] inline out_of_memory_report arena_upstream_report(std::size_t size,
                                                                rmm::out_of_memory const& e,
                                                                int device) {
  out_of_memory_report report;
  report.resource        = "arena_memory_resource";
  report.requested_bytes = size;
  report.reason          = "the global arena of " + std::to_string(size) +
                  " bytes could not be had from the upstream: " + rmm::detail::upstream_failure(e);
  report.reserved_bytes = 0;
  rmm::detail::add_device_memory(report, device);
  return report;
}

}  // namespace rmm::mr::detail
