// logging_resource_adaptor without a GPU, over host-backed "device" memory
// (utilities/test_resources.hpp). Every line it writes is parsed back with the strict parser of
// utilities/allocation_log.hpp, which also accepts the rows of the ResNet-50 trace
// (shared/traces/resnet50_train.csv; a sample is embedded, the whole file is read when
// RMM_TRACE names it), and compared with the operations: to an ostream, to a file, to the file
// named by RMM_LOG_FILE; allocation failures, stream handles, the synchronous forms, auto_flush,
// copies and many threads.
#include "../utilities/allocation_log.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::logging_resource_adaptor;
using rmm::test::host_backed_resource;
using rmm::test::log_row;
using rmm::test::parse_log_row;
using rmm::test::split_lines;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;

cuda::stream_ref stream_of(std::uintptr_t handle) {
  return cuda::stream_ref{reinterpret_cast<cudaStream_t>(handle)};
}

unsigned long long this_thread_id() {
  return static_cast<unsigned long long>(::syscall(SYS_gettid));
}

std::string read_file(std::string const& path) {
  std::ifstream in{path};
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string temp_path(std::string const& stem) {
  return "rmm_" + stem + "_" + std::to_string(::getpid()) + ".csv";
}

// Parses a whole log: the header, then rows that all parse.
std::vector<log_row> parse_log(std::string const& text) {
  auto const lines = split_lines(text);
  REQUIRE(!lines.empty());
  CHECK(lines.front() == rmm::test::allocation_log_header);
  CHECK((!text.empty() && text.back() == '\n'));
  std::vector<log_row> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO("line " << i << ": " << lines[i]);
    auto row = parse_log_row(lines[i]);
    REQUIRE(row.has_value());
    rows.push_back(*row);
  }
  return rows;
}

struct op {
  std::string action;
  void* ptr;
  std::size_t size;
  std::uintptr_t stream;
};

void check_rows(std::vector<log_row> const& rows, std::vector<op> const& ops) {
  REQUIRE(rows.size() == ops.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(rows[i].action == ops[i].action);
    CHECK(rows[i].null_pointer == (ops[i].ptr == nullptr));
    CHECK(rows[i].pointer == reinterpret_cast<std::uintptr_t>(ops[i].ptr));
    CHECK(rows[i].size == ops[i].size);
    CHECK(rows[i].stream == ops[i].stream);
    CHECK(rows[i].thread == this_thread_id());
    if (i > 0) {
      CHECK(rows[i].time_of_day() >= rows[i - 1].time_of_day());  // unless run across midnight
    }
  }
}

// A sequence of operations on several streams, through both forms; returns what was done.
std::vector<op> exercise(logging_resource_adaptor& mr) {
  std::vector<op> ops;
  void* a = mr.allocate(stream_of(0), 37632, align);
  ops.push_back({"allocate", a, 37632, 0});
  void* b = mr.allocate(stream_of(0x1), 256, align);  // the legacy default stream's handle
  ops.push_back({"allocate", b, 256, 0x1});
  void* c = mr.allocate(stream_of(0x7f00deadbeef), 8, align);
  ops.push_back({"allocate", c, 8, 0x7f00deadbeef});
  mr.deallocate(stream_of(0x2), b, 256, align);
  ops.push_back({"free", b, 256, 0x2});
  void* d = mr.allocate_sync(147456, align);  // synchronous: stream 0
  ops.push_back({"allocate", d, 147456, 0});
  mr.deallocate(stream_of(0), a, 37632, align);
  ops.push_back({"free", a, 37632, 0});
  mr.deallocate_sync(d, 147456, align);
  ops.push_back({"free", d, 147456, 0});
  mr.deallocate(stream_of(0x7f00deadbeef), c, 8, align);
  ops.push_back({"free", c, 8, 0x7f00deadbeef});
  void* z = mr.allocate(stream_of(0), 0, align);  // host_backed_resource gives nullptr
  ops.push_back({"allocate", z, 0, 0});
  mr.deallocate(stream_of(0), z, 0, align);
  ops.push_back({"free", z, 0, 0});
  return ops;
}

// Rows of shared/traces/resnet50_train.csv, as RMM wrote them.
constexpr char const* trace_sample =
    "Thread,Time,Action,Pointer,Size,Stream\n"
    "0,16:36:53.204356,allocate,0x7f70abe00000,37632,0\n"
    "0,16:36:53.205092,allocate,0x7f70abe09400,256,0\n"
    "0,16:36:53.205217,allocate,0x7f70abe09c00,8,0\n"
    "0,16:36:53.637540,free,0x7f704e000000,122065680,0\n"
    "0,16:36:54.430001,free,0x7f70abe00000,37632,0\n";

}  // namespace

