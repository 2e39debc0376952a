/**
 * @file trace.hpp
 * @brief Reading an allocation log (the CSV of logging_resource_adaptor, e.g.
 * ../shared/traces/resnet50_train.csv) into a resolved event list for replay. Internal to the
 * repository (not installed): used by rmm-replay, rmm_replay_bench and their tests.
 *
 * Format: the header `Thread,Time,Action,Pointer,Size,Stream`, then one line per event:
 * `Thread` a decimal integer, `Time` HH:MM:SS.uuuuuu, `Action` `allocate`, `free` or
 * `allocate failure` (an allocation the upstream refused: skipped), `Pointer` 0x-hex (`(nil)` or
 * `0x0` for a null pointer), `Size` decimal bytes, `Stream` an integer (decimal, or 0x-hex as
 * logging_resource_adaptor writes non-default streams). Empty lines and a trailing `\r` are
 * ignored. Thread, time and stream are checked but not kept: the replay is single-threaded on one
 * stream.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace rmm::replay {

/// @brief A malformed log: the message names the file and line (`path:line: what`).
struct trace_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// @brief An allocation log, parsed and resolved.
struct trace {
  /// @brief An event as in the file (for a replay that maps recorded pointers itself).
  struct record {
    bool alloc;             ///< allocate (true) or free
    std::uint64_t pointer;  ///< the recorded address
    std::size_t size;       ///< the recorded size
  };
  /// @brief A resolved event: `slot` is the index of the allocation that a free releases.
  struct event {
    std::uint32_t slot;  ///< index of the allocation (into slot_size)
    bool alloc;          ///< allocate (true) or free
    std::size_t size;    ///< bytes of the allocation
  };
  /// @brief Something the log does that a replay cannot reproduce exactly.
  struct problem {
    std::size_t line;     ///< 1-based line number in the file
    std::string message;  ///< what is wrong
  };

  std::string path;                           ///< where it was read from
  std::vector<record> records;                ///< allocate and free lines, in order
  std::vector<event> events;                  ///< resolved: what a replay performs
  std::vector<std::size_t> slot_size;         ///< per allocation, its size
  std::vector<std::uint32_t> leftover_slots;  ///< allocations the log never frees
  std::size_t unmatched_frees{};              ///< frees of pointers not live in the log (skipped)
  std::size_t live_reallocations{};  ///< allocations of an address already live (the older one
                                     ///< stays live until the end; the newer one takes the address)
  std::size_t failed_allocations{};  ///< `allocate failure` lines (skipped)
  std::size_t peak_live{};           ///< the most bytes live at once
  std::size_t total_allocated{};     ///< the sum of all allocation sizes
  std::vector<problem> problems;     ///< the first few unmatched frees and live reallocations

  /// @brief The file name without directory and `.csv`, e.g. `resnet50_train`.
  [[nodiscard]] std::string name() const {
    std::string n = path;
    if (auto slash = n.find_last_of('/'); slash != std::string::npos) {
      n.erase(0, slash + 1);
    }
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".csv") == 0) {
      n.erase(n.size() - 4);
    }
    return n;
  }
};

/// @brief The header line of an allocation log.
inline constexpr char const* trace_header = "Thread,Time,Action,Pointer,Size,Stream";

namespace detail {

inline bool is_decimal(std::string const& s) {
  return !s.empty() && s.size() <= 20 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

inline bool is_hex_digits(std::string const& s, std::size_t from) {
  return s.size() > from && s.size() - from <= 16 &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

inline bool is_time(std::string const& s) {  // HH:MM:SS.uuuuuu
  if (s.size() != 15 || s[2] != ':' || s[5] != ':' || s[8] != '.') {
    return false;
  }
  for (std::size_t i : {0U, 1U, 3U, 4U, 6U, 7U, 9U, 10U, 11U, 12U, 13U, 14U}) {
    if (s[i] < '0' || s[i] > '9') {
      return false;
    }
  }
  return (s[0] - '0') * 10 + (s[1] - '0') < 24 && s[3] < '6' && s[6] < '7';
}

}  // namespace detail

/**
 * @brief Reads a log from @p in; @p path names it in messages and in the result.
 * @param max_problems how many unmatched frees and live reallocations to keep with their lines
 * @throws trace_error on a missing or wrong header, or a malformed line (naming the line), or a
 * log without events.
 */
