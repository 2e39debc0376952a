// tools/replay: the log reader (trace.hpp), the replay and bisection (replay.hpp) and the
// rmm-replay engine over the simulated upstream, end to end. Host only: no GPU needed.
#include <replay.hpp>
#include <replay_tool.hpp>
#include <trace.hpp>

#include <rmm/aligned.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::replay::parse_trace;
using rmm::replay::trace;
using sim = rmm::mr::simulated_memory_resource;

constexpr char const* header = "Thread,Time,Action,Pointer,Size,Stream\n";

trace parse(std::string const& body) {
  std::istringstream in{header + body};
  return parse_trace(in, "test.csv");
}

std::string line(char const* action, std::uint64_t pointer, std::size_t size) {
  char text[128];
  std::snprintf(text,
                sizeof(text),
                "0,16:36:53.204356,%s,0x%llx,%zu,0\n",
                action,
                static_cast<unsigned long long>(pointer),
                size);
  return text;
}

// A random log with a fixed seed: returns it and its peak live bytes, computed independently.
std::pair<std::string, std::size_t> random_log(std::uint64_t seed, int events) {
  std::mt19937_64 rng{seed};
  std::vector<std::pair<std::uint64_t, std::size_t>> live;
  std::string log;
  std::size_t bytes = 0, peak = 0;
  std::uint64_t next = 0x7f0000000000;
  for (int i = 0; i < events; ++i) {
    if (live.empty() || rng() % 5 < 3) {
      std::size_t const size = 1 + rng() % (std::size_t{4} << 20);
      live.emplace_back(next, size);
      log += line("allocate", next, size);
      next += rmm::align_up(size, 512);
      bytes += size;
      peak = std::max(peak, bytes);
    } else {
      auto const k = static_cast<std::ptrdiff_t>(rng() % live.size());
      log += line("free",
                  live[static_cast<std::size_t>(k)].first,
                  live[static_cast<std::size_t>(k)].second);
      bytes -= live[static_cast<std::size_t>(k)].second;
      live.erase(live.begin() + k);
    }
  }
  return {log, peak};
}

bool replays_in_pool(trace const& t, std::size_t capacity) {
  rmm::mr::pool_memory_resource pool{sim{capacity}, 0, capacity};
  return rmm::replay::replay_checked(
             pool, t, [] { return std::size_t{0}; }, [] {})
      .ok;
}

}  // namespace

TEST_CASE("trace: reads the trace's rows and resolves frees", "[replay]") {
  auto const t = parse(
      line("allocate", 0x7f70abe00000, 37632) + line("allocate", 0x7f70abe09400, 256) + "\r\n" +
      line("free", 0x7f70abe00000, 37632) + "7,00:00:00.000000,allocate failure,(nil),5,0x1\n");
  REQUIRE(t.events.size() == 3);
  CHECK(t.records.size() == 3);
  CHECK(t.events[2].slot == 0);
  CHECK_FALSE(t.events[2].alloc);
  CHECK(t.events[2].size == 37632);
  CHECK(t.peak_live == 37632 + 256);
  CHECK(t.leftover_slots == std::vector<std::uint32_t>{1});
  CHECK(t.failed_allocations == 1);
  CHECK(t.problems.empty());
  CHECK(t.name() == "test");
}

