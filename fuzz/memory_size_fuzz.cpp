/**
 * @file memory_size_fuzz.cpp
 * @brief libFuzzer target for rmm::parse_memory_size.
 *
 * Every input must either return a value or throw rmm::invalid_argument; any other exception
 * aborts. Each result is cross-checked against an independent reference parser that splits the
 * text from the end (unit suffix first) and computes in unsigned __int128, and the exception
 * message is checked to start with `invalid memory size "<escaped text>": ` and to give the reason
 * "overflow:" exactly when the reference says the text is well-formed but too large.
 *
 * Build: clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude
 *        -I/usr/local/cuda/include fuzz/memory_size_fuzz.cpp -L/usr/local/cuda/lib64 -lcudart
 */
#include <rmm/error.hpp>
#include <rmm/memory_size.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using u128 = unsigned __int128;

enum class verdict { valid, syntax_error, overflow };

struct reference_result {
  verdict kind;
  std::uint64_t value;
};

bool all_digits(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char const c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

// Independent reference: unit taken from the end, then trailing spaces, then "int[.frac]".
reference_result reference_parse(std::string_view text) {
  struct unit_entry {
    std::string_view name;
    unsigned shift;
  };
  static constexpr unit_entry units[] = {{"TB", 40}, {"GB", 30}, {"MB", 20}, {"KB", 10}};
  unsigned shift                      = 0;
  std::string_view body;
  bool found = false;
  for (auto const& u : units) {
    if (text.size() >= 2 && text.substr(text.size() - 2) == u.name) {
      shift = u.shift;
      body  = text.substr(0, text.size() - 2);
      found = true;
      break;
    }
  }
  if (!found) {
    if (text.empty() || text.back() != 'B') {
      return {verdict::syntax_error, 0};
    }
    body = text.substr(0, text.size() - 1);
  }
  while (!body.empty() && body.back() == ' ') {
    body.remove_suffix(1);
  }
  std::string_view integer = body;
  auto const dot           = body.find('.');
  if (dot != std::string_view::npos) {
    integer = body.substr(0, dot);
    if (!all_digits(body.substr(dot + 1))) {
      return {verdict::syntax_error, 0};
    }
  }
  if (!all_digits(integer)) {
    return {verdict::syntax_error, 0};
  }

  u128 const cap = u128{1} << 70U;  // anything >= 2^64 overflows; saturate well above
  u128 value     = 0;
  for (char const c : integer) {
    value = value * 10U + static_cast<unsigned>(c - '0');
    if (value > cap) {
      value = cap;
    }
  }
  value <<= shift;  // at most 2^70 * 2^40 = 2^110: no wrap-around
  if (value > u128{UINT64_MAX}) {
    return {verdict::overflow, 0};
  }
  return {verdict::valid, static_cast<std::uint64_t>(value)};
}

std::string reference_quote(std::string_view text) {
  std::string out = "\"";
  for (char const c : text) {
    auto const b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (b >= 0x20 && b <= 0x7E) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", static_cast<unsigned>(b));
      out += buf;
    }
  }
  out += '"';
  return out;
}

[[noreturn]] void fail(char const* what, std::string_view text) {
  std::fprintf(stderr, "memory_size_fuzz: %s for input %s\n", what, reference_quote(text).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view const text{reinterpret_cast<char const*>(data), size};
  reference_result const expected = reference_parse(text);
  try {
    std::size_t const value = rmm::parse_memory_size(text);
    if (expected.kind != verdict::valid) {
      fail("parser accepted, reference rejected", text);
    }
    if (value != expected.value) {
      fail("parser and reference disagree on the value", text);
    }
  } catch (rmm::invalid_argument const& e) {
    if (expected.kind == verdict::valid) {
      fail("parser rejected, reference accepted", text);
    }
    std::string_view const message{e.what()};
    std::string const prefix = "invalid memory size " + reference_quote(text) + ": ";
    if (message.substr(0, prefix.size()) != prefix) {
      fail("message does not quote input", text);
    }
    bool const says_overflow = message.substr(prefix.size(), 9) == "overflow:";
    if (says_overflow != (expected.kind == verdict::overflow)) {
      fail("message and reference disagree on overflow", text);
    }
  } catch (...) {
    fail("unexpected exception type", text);
  }
  return 0;
}