inline trace parse_trace(std::istream& in, std::string const& path, std::size_t max_problems = 10) {
  trace t;
  t.path = path;
  std::string line;
  auto fail = [&](std::size_t line_no, std::string const& what) {
    throw trace_error(path + ":" + std::to_string(line_no) + ": " + what);
  };
  if (!std::getline(in, line)) {
    fail(1, "empty file: expected the header " + std::string{trace_header});
  }
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  if (line != trace_header) {
    fail(1, "expected the header " + std::string{trace_header} + ", found '" + line + "'");
  }
  struct live_entry {
    std::uint32_t slot;
    std::size_t line;
  };
  std::unordered_map<std::uint64_t, live_entry> live;  // recorded pointer -> its allocation
  std::vector<char> slot_live;
  std::size_t live_bytes = 0;
  std::size_t line_no    = 1;
  auto note              = [&](std::string message) {
    if (t.problems.size() < max_problems) {
      t.problems.push_back({line_no, std::move(message)});
    }
  };
  std::vector<std::string> fields;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty()) {
      continue;
    }
    fields.clear();
    std::size_t start = 0;
    for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos;
         start = comma + 1) {
      fields.push_back(line.substr(start, comma - start));
    }
    fields.push_back(line.substr(start));
    if (fields.size() != 6) {
      fail(line_no,
           "expected 6 comma-separated fields, found " + std::to_string(fields.size()) + ": '" +
               line + "'");
    }
    if (!detail::is_decimal(fields[0])) {
      fail(line_no, "thread '" + fields[0] + "' is not a decimal integer");
    }
    if (!detail::is_time(fields[1])) {
      fail(line_no, "time '" + fields[1] + "' is not HH:MM:SS.uuuuuu");
    }
    std::string const& action = fields[2];
    bool const alloc          = action == "allocate";
    if (!alloc && action != "free" && action != "allocate failure") {
      fail(line_no, "action '" + action + "' is none of allocate, free, allocate failure");
    }
    std::string const& ptr_text = fields[3];
    bool const null_ptr         = ptr_text == "(nil)";
    if (!null_ptr && !(ptr_text.compare(0, 2, "0x") == 0 && detail::is_hex_digits(ptr_text, 2))) {
      fail(line_no, "pointer '" + ptr_text + "' is not 0x followed by hex digits");
    }
    if (!detail::is_decimal(fields[4])) {
      fail(line_no, "size '" + fields[4] + "' is not a decimal integer");
    }
    std::string const& stream = fields[5];
    if (!detail::is_decimal(stream) &&
        !(stream.compare(0, 2, "0x") == 0 && detail::is_hex_digits(stream, 2))) {
      fail(line_no, "stream '" + stream + "' is not an integer");
    }
    if (action == "allocate failure") {
      ++t.failed_allocations;
      continue;
    }
    std::uint64_t const pointer = null_ptr ? 0 : std::stoull(ptr_text, nullptr, 16);
    auto const size             = static_cast<std::size_t>(std::stoull(fields[4]));
    if (pointer == 0) {  // a zero-byte allocation's null pointer (or its free): nothing to replay
      continue;
    }
    t.records.push_back({alloc, pointer, size});
    if (alloc) {
      auto const slot = static_cast<std::uint32_t>(t.slot_size.size());
      t.slot_size.push_back(size);
      slot_live.push_back(1);
      if (auto const it = live.find(pointer); it != live.end()) {
        ++t.live_reallocations;
        note("allocation of " + ptr_text + ", which is live since line " +
             std::to_string(it->second.line) + " (never freed by the log)");
      }
      live[pointer] = {slot, line_no};  // the newer allocation takes the address
      t.events.push_back({slot, true, size});
      live_bytes += size;
      t.total_allocated += size;
      t.peak_live = std::max(t.peak_live, live_bytes);
    } else {
      auto const it = live.find(pointer);
      if (it == live.end()) {
        ++t.unmatched_frees;
        note("free of " + ptr_text + ", which is not live (skipped)");
        continue;
      }
      std::uint32_t const slot = it->second.slot;
      t.events.push_back({slot, false, t.slot_size[slot]});
      live_bytes -= t.slot_size[slot];
      slot_live[slot] = 0;
      live.erase(it);
    }
  }
  for (std::uint32_t slot = 0; slot < slot_live.size(); ++slot) {
    if (slot_live[slot] != 0) {
      t.leftover_slots.push_back(slot);
    }
  }
  if (t.events.empty()) {
    throw trace_error(path + ": no allocate or free events");
  }
  return t;
}

/**
 * @brief Reads the log at @p path. @copydetails parse_trace
 * @throws trace_error also if the file cannot be opened.
 */
inline trace load_trace(std::string const& path, std::size_t max_problems = 10) {
  std::ifstream in(path);
  if (!in) {
    throw trace_error("cannot open the allocation log " + path);
  }
  return parse_trace(in, path, max_problems);
}

}  // namespace rmm::replay
