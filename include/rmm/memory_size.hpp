/**
 * @file memory_size.hpp
 * @brief Parsing of human-readable memory sizes such as "512MB", "256 KB" or "1 GB".
 *
 * The grammar is the one of the size strings of the sensor-streaming SDK's device/host pool pair
 * (see docs/memory_size.md). Everything here is a pure function of its argument and therefore
 * thread-safe.
 */
#pragma once

#include <rmm/error.hpp>

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace rmm {
namespace detail {

/// @brief True for the ASCII decimal digits '0'..'9' (locale-independent).
[[nodiscard]] constexpr bool memory_size_is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// @brief True for the ASCII whitespace characters of the "C" locale: space, \\t, \\n, \\v, \\f,
/// \\r.
[[nodiscard]] constexpr bool memory_size_is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/**
 * @brief Quotes @p text for an error message: surrounded by double quotes, with `"` and `\` escaped
 * by a backslash and every byte outside printable ASCII (0x20..0x7E) written as `\xNN`, so that
 * the message stays printable and an embedded NUL does not cut it short.
 */
[[nodiscard]] inline std::string quote_memory_size_text(std::string_view text) {
  static constexpr char hex_digits[] = "0123456789ABCDEF";
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  for (char const c : text) {
    auto const byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte < 0x20U || byte > 0x7EU) {
      quoted += "\\x";
      quoted += hex_digits[byte >> 4U];
      quoted += hex_digits[byte & 0x0FU];
    } else {
      quoted += c;
    }
  }
  quoted += '"';
  return quoted;
}

/// @brief Throws `rmm::invalid_argument` for @p text with the reason @p what.
[[noreturn]] inline void throw_invalid_memory_size(std::string_view text, std::string const& what) {
  throw rmm::invalid_argument{"invalid memory size " + quote_memory_size_text(text) + ": " + what};
}

}  // namespace detail

/**
 * @brief Parses a memory size such as "512MB", "256 KB" or "1 GB" into a number of bytes.
 *
 * Grammar (exactly; nothing else is accepted):
 * @code
 *   size     := integer [ "." fraction ] spaces unit
 *   integer  := digit { digit }
 *   fraction := digit { digit }
 *   spaces   := { " " }                       (zero or more U+0020 SPACE characters)
 *   unit     := "B" | "KB" | "MB" | "GB" | "TB"
 *   digit    := "0" | "1" | ... | "9"         (ASCII only)
 * @endcode
 * The units are powers of 1024: B = 1, KB = 1024, MB = 1024^2, GB = 1024^3, TB = 1024^4 bytes.
 * The result is `integer * unit`. A decimal part is truncated before the multiplication, as the
 * SDK documents ("the value is rounded down to the nearest integer"): "1.5GB" is 1 GiB, "0.9KB"
 * is 0 bytes.
 *
 * Choices made where the SDK document is silent (all strict):
 * - No leading or trailing whitespace of any kind (" 1MB", "1MB ", "1MB\n" are rejected).
 * - Only spaces, any number of them, may separate the number and the unit; a tab or other
 *   whitespace there is rejected.
 * - Units are case-sensitive and upper-case, as the document writes them: "mb", "Mb", "kB" are
 *   rejected; so are "K", "KiB", "MiB", "bytes" and anything after the unit ("1MB5", "1MBB").
 * - The decimal point needs a digit on both sides: "1.GB" and ".5GB" are rejected; a second
 *   decimal point ("1.2.3MB") is rejected. Any number of fraction digits is accepted (they are
 *   discarded).
 * - Leading zeros are accepted and do not count toward overflow ("007MB" is 7 MiB).
 * - No sign, exponent ("1e3MB"), hexadecimal ("0x10MB"), digit separators ("1,024KB", "1_024KB"),
 *   or non-ASCII digits.
 * - The value 0 is valid ("0B", "0 TB").
 *
 * @param text The size string. It need not be NUL-terminated; embedded NULs are ordinary
 * (invalid) characters.
 * @return The size in bytes.
 * @pre None: every input either yields a value or throws; no input has undefined behaviour.
 * @throws rmm::invalid_argument if @p text does not match the grammar or its value does not fit
 * in `std::size_t` (64 bits on every platform CUDA supports), whether the integer part itself
 * overflows or its product with the unit does. The message is
 * `invalid memory size "<text>": <reason>`, where `<text>` is @p text with `"`, `\` and
 * non-printable bytes escaped, and `<reason>` says what is wrong: empty string, leading or trailing
 * whitespace, sign, missing number, missing digits after the decimal point, more than one decimal
 * point, whitespace other than spaces before the unit, missing unit, unknown unit (quoted, with
 * the accepted units), or overflow. Syntax errors are reported in preference to overflow.
 * @throws std::bad_alloc only if building the exception message runs out of memory.
 * @note Thread-safety: a pure function of its argument; safe to call concurrently.
 */
