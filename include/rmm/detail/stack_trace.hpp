/**
 * @file stack_trace.hpp
 * @brief The call stack at a point of the program, for debugging reports (tracking adaptor).
 */
#pragma once

#if defined(__has_include)
#if __has_include(<execinfo.h>) && __has_include(<cxxabi.h>)
#define RMM_DETAIL_HAVE_BACKTRACE 1
#endif
#endif

#ifdef RMM_DETAIL_HAVE_BACKTRACE
#include <cxxabi.h>
#include <execinfo.h>
#endif

#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace rmm::detail {

/**
 * @brief The return addresses of the calling thread's stack, captured at construction with
 * backtrace() from <execinfo.h> (glibc). Printing resolves them to symbol names (demangled where
 * possible) with backtrace_symbols(); functions with internal linkage or from objects without a
 * dynamic symbol table show as addresses (link with -rdynamic for names of the executable's own
 * functions).
 *
 * Where <execinfo.h> does not exist the trace is empty and prints a line saying so.
 *
 * Thread-safety: construction and printing touch only this object; distinct objects may be used
 * concurrently.
 */
class stack_trace {
 public:
  /// @brief Deepest stack captured, in frames.
  static constexpr int max_frames = 64;

  /// @brief Captures the calling thread's stack, up to max_frames frames. The innermost frames
  /// are the capturing code itself (where the compiler did not inline it).
  stack_trace() {
#ifdef RMM_DETAIL_HAVE_BACKTRACE
    frames_.resize(max_frames);
    int const depth = ::backtrace(frames_.data(), max_frames);
    frames_.resize(depth > 0 ? static_cast<std::size_t>(depth) : 0U);
#endif
  }

  /// @brief The captured return addresses, innermost first.
  [[nodiscard]] std::vector<void*> const& frames() const noexcept { return frames_; }

  /// @brief Writes one line per frame, `#<index> in <symbol>`, innermost first.
  friend std::ostream& operator<<(std::ostream& os, stack_trace const& trace) {
#ifdef RMM_DETAIL_HAVE_BACKTRACE
    if (trace.frames_.empty()) {
      return os << "(no frames captured)\n";
    }
    int const depth = static_cast<int>(trace.frames_.size());
    std::unique_ptr<char*, void (*)(void*)> symbols{
        ::backtrace_symbols(trace.frames_.data(), depth), std::free};
    for (int i = 0; i < depth; ++i) {
      os << '#' << i << " in ";
      if (symbols) {
        os << demangle(symbols.get()[i]);
      } else {
        os << trace.frames_[static_cast<std::size_t>(i)];
      }
      os << '\n';
    }
    return os;
#else
    static_cast<void>(trace);
    return os << "(stack traces are not supported on this platform)\n";
#endif
  }

 private:
#ifdef RMM_DETAIL_HAVE_BACKTRACE
  // backtrace_symbols gives "object(mangled+offset) [address]": the mangled name is demangled in
  // place when it is a C++ name.
  static std::string demangle(char const* symbol) {
    std::string line{symbol};
    auto const open = line.find('(');
    auto const plus = line.find('+', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || plus == std::string::npos || plus == open + 1) {
      return line;
    }
    std::string const mangled = line.substr(open + 1, plus - open - 1);
    int status{0};
    std::unique_ptr<char, void (*)(void*)> name{
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free};
    if (status != 0 || !name) {
      return line;
    }
    return line.substr(0, open + 1) + name.get() + line.substr(plus);
  }
#endif

  std::vector<void*> frames_;
};

}  // namespace rmm::detail