TEST_CASE("trace: malformed lines are errors naming the line", "[replay]") {
  std::string const good = line("allocate", 0x1000, 10);
  for (auto const& [bad, what] : std::vector<std::pair<std::string, std::string>>{
           {"0,16:36:53.20435,allocate,0x7f70abe00000,37632,0", "time"},
           {"0,16:36:53.204356,alloc,0x7f70abe00000,37632,0", "action 'alloc'"},
           {"0,16:36:53.204356,allocate,7f70abe00000,37632,0", "pointer"},
           {"0,16:36:53.204356,allocate,0x7f70abe00000,-5,0", "size"},
           {"0,16:36:53.204356,allocate,0x7f70abe00000,37632,", "stream"},
           {"0,16:36:53.204356,allocate,0x7f70abe00000,37632,0,extra", "6 comma-separated"},
           {"x,16:36:53.204356,allocate,0x7f70abe00000,37632,0", "thread"}}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse(good + good + bad + "\n"), Contains("test.csv:4: ") && Contains(what));
  }
  std::istringstream no_header{good};
  CHECK_THROWS_WITH(parse_trace(no_header, "x.csv"), Contains("x.csv:1: expected the header"));
  CHECK_THROWS_WITH(parse(""), Contains("no allocate or free events"));
  CHECK_THROWS_AS(rmm::replay::load_trace("/nonexistent/log.csv"), rmm::replay::trace_error);
}

TEST_CASE("trace: unknown frees and allocations of a live address are reported", "[replay]") {
  auto const t = parse(line("allocate", 0x1000, 100) + line("free", 0x2000, 50) +
                       line("allocate", 0x1000, 300) + line("free", 0x1000, 300));
  CHECK(t.unmatched_frees == 1);
  CHECK(t.live_reallocations == 1);
  REQUIRE(t.problems.size() == 2);
  CHECK(t.problems[0].line == 3);
  CHECK_THAT(t.problems[0].message, Contains("free of 0x2000") && Contains("not live"));
  CHECK(t.problems[1].line == 4);
  CHECK_THAT(t.problems[1].message, Contains("live since line 2"));
  CHECK(t.peak_live == 400);                                 // the older one stays live
  CHECK(t.leftover_slots == std::vector<std::uint32_t>{0});  // and is freed after a replay
  CHECK(t.events.size() == 3);
}

TEST_CASE("trace: what logging_resource_adaptor writes reads back", "[replay]") {
  std::ostringstream out;
  sim up{std::size_t{1} << 30};
  {
    rmm::mr::logging_resource_adaptor mr{up, out};
    cuda::stream_ref const stream{cudaStream_t{nullptr}};
    void* a = mr.allocate(stream, 1000, 256);
    void* b = mr.allocate(stream, 3000, 256);
    mr.deallocate(stream, a, 1000, 256);
    void* c = mr.allocate(stream, 500, 256);
    mr.deallocate(stream, b, 3000, 256);
    mr.deallocate(stream, c, 500, 256);
  }
  std::istringstream in{out.str()};
  auto const t = parse_trace(in, "logged.csv");
  CHECK(t.events.size() == 6);
  CHECK(t.peak_live == 4000);
  CHECK(t.leftover_slots.empty());
  CHECK(t.problems.empty());
}

TEST_CASE("replay: random logs over a pool over the simulated upstream", "[replay]") {
  for (std::uint64_t seed : {1U, 2U, 3U}) {
    auto const [log, peak] = random_log(seed, 3000);
    auto const t           = parse(log);
    CHECK(t.peak_live == peak);
    sim up{std::size_t{1} << 34};
    {
      rmm::mr::pool_memory_resource pool{up, 0};
      auto const r = rmm::replay::replay_checked(
          pool, t, [&] { return pool.pool_size(); }, [] {});
      CHECK(r.ok);
      CHECK(r.peak_sample >= peak);
      CHECK(r.peak_sample == up.peak_bytes());
    }
    CHECK(up.current_bytes() == 0);
    CHECK(up.statistics().mismatched_frees == 0);
    // The bisection: its result replays, one step less does not (granularity 1 MiB).
    std::size_t const step = std::size_t{1} << 20;
    auto const found       = rmm::replay::smallest_capacity(
        t,
        step,
        [](std::size_t cap) {
          return std::make_shared<rmm::mr::pool_memory_resource>(sim{cap}, 0, cap);
        },
        [] {});
    REQUIRE(found.capacity.has_value());
    CHECK(*found.capacity >= peak);
    CHECK(replays_in_pool(t, *found.capacity));
    if (*found.capacity > rmm::align_up(peak, step)) {
      CHECK_FALSE(replays_in_pool(t, *found.capacity - step));
    }
  }
}

