// A strict parser of the CSV allocation logs that logging_resource_adaptor writes and RMM's
// replay tools read (header Thread,Time,Action,Pointer,Size,Stream), such as
// shared/traces/resnet50_train.csv. Used by the logging adaptor's tests to check that every line
// it writes has exactly the shape of the trace file's rows.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace rmm::test {

struct log_row {
  unsigned long long thread{};
  int hour{};
  int minute{};
  int second{};
  long microsecond{};
  std::string action;  // allocate | allocate failure | free
  std::uintptr_t pointer{};
  bool null_pointer{};
  std::size_t size{};
  std::uintptr_t stream{};

  // Microseconds since midnight, for ordering checks.
  [[nodiscard]] long long time_of_day() const {
    return ((hour * 60LL + minute) * 60LL + second) * 1000000LL + microsecond;
  }
};

inline constexpr char const* allocation_log_header = "Thread,Time,Action,Pointer,Size,Stream";

namespace detail {

inline bool all_of(std::string const& s, int (*pred)(int)) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (pred(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return true;
}

inline int is_lower_hex(int c) { return (std::isdigit(c) != 0 || (c >= 'a' && c <= 'f')) ? 1 : 0; }

// "0x" followed by lowercase hex digits, without leading zeros (as %p and ostream write them).
inline std::optional<std::uintptr_t> parse_hex(std::string const& s) {
  if (s.size() < 3 || s.compare(0, 2, "0x") != 0) {
    return std::nullopt;
  }
  std::string const digits = s.substr(2);
  if (!all_of(digits, is_lower_hex) || (digits.size() > 1 && digits[0] == '0') ||
      digits.size() > 2 * sizeof(std::uintptr_t)) {
    return std::nullopt;
  }
  return static_cast<std::uintptr_t>(std::stoull(digits, nullptr, 16));
}

// Two decimal digits no larger than max.
inline std::optional<int> parse_two_digits(std::string const& s, int max) {
  if (s.size() != 2 || !all_of(s, std::isdigit)) {
    return std::nullopt;
  }
  int const v = std::stoi(s);
  if (v > max) {
    return std::nullopt;
  }
  return v;
}

}  // namespace detail

/// What printf's %p writes for a null pointer here ("(nil)" with glibc).
inline std::string null_pointer_text() {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%p", static_cast<void*>(nullptr));
  return buffer;
}

/// Parses one line (without its newline); nullopt unless every field has the trace's format.
inline std::optional<log_row> parse_log_row(std::string const& line) {
  std::vector<std::string> fields;
  std::stringstream in{line};
  std::string field;
  while (std::getline(in, field, ',')) {
    fields.push_back(field);
  }
  if (!line.empty() && line.back() == ',') {
    fields.emplace_back();
  }
  if (fields.size() != 6) {
    return std::nullopt;
  }
  log_row row;
  // Thread: decimal, no sign.
  if (!detail::all_of(fields[0], std::isdigit)) {
    return std::nullopt;
  }
  row.thread = std::stoull(fields[0]);
  // Time: HH:MM:SS.uuuuuu
  auto const& t = fields[1];
  if (t.size() != 15 || t[2] != ':' || t[5] != ':' || t[8] != '.') {
    return std::nullopt;
  }
  auto const h         = detail::parse_two_digits(t.substr(0, 2), 23);
  auto const m         = detail::parse_two_digits(t.substr(3, 2), 59);
  auto const s         = detail::parse_two_digits(t.substr(6, 2), 60);
  std::string const us = t.substr(9);
  if (!h || !m || !s || !detail::all_of(us, std::isdigit)) {
    return std::nullopt;
  }
  row.hour        = *h;
  row.minute      = *m;
  row.second      = *s;
  row.microsecond = std::stol(us);
  // Action
  row.action = fields[2];
  if (row.action != "allocate" && row.action != "free" && row.action != "allocate failure") {
    return std::nullopt;
  }
  // Pointer: 0x... or the null pointer's %p text.
  if (fields[3] == null_pointer_text()) {
    row.null_pointer = true;
  } else if (auto const p = detail::parse_hex(fields[3])) {
    row.pointer = *p;
  } else {
    return std::nullopt;
  }
  // Size: decimal.
  if (!detail::all_of(fields[4], std::isdigit) || (fields[4].size() > 1 && fields[4][0] == '0')) {
    return std::nullopt;
  }
  row.size = static_cast<std::size_t>(std::stoull(fields[4]));
  // Stream: "0" or 0x...
  if (fields[5] == "0") {
    row.stream = 0;
  } else if (auto const st = detail::parse_hex(fields[5])) {
    row.stream = *st;
  } else {
    return std::nullopt;
  }
  return row;
}

/// Splits a whole log into lines (the last one must end with a newline).
inline std::vector<std::string> split_lines(std::string const& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto const end = text.find('\n', begin);
    if (end == std::string::npos) {
      lines.push_back(text.substr(begin));  // unterminated: kept, and fails the line checks
      break;
    }
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace rmm::test
