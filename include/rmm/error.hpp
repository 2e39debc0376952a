/**
 * @file error.hpp
 * @brief Exception types of the library and the macros that check conditions and CUDA calls.
 *
 * Every exception thrown by the library carries a message that names the value that was wrong
 * and the source location of the check. All types and macros here are thread-safe (they hold no
 * shared state).
 */
#pragma once

#include <rmm/detail/cccl_version.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda_runtime_api.h>

#include <cassert>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm {

/**
 * @brief Thrown when a precondition of the library is violated (a bad argument, a call in the
 * wrong state).
 */
class logic_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/**
 * @brief Thrown when a CUDA runtime or driver call fails for a reason other than running out of
 * memory during an allocation.
 */
class cuda_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/**
 * @brief Thrown when an allocation fails for a reason other than exhausted memory (for example
 * an invalid argument reported by CUDA). Derives from `std::bad_alloc` so that code written for
 * the standard library catches it.
 *
 * Copying never throws (the message is shared between copies, as std::runtime_error's is), so
 * the exception may be copied while another is in flight. Thread-safety: a thrown exception may
 * be read (what()) from several threads at once.
 */
class bad_alloc : public std::bad_alloc {
 public:
  /// @brief Constructs the exception; `what()` returns "std::bad_alloc: " followed by @p msg.
  /// @throws std::bad_alloc if the message cannot be stored.
  explicit bad_alloc(const char* msg)
      : what_{std::make_shared<std::string const>(std::string{"std::bad_alloc: "} + msg)} {}
  /// @copydoc bad_alloc(const char*)
  explicit bad_alloc(std::string const& msg) : bad_alloc{msg.c_str()} {}
  /// @brief The message given at construction, prefixed with "std::bad_alloc: ".
  [[nodiscard]] const char* what() const noexcept override { return what_->c_str(); }

 private:
  std::shared_ptr<std::string const> what_;  // never null
};

/**
 * @brief Thrown when an allocation fails because the memory it draws on is exhausted (CUDA
 * reported out-of-memory, or a pool reached its maximum). `what()` begins with
 * "std::bad_alloc: out_of_memory: ".
 *
 * Every resource of this library throws it with an out_of_memory_report, which report() returns:
 * the request, the resource, its memory, the device's, and the reason, as data; the message is
 * written from the report (rmm::to_string). An exception constructed from a plain string (as
 * RMM's and user code do) has no report.
 *
 * Copying never throws (the message and the report are shared between copies). Thread-safety: a
 * thrown exception and its report may be read from several threads at once.
 */
class out_of_memory : public bad_alloc {
 public:
  /// @brief Constructs the exception without a report; `what()` is "std::bad_alloc:
  /// out_of_memory: " followed by @p msg. @throws std::bad_alloc if the message cannot be stored.
  explicit out_of_memory(const char* msg) : bad_alloc{std::string{"out_of_memory: "} + msg} {}
  /// @copydoc out_of_memory(const char*)
  explicit out_of_memory(std::string const& msg) : out_of_memory{msg.c_str()} {}
  /**
   * @brief Constructs the exception carrying @p report; `what()` is "std::bad_alloc:
   * out_of_memory: " followed by `rmm::to_string(report)`.
   * @throws std::bad_alloc if the message or the report cannot be stored.
   */
  explicit out_of_memory(out_of_memory_report report)
      : bad_alloc{"out_of_memory: " + to_string(report)},
        report_{std::make_shared<out_of_memory_report const>(std::move(report))} {}

  /**
   * @brief The report the exception was constructed with, or nullptr for an exception
   * constructed from a plain string. Valid as long as the exception or a copy of it lives.
   */
  [[nodiscard]] out_of_memory_report const* report() const noexcept { return report_.get(); }

 private:
  std::shared_ptr<out_of_memory_report const> report_;
};

/**
 * @brief Thrown when an argument lies outside its valid range (for example a device id beyond the
 * number of devices).
 */
class out_of_range : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

/**
 * @brief Thrown when an argument cannot be interpreted (for example a malformed size string).
 */
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

/// @brief "file:line" for messages.
inline std::string source_location(const char* file, int line) {
  return std::string{file} + ":" + std::to_string(line);
}

