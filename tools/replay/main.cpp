// rmm-replay: replays an allocation log through memory resources and prints a Markdown table of
// time per event, peak reserved memory and efficiency. See docs/replay.md and replay_tool.hpp.
//
//   rmm-replay ../shared/traces/resnet50_train.csv --simulated 16G --search
//
// Exit status: 0 (rows that failed say so in the table), 2 for a bad command line or log.
#include "replay_tool.hpp"
#include "trace.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto const& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << rmm::replay::usage();
      return 0;
    }
  }
  try {
    auto const options = rmm::replay::parse_command_line(args);
    auto const t       = rmm::replay::load_trace(options.log);
    std::cerr << "log " << t.path << ": " << t.records.size() << " events (" << t.slot_size.size()
              << " allocations, " << t.unmatched_frees << " unmatched frees, "
              << t.live_reallocations << " allocations of a live address, "
              << t.leftover_slots.size() << " never freed, " << t.failed_allocations
              << " failed), peak live " << t.peak_live << " bytes\n";
    for (auto const& p : t.problems) {
      std::cerr << t.path << ":" << p.line << ": warning: " << p.message << "\n";
    }
    auto const rows = rmm::replay::run_tool(options, t, std::cerr);
    std::cout << rmm::replay::markdown_table(rows, t, options);
  } catch (std::exception const& e) {
    std::cerr << "rmm-replay: " << e.what() << "\n";
    if (dynamic_cast<std::invalid_argument const*>(&e) != nullptr) {
      std::cerr << rmm::replay::usage();
    }
    return 2;
  }
  return 0;
}
