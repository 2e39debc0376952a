/**
 * @file replay_tool.hpp
 * @brief The engine of rmm-replay (main.cpp is its command line): replays an allocation log
 * through resources and measures them. Internal (not installed); the host tests call it directly.
 * See docs/replay.md for the definitions.
 */
#pragma once

#include "trace.hpp"

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rmm::replay {

/// @brief What to replay and how.
struct tool_options {
  std::string log;                       ///< path of the allocation log
  std::vector<std::string> resources;    ///< names; empty: every one available
  std::optional<std::size_t> simulated;  ///< capacity of a simulated upstream (no GPU needed)
  bool search{false};                    ///< find the smallest capacity of the pooling resources
  std::size_t granularity{std::size_t{2} << 20U};  ///< bisection step in bytes
  int repetitions{3};                              ///< timed replays (the median is reported)
  /// Directory for pictures' data (empty: none): timeline_<resource>.csv for every resource
  /// (live and reserved bytes per event) and snapshot_<resource>.json for each pool at the log's
  /// peak; tools/pictures/render.py draws them.
  std::string pictures;
};

/// @brief The measurements of one resource.
struct tool_row {
  std::string resource;                 ///< its name, as given with --resource
  std::string error;                    ///< why it could not be measured (empty if it was)
  double ns_per_event{};                ///< median time of a replay / records in the log
  std::size_t peak_live{};              ///< the log's peak live bytes
  std::optional<std::size_t> reserved;  ///< most bytes the growing configuration took
  std::optional<std::size_t> capacity;  ///< smallest capacity found by --search
  int attempts{};                       ///< replays the search performed
  std::string search_note;              ///< how the capped configuration was built, if special
};

/// @brief The resource names that exist in this build: over real memory, or over the simulated
/// upstream when @p simulated.
std::vector<std::string> available_resources(bool simulated);

/// @brief True for the resources that --search applies to (those that take a capacity).
bool searchable(std::string const& resource);

/**
 * @brief Replays @p t through every resource of @p options (each failure is recorded in its row,
 * not thrown). Progress goes to @p progress.
 * @throws std::invalid_argument for an unknown resource name, or no GPU without --simulated.
 */
std::vector<tool_row> run_tool(tool_options const& options, trace const& t, std::ostream& progress);

/// @brief The rows as a Markdown table (with a line about the log before it).
std::string markdown_table(std::vector<tool_row> const& rows,
                           trace const& t,
                           tool_options const& options);

/// @brief Reads the command line (without argv[0]).
/// @throws std::invalid_argument with a message for a malformed command line.
tool_options parse_command_line(std::vector<std::string> const& args);

/// @brief The usage text.
std::string usage();

/// @brief Reads a byte count: a number with an optional suffix K, M, G, T (powers of 1024,
/// also KiB, MiB, ...). @throws std::invalid_argument if malformed.
std::size_t parse_bytes(std::string const& text);

}  // namespace rmm::replay