/**
 * @brief The message of a failed check: "RMM failure at: FILE:LINE: " followed by @p reason, the
 * text RMM's RMM_EXPECTS produces, so that code matching on RMM's messages keeps working.
 */
inline std::string expects_message(const char* file, int line, std::string const& reason) {
  return "RMM failure at: " + source_location(file, line) + ": " + reason;
}

/**
 * @brief The message of RMM_FAIL: "RMM failure at:FILE:LINE: " followed by @p reason. RMM writes
 * no space after the colon here (unlike RMM_EXPECTS); the text is kept byte for byte.
 */
inline std::string fail_message(const char* file, int line, std::string const& reason) {
  return "RMM failure at:" + source_location(file, line) + ": " + reason;
}

/**
 * @brief The message of a failed CUDA call. RMM's text comes first ("CUDA error at: FILE:LINE:
 * cudaErrorName error string"); this library then adds the call and the numeric code.
 */
inline std::string cuda_error_message(cudaError_t status,
                                      const char* call,
                                      const char* file,
                                      int line) {
  return "CUDA error at: " + source_location(file, line) + ": " + cudaGetErrorName(status) + " " +
         cudaGetErrorString(status) + " (call: " + call + ", error code " +
         std::to_string(static_cast<int>(status)) + ")";
}

/// @brief Clears a non-sticky error left in the runtime's per-thread error slot, so that a later,
/// unrelated `cudaGetLastError()` does not report it again.
inline void clear_last_cuda_error() noexcept { static_cast<void>(cudaGetLastError()); }

/**
 * @brief Throws the exception that a failed CUDA allocation call maps to: `rmm::out_of_memory`
 * for `cudaErrorMemoryAllocation`, `rmm::bad_alloc` otherwise.
 *
 * The out_of_memory carries a report without a resource name (a bare call): the requested bytes
 * (when known, @p has_bytes), the current device and its free and total memory as reported after
 * the failure, and as reason RMM's text: "CUDA error (failed to allocate N bytes) at: FILE:LINE:
 * cudaErrorName error string" when the size is known, "CUDA error at: FILE:LINE: ..." otherwise,
 * followed by the call and the error code. The message therefore begins with RMM's text. A
 * bad_alloc gets the same message.
 */
[[noreturn]] inline void throw_cuda_alloc_error(cudaError_t status,
                                                const char* call,
                                                bool has_bytes,
                                                std::size_t bytes,
                                                const char* file,
                                                int line) {
  clear_last_cuda_error();
  out_of_memory_report report;
  report.requested_bytes = has_bytes ? bytes : 0;
  report.reason          = has_bytes
                               ? "CUDA error (failed to allocate " + std::to_string(bytes) + " bytes) at: "
                               : std::string{"CUDA error at: "};
  report.reason += source_location(file, line) + ": " + cudaGetErrorName(status) + " " +
                   cudaGetErrorString(status) + "; call: " + call + " (error code " +
                   std::to_string(static_cast<int>(status)) + ")";
  add_device_memory(report);
  if (status == cudaErrorMemoryAllocation) {
    throw rmm::out_of_memory{std::move(report)};
  }
  throw rmm::bad_alloc{to_string(report)};
}

/**
 * @brief For a resource whose allocation is one CUDA call (@p call, e.g. "cudaMalloc") that
 * returned @p status: throws `rmm::out_of_memory` for `cudaErrorMemoryAllocation`, with a report
 * naming @p resource, the requested @p bytes, the current device and its free and total memory,
 * and as reason the call and the error; `rmm::bad_alloc` with the same message otherwise. Clears
 * the non-sticky error first.
 */
[[noreturn]] inline void throw_resource_cuda_alloc_error(const char* resource,
                                                         cudaError_t status,
                                                         const char* call,
                                                         std::size_t bytes) {
  clear_last_cuda_error();
  out_of_memory_report report;
  report.resource        = resource;
  report.requested_bytes = bytes;
  report.reason          = std::string{call} + " returned " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ")";
  add_device_memory(report);
  if (status == cudaErrorMemoryAllocation) {
    throw rmm::out_of_memory{std::move(report)};
  }
  throw rmm::bad_alloc{to_string(report)};
}

