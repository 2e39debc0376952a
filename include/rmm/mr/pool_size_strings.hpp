/**
 * @file pool_size_strings.hpp
 * @brief Pool sizes given as size strings ("16MB", "1.5 GB"), as the sensor-streaming SDK's
 * allocators take them: the platform default, parsing that names the parameter, and rounding to
 * what pool_memory_resource accepts.
 *
 * Everything here is a pure function of its arguments and therefore thread-safe.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/memory_size.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rmm::mr {

/**
 * @brief The SDK's default initial pool size, fixed at compile time: 8 MiB on aarch64, 16 MiB on
 * x86_64 (and on every other architecture). The default maximum is twice the initial size.
 */
#if defined(__aarch64__)
inline constexpr std::size_t sdk_default_initial_pool_size = std::size_t{8} << 20U;
#else
inline constexpr std::size_t sdk_default_initial_pool_size = std::size_t{16} << 20U;
#endif

/// @brief An initial and a maximum pool size in bytes, both multiples of 256.
struct pool_size_range {
  std::size_t initial;  ///< bytes allocated when the pool is made
  std::size_t maximum;  ///< bytes the pool may grow to (a hard cap)
};

namespace detail {

/**
 * @brief parse_memory_size(@p text), with the parameter's name in front of the message.
 * @throws rmm::invalid_argument "<param>: invalid memory size "<text>": <reason>".
 */
[[nodiscard]] inline std::size_t parse_named_size(std::string_view param, std::string_view text) {
  try {
    return parse_memory_size(text);
  } catch (rmm::invalid_argument const& e) {
    throw rmm::invalid_argument{std::string{param} + ": " + e.what()};
  }
}

/**
 * @brief @p bytes rounded up to a multiple of CUDA_ALLOCATION_ALIGNMENT (256), which
 * pool_memory_resource requires of its sizes.
 * @throws rmm::invalid_argument naming @p param and @p bytes if the rounded value does not fit
 * in std::size_t.
 */
[[nodiscard]] inline std::size_t round_pool_size(std::string_view param, std::size_t bytes) {
  constexpr std::size_t largest =
      align_down(std::numeric_limits<std::size_t>::max(), CUDA_ALLOCATION_ALIGNMENT);
  if (bytes > largest) {
    throw rmm::invalid_argument{std::string{param} + ": " + std::to_string(bytes) +
                                " bytes cannot be rounded up to a multiple of " +
                                std::to_string(CUDA_ALLOCATION_ALIGNMENT)};
  }
  return align_up(bytes, CUDA_ALLOCATION_ALIGNMENT);
}

/**
 * @brief The initial and maximum size of one pool from its two optional size strings.
 *
 * - initial: @p initial_text parsed, or sdk_default_initial_pool_size if absent;
 * - maximum: @p maximum_text parsed, or twice the initial size (as parsed, before rounding;
 *   saturating at the largest multiple of 256) if absent;
 * - both are then rounded up to a multiple of 256 bytes.
 *
 * @throws rmm::invalid_argument naming the parameter if a string is malformed or its rounded
 * value overflows.
 * @throws rmm::logic_error naming both parameters, their texts and values if the maximum is
 * below the initial size.
 */
[[nodiscard]] inline pool_size_range resolve_pool_size_range(
    std::string_view initial_param,
    std::optional<std::string> const& initial_text,
    std::string_view maximum_param,
    std::optional<std::string> const& maximum_text) {
  std::size_t const initial =
      initial_text ? parse_named_size(initial_param, *initial_text) : sdk_default_initial_pool_size;
  std::size_t maximum{};
  if (maximum_text) {
    maximum = parse_named_size(maximum_param, *maximum_text);
  } else {
    constexpr std::size_t largest =
        align_down(std::numeric_limits<std::size_t>::max(), CUDA_ALLOCATION_ALIGNMENT);
    maximum = initial > largest / 2 ? largest : 2 * initial;
  }
  pool_size_range const range{round_pool_size(initial_param, initial),
                              round_pool_size(maximum_param, maximum)};
  auto const shown = [](std::optional<std::string> const& text, std::size_t value) {
    return (text ? "\"" + *text + "\" (" : std::string{"default ("}) + std::to_string(value) +
           " bytes)";
  };
  RMM_EXPECTS(range.maximum >= range.initial,
              std::string{maximum_param} + " " + shown(maximum_text, range.maximum) + " is below " +
                  std::string{initial_param} + " " + shown(initial_text, range.initial));
  return range;
}

}  // namespace detail
}  // namespace rmm::mr