// An upstream that fails, in a named namespace: clang drops the hidden-friend get_property of a
// class with internal linkage as unneeded.
namespace rmm::test::logging_fakes {
struct failing_resource {
  void* allocate_sync(std::size_t, std::size_t) { throw rmm::out_of_memory{"no memory"}; }
  void deallocate_sync(void*, std::size_t, std::size_t) noexcept {}
  void* allocate(cuda::stream_ref, std::size_t, std::size_t) {
    throw rmm::out_of_memory{"no memory"};
  }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  bool operator==(failing_resource const&) const noexcept { return true; }
  bool operator!=(failing_resource const&) const noexcept { return false; }
  friend void get_property(failing_resource const&, cuda::mr::device_accessible) noexcept {}
};
}  // namespace rmm::test::logging_fakes

TEST_CASE("allocation log parser: accepts the trace's rows, rejects malformed ones", "[logging]") {
  auto const rows = parse_log(trace_sample);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].thread == 0);
  CHECK(rows[0].hour == 16);
  CHECK(rows[0].minute == 36);
  CHECK(rows[0].second == 53);
  CHECK(rows[0].microsecond == 204356);
  CHECK(rows[0].action == "allocate");
  CHECK(rows[0].pointer == 0x7f70abe00000);
  CHECK(rows[0].size == 37632);
  CHECK(rows[0].stream == 0);
  CHECK(rows[3].action == "free");
  CHECK(rows[3].size == 122065680);
  for (char const* bad : {"0,16:36:53.20435,allocate,0x7f70abe00000,37632,0",  // 5 digits
                          "0,16:36:53.204356,alloc,0x7f70abe00000,37632,0",
                          "0,16:36:53.204356,allocate,7f70abe00000,37632,0",
                          "0,16:36:53.204356,allocate,0x7F70ABE00000,37632,0",
                          "0,16:36:53.204356,allocate,0x7f70abe00000,-5,0",
                          "0,16:36:53.204356,allocate,0x7f70abe00000,37632,",
                          "0,16:36:53.204356,allocate,0x7f70abe00000,37632,0,extra",
                          "x,16:36:53.204356,allocate,0x7f70abe00000,37632,0"}) {
    INFO(bad);
    CHECK_FALSE(parse_log_row(bad).has_value());
  }
  CHECK(parse_log_row("7,00:00:00.000000,allocate failure," + rmm::test::null_pointer_text() +
                      ",5,0x1")
            .has_value());
  // The whole trace, where available (RMM_TRACE=shared/traces/resnet50_train.csv).
  if (char const* trace = std::getenv("RMM_TRACE")) {
    auto const all = parse_log(read_file(trace));
    CHECK(all.size() > 1000);
  }
}