/// @brief Throws a cuda_error for a failed call after clearing the non-sticky error.
template <typename Exception = rmm::cuda_error>
[[noreturn]] void throw_cuda_error(cudaError_t status,
                                   const char* call,
                                   const char* file,
                                   int line) {
  clear_last_cuda_error();
  throw Exception{cuda_error_message(status, call, file, line)};
}

/// @brief In debug builds, reports a CUDA call that an RMM_ASSERT_CUDA_SUCCESS* macro is about to
/// assert on, as RMM does ("CUDA Error detected. name string" on standard error).
inline void report_cuda_assert_failure(cudaError_t status) noexcept {
  std::fprintf(
      stderr, "CUDA Error detected. %s %s\n", cudaGetErrorName(status), cudaGetErrorString(status));
}

}  // namespace detail
}  // namespace rmm

#define RMM_DETAIL_STRINGIFY(x) #x
#define RMM_DETAIL_GET_3RD(a, b, c, ...) c
#define RMM_DETAIL_GET_4TH(a, b, c, d, ...) d

/**
 * @brief Throws `rmm::logic_error` (or the exception type given third, which must derive from
 * `std::exception`) when @p condition is false. `what()` is "RMM failure at: FILE:LINE: " followed
 * by @p reason (a string literal or a `std::string`), as in RMM.
 *
 * `RMM_EXPECTS(p != nullptr, "ptr must not be null")` or
 * `RMM_EXPECTS(n <= max, "n " + std::to_string(n) + " exceeds " + ..., rmm::out_of_range)`.
 */
#define RMM_EXPECTS(...)                                                              \
  RMM_DETAIL_GET_4TH(__VA_ARGS__, RMM_DETAIL_EXPECTS_3, RMM_DETAIL_EXPECTS_2, unused) \
  (__VA_ARGS__)
#define RMM_DETAIL_EXPECTS_2(condition, reason) \
  RMM_DETAIL_EXPECTS_3(condition, reason, rmm::logic_error)
#define RMM_DETAIL_EXPECTS_3(condition, reason, exception_type)                         \
  do {                                                                                  \
    static_assert(std::is_base_of_v<std::exception, exception_type>,                    \
                  "RMM_EXPECTS: the exception type must derive from std::exception");   \
    if (!(condition)) {                                                                 \
      throw exception_type(rmm::detail::expects_message(__FILE__, __LINE__, (reason))); \
    }                                                                                   \
  } while (0)

/**
 * @brief Unconditionally throws `rmm::logic_error` (or the exception type given second).
 * `what()` is "RMM failure at:FILE:LINE: " followed by @p reason: RMM's text for RMM_FAIL, which
 * has no space after "at:".
 */
#define RMM_FAIL(...) \
  RMM_DETAIL_GET_3RD(__VA_ARGS__, RMM_DETAIL_FAIL_2, RMM_DETAIL_FAIL_1, unused)(__VA_ARGS__)
#define RMM_DETAIL_FAIL_1(reason) RMM_DETAIL_FAIL_2(reason, rmm::logic_error)
#define RMM_DETAIL_FAIL_2(reason, exception_type) \
  throw exception_type(rmm::detail::fail_message(__FILE__, __LINE__, (reason)))

/**
 * @brief Calls a CUDA runtime function and throws `rmm::cuda_error` (or the exception type given
 * second) if it does not return `cudaSuccess`. The non-sticky error is cleared first so that it
 * does not resurface later. `what()` is RMM's "CUDA error at: FILE:LINE: cudaErrorName error
 * string", followed by the call's text and the numeric error code.
 */
#define RMM_CUDA_TRY(...) \
  RMM_DETAIL_GET_3RD(__VA_ARGS__, RMM_DETAIL_CUDA_TRY_2, RMM_DETAIL_CUDA_TRY_1, unused)(__VA_ARGS__)
#define RMM_DETAIL_CUDA_TRY_1(call) RMM_DETAIL_CUDA_TRY_2(call, rmm::cuda_error)
#define RMM_DETAIL_CUDA_TRY_2(call, exception_type)                           \
  do {                                                                        \
    cudaError_t const rmm_detail_status = (call);                             \
    if (cudaSuccess != rmm_detail_status) {                                   \
      rmm::detail::throw_cuda_error<exception_type>(                          \
          rmm_detail_status, RMM_DETAIL_STRINGIFY(call), __FILE__, __LINE__); \
    }                                                                         \
  } while (0)

