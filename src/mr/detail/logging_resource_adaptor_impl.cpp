// The CSV lines of logging_resource_adaptor. The format is RMM's, field by field:
//   Thread  the OS thread id in decimal (gettid() on Linux, as spdlog's %t writes it)
//   Time    local wall-clock time HH:MM:SS.uuuuuu (spdlog's %H:%M:%S.%f)
//   Action  allocate | allocate failure | free
//   Pointer printf's %p (0x7f70abe00000; a null pointer is "(nil)" with glibc)
//   Size    the requested bytes in decimal
//   Stream  the cudaStream_t as an ostream writes a pointer in hex: "0" for the default stream,
//           0x... otherwise (0x1 legacy, 0x2 per-thread)
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/logging_resource_adaptor_impl.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace rmm::mr::detail {
namespace {

unsigned long long current_thread_id() noexcept {
  thread_local unsigned long long const id = [] {
#if defined(__linux__)
    return static_cast<unsigned long long>(::syscall(SYS_gettid));
#else
    return static_cast<unsigned long long>(
        std::hash<std::thread::id>{}(std::this_thread::get_id()));
#endif
  }();
  return id;
}

}  // namespace

logging_resource_adaptor_impl::logging_resource_adaptor_impl(upstream_t upstream,
                                                             std::string const& filename,
                                                             bool auto_flush)
    : upstream_{std::move(upstream)}, out_{nullptr}, auto_flush_{auto_flush} {
  errno     = 0;
  auto file = std::make_unique<std::ofstream>(filename, std::ios::out | std::ios::trunc);
  if (!file->is_open()) {
    int const error = errno;
    RMM_FAIL("logging_resource_adaptor: cannot open log file \"" + filename +
             "\": " + (error != 0 ? std::strerror(error) : "unknown error"));
  }
  file_ = std::move(file);
  out_  = file_.get();
  write_header();
}

logging_resource_adaptor_impl::logging_resource_adaptor_impl(upstream_t upstream,
                                                             std::ostream& stream,
                                                             bool auto_flush)
    : upstream_{std::move(upstream)}, out_{&stream}, auto_flush_{auto_flush} {
  write_header();
}

// A named file is flushed and closed by its stream's destructor; a caller's stream is not
// touched, since it may already be gone when the last copy of the adaptor is destroyed.
logging_resource_adaptor_impl::~logging_resource_adaptor_impl() = default;

void logging_resource_adaptor_impl::write_header() {
  std::lock_guard<std::mutex> lock(mutex_);
  *out_ << header() << '\n';
  if (auto_flush_) {
    out_->flush();
  }
}

void logging_resource_adaptor_impl::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  out_->flush();
}

void logging_resource_adaptor_impl::log_event(action what,
                                              void const* ptr,
                                              std::size_t bytes,
                                              cudaStream_t stream) noexcept {
  try {
    char stream_text[2 + 2 * sizeof(std::uintptr_t) + 1];
    auto const handle = reinterpret_cast<std::uintptr_t>(stream);
    if (handle == 0) {
      std::snprintf(stream_text, sizeof(stream_text), "0");
    } else {
      std::snprintf(stream_text, sizeof(stream_text), "0x%" PRIxPTR, handle);
    }
    auto const thread      = current_thread_id();
    char const* const name = what == action::allocate           ? "allocate"
                             : what == action::allocate_failure ? "allocate failure"
                                                                : "free";

    std::lock_guard<std::mutex> lock(mutex_);
    // The time is read under the lock so that the lines of the file are in time order.
    auto const now            = std::chrono::system_clock::now();
    std::time_t const seconds = std::chrono::system_clock::to_time_t(now);
    auto const micros =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
        1000000;
    std::tm local{};
    localtime_r(&seconds, &local);
    char line[256];
    int const length = std::snprintf(line,
                                     sizeof(line),
                                     "%llu,%02d:%02d:%02d.%06lld,%s,%p,%zu,%s\n",
                                     thread,
                                     local.tm_hour,
                                     local.tm_min,
                                     local.tm_sec,
                                     static_cast<long long>(micros),
                                     name,
                                     ptr,
                                     bytes,
                                     stream_text);
    if (length > 0) {
      out_->write(line, std::min<std::streamsize>(length, sizeof(line) - 1));
    }
    if (auto_flush_) {
      out_->flush();
    }
  } catch (...) {
    // Logging must not turn an allocation or a free into a crash.
  }
}

}  // namespace rmm::mr::detail
