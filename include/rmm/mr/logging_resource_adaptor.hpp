/**
 * @file logging_resource_adaptor.hpp
 * @brief An adaptor that writes one CSV line per allocation and free passing through it.
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/logging_resource_adaptor_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>

#include <cstdlib>
#include <ostream>
#include <string>
#include <utility>

namespace rmm::mr {

/**
 * @brief Resource that uses an upstream resource to allocate memory and logs information about
 * the requested allocation/deallocations.
 *
 * The log is CSV: first the header `Thread,Time,Action,Pointer,Size,Stream`, then one line per
 * event, in the format of RMM's logs (which replay tools read):
 *
 * | column  | content |
 * | ------- | ------- |
 * | Thread  | OS thread id of the caller, decimal (gettid() on Linux) |
 * | Time    | local wall-clock time, `HH:MM:SS.uuuuuu` (microseconds) |
 * | Action  | `allocate`, `allocate failure` (the upstream threw; rethrown) or `free` |
 * | Pointer | printf's `%p`: `0x7f70abe00000`; a null pointer (failures, zero-byte requests of some
 * upstreams) is `(nil)` with glibc | | Size    | requested bytes, decimal | | Stream  | the CUDA
 * stream handle in hex: `0` for the default stream and for the synchronous calls, `0x1` legacy,
 * `0x2` per-thread, `0x...` others |
 *
 * for example `12345,16:36:53.204356,allocate,0x7f70abe00000,37632,0`. An allocation is logged
 * after the upstream returns, a free before the upstream is called. Lines are never interleaved:
 * each is written whole under a mutex, stamped with the time read under that mutex (so the
 * lines of one adaptor are in time order).
 *
 * Unlike RMM, no logging library is involved (this library keeps spdlog inside its compiled part
 * and out of its headers), so RMM's constructor taking a list of `rapids_logger` sinks is not
 * offered: log to a std::ostream of your own instead, which can forward anywhere.
 *
 * Thread-safety: every member may be called concurrently; one mutex per adaptor serialises the
 * writing of lines (and is the cost of the adaptor: one formatted line, and a flush with
 * auto_flush, per event).
 *
 * This class is copyable and shares ownership of its internal state via
 * cuda::mr::shared_resource: copies compare equal and write to the same destination.
 */
class logging_resource_adaptor
    : public cuda::mr::shared_resource<detail::logging_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::logging_resource_adaptor_impl>;

 public:
  /**
   * @brief Enables the cuda::mr::device_accessible property
   *
   * This property declares that a logging_resource_adaptor provides device accessible memory
   */
  friend void get_property(logging_resource_adaptor const&, cuda::mr::device_accessible) noexcept {}

  /**
   * @brief Construct a new logging resource adaptor using @p upstream to satisfy allocation
   * requests and logging information about each allocation/free to the file specified by
   * @p filename.
   *
   * The logfile will be written using CSV formatting. Clears the contents of @p filename if it
   * already exists. Creating multiple logging_resource_adaptors with the same @p filename
   * results in interleaved, unusable logs (copies of one adaptor share its file and are fine).
   *
   * @param upstream The resource used for allocating/deallocating device memory.
   * @param filename Name of file to write log info. If not specified, retrieves the file name
   * from the environment variable "RMM_LOG_FILE" (see get_default_filename()).
   * @param auto_flush If true, flushes the log for every (de)allocation. Warning, this will
   * degrade performance.
   * @throws rmm::logic_error if @p filename is defaulted and RMM_LOG_FILE is not set, or if the
   * file cannot be opened (the message names the file and the reason; RMM throws spdlog's
   * exception type here).
   */
  logging_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                           std::string const& filename = get_default_filename(),
                           bool auto_flush             = false)
      : shared_base{cuda::std::in_place_type<detail::logging_resource_adaptor_impl>,
                    std::move(upstream),
                    filename,
                    auto_flush} {}

  /**
   * @brief Construct a new logging resource adaptor using @p upstream to satisfy allocation
   * requests and logging information about each allocation/free to the ostream specified by
   * @p stream.
   *
   * The logfile will be written using CSV formatting. The header line is written at once.
   *
   * @param upstream The resource used for allocating/deallocating device memory.
   * @param stream The ostream to write log info; it must outlive every copy of the adaptor, and
   * nothing else may write to it while they log (the adaptor's mutex does not cover other
   * writers).
   * @param auto_flush If true, flushes the log for every (de)allocation. Warning, this will
   * degrade performance.
   */
  logging_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                           std::ostream& stream,
                           bool auto_flush = false)
      : shared_base{cuda::std::in_place_type<detail::logging_resource_adaptor_impl>,
                    std::move(upstream),
                    stream,
                    auto_flush} {}

  ~logging_resource_adaptor() = default;

  /**
   * @brief rmm::device_async_resource_ref to the upstream resource
   * @return rmm::device_async_resource_ref to the upstream resource
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return state().get_upstream_resource();
  }

  /**
   * @brief Flush logger contents (the file, or the caller's ostream). Thread-safe.
   */
  void flush() { state().flush(); }

  /**
   * @brief Return the CSV header string
   *
   * @return CSV formatted header string of column names: "Thread,Time,Action,Pointer,Size,Stream"
   */
  [[nodiscard]] std::string header() const {
    return detail::logging_resource_adaptor_impl::header();
  }

  /**
   * @brief Return the value of the environment variable RMM_LOG_FILE.
   *
   * @throws rmm::logic_error if `RMM_LOG_FILE` is not set.
   *
   * @return The value of RMM_LOG_FILE as `std::string`.
   */
  static std::string get_default_filename() {
    char const* filename = std::getenv("RMM_LOG_FILE");
    RMM_EXPECTS(filename != nullptr,
                "RMM logging requested without an explicit file name, but RMM_LOG_FILE is unset");
    return std::string{filename};
  }

 private:
  [[nodiscard]] detail::logging_resource_adaptor_impl& state() const noexcept {
    return detail::shared_state<detail::logging_resource_adaptor_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<logging_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