/**
 * @brief Calls a CUDA allocation function. On `cudaErrorMemoryAllocation` throws
 * `rmm::out_of_memory`, on any other error `rmm::bad_alloc`; the non-sticky error is cleared.
 *
 * `what()` begins with RMM's text, "CUDA error (failed to allocate N bytes) at: FILE:LINE:
 * cudaErrorName error string" when the requested bytes are given as the second argument, "CUDA
 * error at: FILE:LINE: ..." when not; it goes on with the call, the requested bytes, the device
 * and its free memory.
 */
#define RMM_CUDA_TRY_ALLOC(...)                                                      \
  RMM_DETAIL_GET_3RD(                                                                \
      __VA_ARGS__, RMM_DETAIL_CUDA_TRY_ALLOC_2, RMM_DETAIL_CUDA_TRY_ALLOC_1, unused) \
  (__VA_ARGS__)
#define RMM_DETAIL_CUDA_TRY_ALLOC_1(call)                                               \
  do {                                                                                  \
    cudaError_t const rmm_detail_status = (call);                                       \
    if (cudaSuccess != rmm_detail_status) {                                             \
      rmm::detail::throw_cuda_alloc_error(                                              \
          rmm_detail_status, RMM_DETAIL_STRINGIFY(call), false, 0, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)
#define RMM_DETAIL_CUDA_TRY_ALLOC_2(call, num_bytes)                           \
  do {                                                                         \
    cudaError_t const rmm_detail_status = (call);                              \
    if (cudaSuccess != rmm_detail_status) {                                    \
      rmm::detail::throw_cuda_alloc_error(rmm_detail_status,                   \
                                          RMM_DETAIL_STRINGIFY(call),          \
                                          true,                                \
                                          static_cast<std::size_t>(num_bytes), \
                                          __FILE__,                            \
                                          __LINE__);                           \
    }                                                                          \
  } while (0)

/**
 * @brief For calls that must not throw (destructors, deallocation): in debug builds reports a
 * failure on standard error ("CUDA Error detected. ...", as RMM does) and asserts that the call
 * returned `cudaSuccess`; in release builds evaluates the call and discards the status. Both
 * clear the non-sticky error.
 */
#ifdef NDEBUG
#define RMM_ASSERT_CUDA_SUCCESS(call)     \
  do {                                    \
    static_cast<void>(call);              \
    rmm::detail::clear_last_cuda_error(); \
  } while (0)
#else
#define RMM_ASSERT_CUDA_SUCCESS(call)                             \
  do {                                                            \
    cudaError_t const rmm_detail_status = (call);                 \
    rmm::detail::clear_last_cuda_error();                         \
    if (rmm_detail_status != cudaSuccess) {                       \
      rmm::detail::report_cuda_assert_failure(rmm_detail_status); \
    }                                                             \
    assert(rmm_detail_status == cudaSuccess);                     \
    static_cast<void>(rmm_detail_status);                         \
  } while (0)
#endif

/**
 * @brief Like RMM_ASSERT_CUDA_SUCCESS, but also accepts the errors CUDA returns while the process
 * is shutting down (`cudaErrorCudartUnloading`, as RMM does, and `cudaErrorContextIsDestroyed`),
 * so that a destructor running during exit does not abort a debug build.
 */
#ifdef NDEBUG
#define RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(call) RMM_ASSERT_CUDA_SUCCESS(call)
#else
#define RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(call)                              \
  do {                                                                           \
    cudaError_t const rmm_detail_status = (call);                                \
    rmm::detail::clear_last_cuda_error();                                        \
    bool const rmm_detail_ok = rmm_detail_status == cudaSuccess ||               \
                               rmm_detail_status == cudaErrorCudartUnloading ||  \
                               rmm_detail_status == cudaErrorContextIsDestroyed; \
    if (!rmm_detail_ok) {                                                        \
      rmm::detail::report_cuda_assert_failure(rmm_detail_status);                \
    }                                                                            \
    assert(rmm_detail_ok);                                                       \
    static_cast<void>(rmm_detail_ok);                                            \
  } while (0)
#endif
