/**
 * @file oom_report.hpp
 * @brief Helpers of the resources that build an out_of_memory_report from an upstream's failure:
 * the failure in words (for a reason), and the report of an adaptor that passes an upstream's
 * out_of_memory on with its own name and request.
 *
 * Thread-safety: pure functions; safe to call concurrently.
 */
#pragma once

#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cstddef>
#include <exception>
#include <string>
#include <utility>

namespace rmm::detail {

/**
 * @brief The message of @p e without the prefixes that what() puts before it ("std::bad_alloc: ",
 * then "out_of_memory: "), for quoting an upstream's failure in a reason.
 * @throws std::bad_alloc if the string cannot be allocated.
 */
[[nodiscard]] inline std::string oom_message(std::exception const& e) {
  std::string text = e.what();
  for (char const* prefix : {"std::bad_alloc: ", "out_of_memory: "}) {
    std::string const p{prefix};
    if (text.compare(0, p.size(), p) == 0) {
      text.erase(0, p.size());
    }
  }
  return text;
}

/**
 * @brief An upstream's failure in words, for the reason of the resource that asked it: the
 * upstream's report written out without its device and stream (the asking resource reports its
 * own), or, for an exception without a report, its message without the what() prefixes.
 * @throws std::bad_alloc if the string cannot be allocated.
 */
[[nodiscard]] inline std::string upstream_failure(std::exception const& e) {
  if (auto const* oom = dynamic_cast<rmm::out_of_memory const*>(&e);
      oom != nullptr && oom->report() != nullptr) {
    out_of_memory_report inner = *oom->report();
    inner.device.reset();
    inner.device_free_bytes.reset();
    inner.device_total_bytes.reset();
    inner.stream.reset();
    return to_string(inner);
  }
  return oom_message(e);
}

/**
 * @brief The reason of @p e's report, or (without a report) its message.
 * @throws std::bad_alloc if the string cannot be allocated.
 */
[[nodiscard]] inline std::string oom_reason(rmm::out_of_memory const& e) {
  return e.report() != nullptr ? e.report()->reason : oom_message(e);
}

/**
 * @brief The report of a sharded resource named @p resource whose last try (its root) threw
 * @p last after a child threw @p first: the root's report (or one naming only the resource and
 * the @p requested bytes), with as reason the child's, then @p bridge, then the root's
 * (@p last_reason, the root's reason as the caller wants it quoted).
 * @throws std::bad_alloc if the strings cannot be allocated.
 */
[[nodiscard]] inline out_of_memory_report sharded_report(char const* resource,
                                                         std::size_t requested,
                                                         rmm::out_of_memory const& first,
                                                         rmm::out_of_memory const& last,
                                                         std::string const& bridge,
                                                         std::string const& last_reason) {
  out_of_memory_report report;
  if (last.report() != nullptr) {
    report = *last.report();
  } else {
    report.resource        = resource;
    report.requested_bytes = requested;
  }
  report.reason = oom_reason(first) + bridge + last_reason;
  return report;
}

/**
 * @brief The report of an adaptor named @p resource that holds no memory and asked its upstream
 * for more than the caller's @p requested bytes (padding), after the upstream threw @p e: the
 * upstream's figures (reserved, free, device, ...; none if @p e has no report), the adaptor's
 * name and the caller's request, and as reason @p qualifier followed by the upstream's resource,
 * request and reason (or its message, without a report).
 * @throws std::bad_alloc if the strings cannot be allocated.
 */
[[nodiscard]] inline out_of_memory_report adaptor_report(char const* resource,
                                                         std::size_t requested,
                                                         std::string const& qualifier,
                                                         rmm::out_of_memory const& e) {
  out_of_memory_report report;
  std::string upstream;
  if (e.report() != nullptr) {
    report   = *e.report();
    upstream = report.resource.empty()
                   ? report.reason
                   : report.resource + " could not allocate " +
                         std::to_string(report.requested_bytes) + " bytes: " + report.reason;
  } else {
    upstream = oom_message(e);
  }
  report.resource        = resource;
  report.requested_bytes = requested;
  report.reason          = qualifier + upstream;
  return report;
}

}  // namespace rmm::detail
