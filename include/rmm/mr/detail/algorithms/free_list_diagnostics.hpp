/**
 * @file free_list_diagnostics.hpp
 * @brief Message helpers shared by the host free-list structures (tlsf_free_list,
 * address_ordered_free_list, fixed_size_free_list). Standard library only, no CUDA.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace rmm::mr::detail {

/// @brief @p v as "0x..." in lower-case hex, for error messages. Thread-safe (pure).
inline std::string format_hex(std::uintptr_t v) {
  char buf[2 + 16];
  std::size_t n = sizeof(buf);
  do {
    buf[--n] = "0123456789abcdef"[v & 0xFU];
    v >>= 4U;
  } while (v != 0);
  buf[--n] = 'x';
  buf[--n] = '0';
  return std::string(buf + n, sizeof(buf) - n);
}

/**
 * @brief Throws std::logic_error("<structure>::validate: <what>") if @p ok is false. The message
 * is built only on failure: validate() runs after every step of the property tests.
 */
inline void expect_invariant(bool ok, char const* structure, char const* what) {
  if (!ok) {
    throw std::logic_error(std::string{structure} + "::validate: " + what);
  }
}

/// @brief As above, naming the address @p at where the invariant broke.
inline void expect_invariant(bool ok, char const* structure, char const* what, std::uintptr_t at) {
  if (!ok) {
    expect_invariant(
        false, structure, (std::string{what} + " (at " + format_hex(at) + ")").c_str());
  }
}

}  // namespace rmm::mr::detail
