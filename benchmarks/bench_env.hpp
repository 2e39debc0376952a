/**
 * @file bench_env.hpp
 * @brief Reading the benchmarks' numeric environment variables (benchmarks/README.md lists them).
 */
#pragma once

#include <algorithm>
#include <cstdlib>

namespace rmm::bench {

/// @brief The integer in environment variable @p name, clamped to [@p lo, @p hi]; @p fallback
/// (not clamped) when the variable is unset. A value that is not a number reads as 0.
inline long long env_clamped(char const* name, long long fallback, long long lo, long long hi) {
  char const* value = std::getenv(name);
  return value != nullptr ? std::clamp(std::atoll(value), lo, hi) : fallback;
}

}  // namespace rmm::bench