TEST_CASE("rmm-replay engine: the real log over the simulated upstream", "[replay]") {
  char const* path = std::getenv("RMM_TRACE");
  if (path == nullptr || !std::ifstream(path)) {
    WARN("skipped: RMM_TRACE does not name a readable log (../shared/traces/resnet50_train.csv)");
    return;
  }
  auto const t = rmm::replay::load_trace(path);
  // Peak live bytes, computed here with a plain map.
  std::ifstream in{path};
  std::string text;
  std::getline(in, text);
  std::map<std::string, std::size_t> live;
  std::size_t bytes = 0, peak = 0;
  while (std::getline(in, text)) {
    std::stringstream fields{text};
    std::string f[6];
    for (auto& s : f) {
      std::getline(fields, s, ',');
    }
    if (f[2] == "allocate") {
      live[f[3]] = std::stoull(f[4]);
      bytes += live[f[3]];
      peak = std::max(peak, bytes);
    } else if (auto it = live.find(f[3]); it != live.end()) {
      bytes -= it->second;
      live.erase(it);
    }
  }
  CHECK(t.peak_live == peak);

  rmm::replay::tool_options options;
  options.log         = path;
  options.resources   = {"pool"};
  options.simulated   = std::size_t{16} << 30;
  options.search      = true;
  options.repetitions = 1;
  std::ostringstream progress;
  auto const rows = rmm::replay::run_tool(options, t, progress);
  REQUIRE(rows.size() == 1);
  INFO(progress.str());
  REQUIRE(rows[0].error.empty());
  CHECK(rows[0].peak_live == peak);
  REQUIRE(rows[0].reserved.has_value());
  CHECK(*rows[0].reserved >= peak);
  REQUIRE(rows[0].capacity.has_value());
  std::size_t const cap = *rows[0].capacity;
  CHECK(cap >= peak);
  CHECK(replays_in_pool(t, cap));
  CHECK_FALSE(replays_in_pool(t, cap - options.granularity));
  CHECK_THAT(rmm::replay::markdown_table(rows, t, options), Contains("| pool | "));
}

TEST_CASE("rmm-replay: command line", "[replay]") {
  auto const o = rmm::replay::parse_command_line({"log.csv",
                                                  "--resource",
                                                  "pool,binning",
                                                  "--resource",
                                                  "arena",
                                                  "--simulated",
                                                  "16G",
                                                  "--search"});
  CHECK(o.log == "log.csv");
  CHECK(o.resources == std::vector<std::string>{"pool", "binning", "arena"});
  CHECK(o.simulated == std::optional<std::size_t>{std::size_t{16} << 30});
  CHECK(o.search);
  CHECK(rmm::replay::parse_bytes("1.5MiB") == 3 * (std::size_t{1} << 19));
  CHECK(rmm::replay::parse_bytes("4096") == 4096);
  CHECK_THROWS_AS(rmm::replay::parse_bytes("12Q"), std::invalid_argument);
  CHECK_THROWS_AS(rmm::replay::parse_command_line({}), std::invalid_argument);
  CHECK_THROWS_AS(rmm::replay::parse_command_line({"a.csv", "--bogus"}), std::invalid_argument);
  CHECK_THROWS_AS(rmm::replay::parse_command_line({"a.csv", "--simulated"}), std::invalid_argument);
  rmm::replay::tool_options unknown;
  unknown.simulated = std::size_t{1} << 30;
  unknown.resources = {"nonsense"};
  std::ostringstream progress;
  CHECK_THROWS_WITH(rmm::replay::run_tool(unknown, parse(line("allocate", 0x1000, 1)), progress),
                    Contains("unknown resource 'nonsense'"));
}