TEST_CASE("logging_resource_adaptor: types and properties", "[logging]") {
  STATIC_REQUIRE(cuda::mr::resource_with<logging_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(cuda::has_property<logging_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<logging_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<logging_resource_adaptor>);
  std::ostringstream out;
  host_backed_resource upstream;
  logging_resource_adaptor mr{upstream, out};
  CHECK(mr.header() == "Thread,Time,Action,Pointer,Size,Stream");
  CHECK(out.str() == "Thread,Time,Action,Pointer,Size,Stream\n");  // written at construction
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
}

TEST_CASE("logging_resource_adaptor: logs to an ostream, one parsable line per operation",
          "[logging]") {
  std::ostringstream out;
  logging_resource_adaptor mr{host_backed_resource{}, out};
  auto const ops = exercise(mr);
  mr.flush();
  auto const rows = parse_log(out.str());
  check_rows(rows, ops);
  // The null pointer of the zero-byte allocation is printf's %p of nullptr, like RMM's.
  auto const lines = split_lines(out.str());
  CHECK_THAT(lines.back(), Contains(",free," + rmm::test::null_pointer_text() + ",0,0"));
}

TEST_CASE("logging_resource_adaptor: logs to a file, truncating it", "[logging]") {
  auto const path = temp_path("logging_file");
  {
    std::ofstream old{path};
    old << "stale content\n";
  }
  std::vector<op> ops;
  {
    logging_resource_adaptor mr{host_backed_resource{}, path};
    ops = exercise(mr);
  }  // the last copy closes (and flushes) the file
  check_rows(parse_log(read_file(path)), ops);
  CHECK(read_file(path).find("stale") == std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("logging_resource_adaptor: an unopenable file is a logic_error naming it",
          "[logging][expected_api_errors]") {
  std::string const path = "/nonexistent-directory-rmm/log.csv";
  CHECK_THROWS_AS(logging_resource_adaptor(host_backed_resource{}, path), rmm::logic_error);
  CHECK_THROWS_WITH(logging_resource_adaptor(host_backed_resource{}, path),
                    Contains(path) && Contains("cannot open log file"));
}

TEST_CASE("logging_resource_adaptor: the default file is named by RMM_LOG_FILE",
          "[logging][expected_api_errors]") {
  char const* saved             = std::getenv("RMM_LOG_FILE");
  std::string const saved_value = saved != nullptr ? saved : "";
  auto const path               = temp_path("logging_env");

  ::unsetenv("RMM_LOG_FILE");
  CHECK_THROWS_AS(logging_resource_adaptor::get_default_filename(), rmm::logic_error);
  CHECK_THROWS_WITH(
      logging_resource_adaptor(host_backed_resource{}),
      Contains("RMM logging requested without an explicit file name, but RMM_LOG_FILE is "
               "unset"));

  ::setenv("RMM_LOG_FILE", path.c_str(), 1);
  CHECK(logging_resource_adaptor::get_default_filename() == path);
  {
    logging_resource_adaptor mr{host_backed_resource{}};
    void* p = mr.allocate(stream_of(0), 1000, align);
    mr.deallocate(stream_of(0), p, 1000, align);
  }
  auto const rows = parse_log(read_file(path));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].action == "allocate");
  CHECK(rows[1].action == "free");
  CHECK(rows[0].pointer == rows[1].pointer);
  std::remove(path.c_str());

  if (saved != nullptr) {
    ::setenv("RMM_LOG_FILE", saved_value.c_str(), 1);
  } else {
    ::unsetenv("RMM_LOG_FILE");
  }
}

TEST_CASE("logging_resource_adaptor: a failed allocation is logged and rethrown",
          "[logging][expected_api_errors]") {
  std::ostringstream out;
  logging_resource_adaptor mr{rmm::test::logging_fakes::failing_resource{}, out};
  CHECK_THROWS_AS(mr.allocate(stream_of(0x1234), 4096, align), rmm::out_of_memory);
  CHECK_THROWS_AS(mr.allocate_sync(512, align), rmm::out_of_memory);
  auto const rows = parse_log(out.str());
  check_rows(rows,
             {{"allocate failure", nullptr, 4096, 0x1234}, {"allocate failure", nullptr, 512, 0}});
  CHECK_THAT(out.str(),
             Contains(",allocate failure," + rmm::test::null_pointer_text() + ",4096,0x1234\n"));
}

TEST_CASE("logging_resource_adaptor: auto_flush and flush() make lines visible", "[logging]") {
  auto const path = temp_path("logging_flush");
  {
    logging_resource_adaptor mr{host_backed_resource{}, path, true};
    void* p = mr.allocate(stream_of(0), 100, align);
    CHECK(parse_log(read_file(path)).size() == 1);  // on disk without flush()
    mr.deallocate(stream_of(0), p, 100, align);
    CHECK(parse_log(read_file(path)).size() == 2);
  }
  {
    logging_resource_adaptor mr{host_backed_resource{}, path};
    void* p = mr.allocate(stream_of(0), 100, align);
    mr.flush();
    CHECK(parse_log(read_file(path)).size() == 1);
    mr.deallocate(stream_of(0), p, 100, align);
  }
  std::remove(path.c_str());
}

TEST_CASE("logging_resource_adaptor: copies share the destination", "[logging]") {
  std::ostringstream out;
  logging_resource_adaptor mr{host_backed_resource{}, out};
  logging_resource_adaptor copy = mr;
  CHECK(copy == mr);
  std::ostringstream other;
  CHECK(logging_resource_adaptor{host_backed_resource{}, other} != mr);
  void* p = copy.allocate(stream_of(0), 64, align);
  mr.deallocate(stream_of(0), p, 64, align);
  check_rows(parse_log(out.str()), {{"allocate", p, 64, 0}, {"free", p, 64, 0}});
}

TEST_CASE("logging_resource_adaptor: many threads write whole lines", "[logging]") {
  std::ostringstream out;
  logging_resource_adaptor mr{host_backed_resource{}, out};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 300;
  std::vector<std::thread> threads;
  std::vector<unsigned long long> ids(num_threads);
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      ids[static_cast<std::size_t>(t)] = this_thread_id();
      for (int i = 0; i < per_thread; ++i) {
        auto const bytes = static_cast<std::size_t>(1 + t * 1000 + i);
        void* p          = mr.allocate(stream_of(static_cast<std::uintptr_t>(t)), bytes, align);
        mr.deallocate(stream_of(static_cast<std::uintptr_t>(t)), p, bytes, align);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  auto const rows = parse_log(out.str());
  REQUIRE(rows.size() == 2 * num_threads * per_thread);
  std::set<unsigned long long> const known(ids.begin(), ids.end());
  // Per pointer, allocations and frees alternate (a free precedes the allocation that reuses
  // its memory), and each row's thread, stream and size belong together.
  std::map<std::uintptr_t, std::size_t> live;
  std::size_t allocations{0};
  for (auto const& row : rows) {
    CHECK(known.count(row.thread) == 1);
    auto const t = static_cast<int>(row.stream);
    REQUIRE(t < num_threads);
    CHECK(row.thread == ids[static_cast<std::size_t>(t)]);
    CHECK(row.size > static_cast<std::size_t>(t * 1000));
    CHECK(row.size <= static_cast<std::size_t>(t * 1000 + per_thread));
    if (row.action == "allocate") {
      ++allocations;
      CHECK(live.emplace(row.pointer, row.size).second);
    } else {
      REQUIRE(row.action == "free");
      auto const found = live.find(row.pointer);
      REQUIRE(found != live.end());
      CHECK(found->second == row.size);
      live.erase(found);
    }
  }
  CHECK(allocations == num_threads * per_thread);
  CHECK(live.empty());
}
