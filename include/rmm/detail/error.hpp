/**
 * @file detail/error.hpp
 * @brief The header that code written for RMM includes for the checking macros.
 *
 * In RMM the macros (RMM_EXPECTS, RMM_FAIL, RMM_CUDA_TRY, RMM_CUDA_TRY_ALLOC,
 * RMM_ASSERT_CUDA_SUCCESS, RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN) live here and the exception
 * types in <rmm/error.hpp>; in this library <rmm/error.hpp> holds both, so this header forwards to
 * it and adds the helper names RMM's header also defines (RMM_STRINGIFY and the per-arity macro
 * names), so that code using any of them compiles unchanged. docs/compatibility.md compares the
 * messages with RMM's.
 *
 * Thread-safety: macros and constants only; they hold no shared state.
 */
#pragma once

#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <cassert>
#include <exception>
#include <string>
#include <type_traits>

/// @brief Turns its argument into a string literal without expanding it (helper of
/// RMM_STRINGIFY). Defined only if the including code has not defined it already.
#ifndef STRINGIFY_DETAIL
#define STRINGIFY_DETAIL(x) #x
#endif

/// @brief Turns its argument, after macro expansion, into a string literal:
/// `RMM_STRINGIFY(__LINE__)` is `"42"`.
#ifndef RMM_STRINGIFY
#define RMM_STRINGIFY(x) STRINGIFY_DETAIL(x)
#endif

// The per-arity forms RMM's header defines behind its variadic macros. They are RMM's
// implementation details, but some code calls them directly; each forwards to this library's
// form with the same meaning (and the same message).

/// @brief RMM_EXPECTS with an explicit exception type (RMM's 3-argument form).
#define RMM_EXPECTS_3(_condition, _reason, _exception_type) \
  RMM_DETAIL_EXPECTS_3(_condition, _reason, _exception_type)
/// @brief RMM_EXPECTS throwing rmm::logic_error (RMM's 2-argument form).
#define RMM_EXPECTS_2(_condition, _reason) RMM_DETAIL_EXPECTS_2(_condition, _reason)
/// @brief Picks RMM_EXPECTS_3 or RMM_EXPECTS_2 by the number of arguments.
#define GET_RMM_EXPECTS_MACRO(_1, _2, _3, NAME, ...) NAME

/// @brief RMM_FAIL with an explicit exception type (RMM's 2-argument form).
#define RMM_FAIL_2(_what, _exception_type) RMM_DETAIL_FAIL_2(_what, _exception_type)
/// @brief RMM_FAIL throwing rmm::logic_error (RMM's 1-argument form).
#define RMM_FAIL_1(_what) RMM_DETAIL_FAIL_1(_what)
/// @brief Picks RMM_FAIL_2 or RMM_FAIL_1 by the number of arguments.
#define GET_RMM_FAIL_MACRO(_1, _2, NAME, ...) NAME

/// @brief RMM_CUDA_TRY with an explicit exception type (RMM's 2-argument form).
#define RMM_CUDA_TRY_2(_call, _exception_type) RMM_DETAIL_CUDA_TRY_2(_call, _exception_type)
/// @brief RMM_CUDA_TRY throwing rmm::cuda_error (RMM's 1-argument form).
#define RMM_CUDA_TRY_1(_call) RMM_DETAIL_CUDA_TRY_1(_call)
/// @brief Picks RMM_CUDA_TRY_2 or RMM_CUDA_TRY_1 by the number of arguments.
#define GET_RMM_CUDA_TRY_MACRO(_1, _2, NAME, ...) NAME

/// @brief RMM_CUDA_TRY_ALLOC naming the requested bytes (RMM's 2-argument form).
#define RMM_CUDA_TRY_ALLOC_2(_call, num_bytes) RMM_DETAIL_CUDA_TRY_ALLOC_2(_call, num_bytes)
/// @brief RMM_CUDA_TRY_ALLOC without the requested bytes (RMM's 1-argument form).
#define RMM_CUDA_TRY_ALLOC_1(_call) RMM_DETAIL_CUDA_TRY_ALLOC_1(_call)
/// @brief Picks RMM_CUDA_TRY_ALLOC_2 or RMM_CUDA_TRY_ALLOC_1 by the number of arguments.
#define GET_RMM_CUDA_TRY_ALLOC_MACRO(_1, _2, NAME, ...) NAME