[[nodiscard]] inline std::size_t parse_memory_size(std::string_view text) {
  using detail::memory_size_is_digit;
  using detail::memory_size_is_space;
  using detail::throw_invalid_memory_size;
  static constexpr char const* expected_units = "expected B, KB, MB, GB or TB";
  constexpr std::size_t max_value             = std::numeric_limits<std::size_t>::max();

  if (text.empty()) {
    throw_invalid_memory_size(text, "empty string");
  }
  if (memory_size_is_space(text.front()) || memory_size_is_space(text.back())) {
    throw_invalid_memory_size(text, "leading or trailing whitespace is not allowed");
  }
  if (text.front() == '+' || text.front() == '-') {
    throw_invalid_memory_size(text, "a sign is not allowed (the size is a non-negative number)");
  }
  if (text.front() == '.') {
    throw_invalid_memory_size(text, "missing number: no digit before the decimal point");
  }
  if (!memory_size_is_digit(text.front())) {
    throw_invalid_memory_size(text, "missing number: the size must start with a decimal digit");
  }

  // Integer part: accumulate without ever overflowing; remember whether the value exceeded the
  // range so that syntax errors later in the string are still reported first.
  std::size_t pos      = 0;
  std::size_t number   = 0;
  bool number_overflow = false;
  for (; pos < text.size() && memory_size_is_digit(text[pos]); ++pos) {
    auto const digit = static_cast<std::size_t>(text[pos] - '0');
    if (!number_overflow) {
      if (number > (max_value - digit) / 10U) {
        number_overflow = true;
      } else {
        number = number * 10U + digit;
      }
    }
  }

  // Optional decimal part, truncated.
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    if (pos == text.size() || !memory_size_is_digit(text[pos])) {
      throw_invalid_memory_size(text, "missing digits after the decimal point");
    }
    while (pos < text.size() && memory_size_is_digit(text[pos])) {
      ++pos;
    }
    if (pos < text.size() && text[pos] == '.') {
      throw_invalid_memory_size(text, "more than one decimal point");
    }
  }

  // Optional spaces between the number and the unit.
  while (pos < text.size() && text[pos] == ' ') {
    ++pos;
  }
  if (pos < text.size() && memory_size_is_space(text[pos])) {
    throw_invalid_memory_size(text,
                              "only spaces may separate the number and the unit (found other "
                              "whitespace)");
  }
  if (pos == text.size()) {
    throw_invalid_memory_size(text, std::string{"missing unit ("} + expected_units + ")");
  }

  // Unit.
  std::string_view const unit = text.substr(pos);
  unsigned shift              = 0;
  if (unit == "B") {
    shift = 0;
  } else if (unit == "KB") {
    shift = 10;
  } else if (unit == "MB") {
    shift = 20;
  } else if (unit == "GB") {
    shift = 30;
  } else if (unit == "TB") {
    shift = 40;
  } else {
    std::string reason =
        "unknown unit " + detail::quote_memory_size_text(unit) + " (" + expected_units + ")";
    if (unit.size() <= 2) {
      std::string upper{unit};
      for (char& c : upper) {
        if (c >= 'a' && c <= 'z') {
          c = static_cast<char>(c - 'a' + 'A');
        }
      }
      if (upper == "B" || upper == "KB" || upper == "MB" || upper == "GB" || upper == "TB") {
        reason += "; units are case-sensitive";
      }
    }
    throw_invalid_memory_size(text, reason);
  }

  if (number_overflow) {
    throw_invalid_memory_size(
        text,
        "overflow: the number exceeds " + std::to_string(max_value) + " (the largest std::size_t)");
  }
  if (number > (max_value >> shift)) {
    throw_invalid_memory_size(text,
                              "overflow: the size in bytes exceeds " + std::to_string(max_value) +
                                  " (the largest std::size_t)");
  }
  return number << shift;
}

}  // namespace rmm
