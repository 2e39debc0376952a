/**
 * @file logger.hpp
 * @brief The library's process-wide logger.
 *
 * The implementation (spdlog) lives in the compiled library; this header exposes no logging
 * library types. By default messages of level `warn` and above go to standard error. The
 * environment variable `RMM_LOG_LEVEL` (trace, debug, info, warn, error, critical, off) sets the
 * initial level and `RMM_DEBUG_LOG_FILE` sends messages to that file instead (the variable RMM
 * reads for its own logger; `RMM_LOG_FILE` is the logging_resource_adaptor's default file).
 *
 * Thread-safety: every function here may be called concurrently from any thread.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <string>
#include <string_view>

namespace rmm {

/// @brief Severity of a log message, in increasing order.
enum class level_enum : int { trace = 0, debug, info, warn, error, critical, off };

/// @brief Writes @p message at @p level if @p level is at or above the current level.
RMM_EXPORT void log(level_enum level, std::string_view message) noexcept;

/// @brief Sets the minimum level of messages that are written.
RMM_EXPORT void set_log_level(level_enum level) noexcept;

/// @brief The minimum level of messages that are written.
RMM_EXPORT level_enum get_log_level() noexcept;

/**
 * @brief Sends all further messages to the file at @p path (appending), replacing the current
 * destination.
 * @throws rmm::logic_error if the file cannot be opened (the message names the path).
 */
RMM_EXPORT void set_log_file(std::string const& path);

/// @brief Sends all further messages to standard error, replacing the current destination.
RMM_EXPORT void set_log_to_stderr() noexcept;

/// @brief Writes out buffered messages.
RMM_EXPORT void flush_log() noexcept;

}  // namespace rmm
