/**
 * @file detail/logging_assert.hpp
 * @brief RMM_LOGGING_ASSERT: an assertion that also writes a critical message to the library's
 * log before it fails, as in RMM (code written for RMM includes this header for it).
 *
 * In release builds (NDEBUG) the macro does nothing and does not evaluate its argument. Thread-
 * safety: as `assert` and rmm::log (which may be called from any thread).
 */
#pragma once

#ifndef NDEBUG
#include <rmm/detail/error.hpp>
#include <rmm/logger.hpp>

#include <cassert>
#endif

/**
 * @brief Asserts @p _expr; on failure first logs "[FILE:LINE] Assertion EXPR failed." at level
 * critical and flushes the log, so that the reason survives the abort in the log file too.
 * Does nothing when NDEBUG is defined.
 */
#ifdef NDEBUG
#define RMM_LOGGING_ASSERT(_expr) static_cast<void>(0)
#else
#define RMM_LOGGING_ASSERT(_expr)                                                           \
  do {                                                                                      \
    bool const rmm_detail_success = static_cast<bool>(_expr);                               \
    if (!rmm_detail_success) {                                                              \
      rmm::log(rmm::level_enum::critical,                                                   \
               "[" __FILE__                                                                 \
               ":" RMM_STRINGIFY(__LINE__) "] Assertion " RMM_STRINGIFY(_expr) " failed."); \
      rmm::flush_log();                                                                     \
      assert(rmm_detail_success);                                                           \
    }                                                                                       \
  } while (0)
#endif
