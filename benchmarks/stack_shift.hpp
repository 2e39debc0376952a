/**
 * @file stack_shift.hpp
 * @brief Moves a benchmark's stack frames down by a chosen number of bytes
 * (RMM_BENCH_STACK_SHIFT; benchmarks/README.md), for probing whether where the stack lies
 * decides a row's speed.
 *
 * Why: on the GPU machines' Intel hosts the pool's n = 1,000 rows settle, process by process, at
 * one of two speeds 10-15 % apart, steady within a process (docs/benchmarks.md, "Issue 12,
 * fortieth step"). Linux places each process's stack at a random offset, also within a 4 KiB
 * page, and a load whose address matches an earlier store's in the low 12 bits can be held back
 * as if it depended on it ("4K aliasing"). A scan over shifts in one process layout
 * (`setarch -R`) tells whether the offset decides the group.
 */
#pragma once

#include "bench_env.hpp"

#include <alloca.h>

#include <cstddef>

namespace rmm::bench {

/// @brief RMM_BENCH_STACK_SHIFT in bytes, clamped to [0, 65536] and rounded down to a multiple
/// of 16 (the stack's alignment); 0 (the default) leaves the benchmarks as they were. Read once.
inline std::size_t stack_shift_bytes() {
  static std::size_t const bytes =
      static_cast<std::size_t>(env_clamped("RMM_BENCH_STACK_SHIFT", 0, 0, 65536)) / 16 * 16;
  return bytes;
}

namespace detail {

// A call the compiler keeps, so that f's frames start below the caller's stack pointer.
template <class F>
[[gnu::noinline]] decltype(auto) call_below(F& f) {
  return f();
}

// Reserves `bytes` of stack, then calls f below them. Out of line: the reservation lasts until
// this function returns, and the frames of its callees start that much lower.
template <class F>
[[gnu::noinline]] decltype(auto) call_shifted(std::size_t bytes, F& f) {
  void* const pad = alloca(bytes);
  asm volatile("" : : "r"(pad) : "memory");  // the reservation is not optimised away
  return call_below(f);
}

}  // namespace detail

/**
 * @brief Calls @p f with its stack frames @p bytes lower than a plain call would put them
 * (@p bytes a multiple of 16); @p bytes == 0 is a plain call, inlined as before. Returns what
 * @p f returns.
 */
template <class F>
decltype(auto) with_stack_shift(std::size_t bytes, F&& f) {
  if (bytes == 0) {
    return f();
  }
  return detail::call_shifted(bytes, f);
}

}  // namespace rmm::bench
