// logging_resource_adaptor on a GPU: device allocations over cuda_memory_resource and over a pool
// on real streams (the default, legacy and per-thread handles and created streams) logged to an
// ostream and to a file, parsed back with the strict parser of utilities/allocation_log.hpp (the
// trace file's row format) and compared with the operations; a device out-of-memory logged as
// "allocate failure" and rethrown; many threads on their own streams.
#include "../utilities/allocation_log.hpp"
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using rmm::mr::logging_resource_adaptor;
using rmm::test::log_row;
using rmm::test::parse_log_row;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
constexpr std::size_t MiB   = std::size_t{1} << 20U;

std::uintptr_t handle_of(rmm::cuda_stream_view stream) {
  return reinterpret_cast<std::uintptr_t>(stream.value());
}

std::vector<log_row> parse_log(std::string const& text) {
  auto const lines = rmm::test::split_lines(text);
  REQUIRE(!lines.empty());
  CHECK(lines.front() == rmm::test::allocation_log_header);
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
  char const* action;
  void* ptr;
  std::size_t size;
  std::uintptr_t stream;
};

void check_rows(std::vector<log_row> const& rows, std::vector<op> const& ops) {
  REQUIRE(rows.size() == ops.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(rows[i].action == ops[i].action);
    CHECK(rows[i].pointer == reinterpret_cast<std::uintptr_t>(ops[i].ptr));
    CHECK(rows[i].size == ops[i].size);
    CHECK(rows[i].stream == ops[i].stream);
    CHECK(rows[i].thread == rows[0].thread);
  }
}

// Device allocations on every kind of stream, written and read back; returns what was done.
std::vector<op> exercise(logging_resource_adaptor& mr) {
  rmm::cuda_stream created;
  std::vector<op> ops;
  std::uint32_t seed = 0;
  for (rmm::cuda_stream_view stream : {rmm::cuda_stream_view{created},
                                       rmm::cuda_stream_default,
                                       rmm::cuda_stream_legacy,
                                       rmm::cuda_stream_per_thread}) {
    void* p = mr.allocate(stream, MiB + seed, align);
    ops.push_back({"allocate", p, MiB + seed, handle_of(stream)});
    rmm::test::fill_pattern(p, MiB + seed, seed, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(p, MiB + seed, seed, stream.value()) == 0);
    mr.deallocate(stream, p, MiB + seed, align);
    ops.push_back({"free", p, MiB + seed, handle_of(stream)});
    ++seed;
  }
  void* s = mr.allocate_sync(4096, align);  // the synchronous forms log stream 0
  ops.push_back({"allocate", s, 4096, 0});
  mr.deallocate_sync(s, 4096, align);
  ops.push_back({"free", s, 4096, 0});
  created.synchronize();
  return ops;
}

}  // namespace

TEMPLATE_TEST_CASE("logging_resource_adaptor (gpu): logs device allocations on real streams",
                   "[gpu][logging]",
                   rmm::mr::cuda_memory_resource,
                   rmm::mr::pool_memory_resource) {
  auto upstream = [] {
    if constexpr (std::is_same_v<TestType, rmm::mr::pool_memory_resource>) {
      return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
    } else {
      return rmm::mr::cuda_memory_resource{};
    }
  }();
  SECTION("to an ostream") {
    std::ostringstream out;
    logging_resource_adaptor mr{upstream, out};
    CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
    auto const ops = exercise(mr);
    check_rows(parse_log(out.str()), ops);
    CHECK(parse_log(out.str())[0].thread == static_cast<unsigned long long>(::syscall(SYS_gettid)));
  }
  SECTION("to a file") {
    std::string const path = "rmm_logging_gpu_" + std::to_string(::getpid()) + ".csv";
    std::vector<op> ops;
    {
      logging_resource_adaptor mr{upstream, path, true};
      ops = exercise(mr);
    }
    std::ifstream in{path};
    std::stringstream text;
    text << in.rdbuf();
    check_rows(parse_log(text.str()), ops);
    std::remove(path.c_str());
  }
}

TEST_CASE("logging_resource_adaptor (gpu): device out of memory is logged and rethrown",
          "[gpu][logging][expected_api_errors]") {
  std::ostringstream out;
  logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, out};
  rmm::cuda_stream stream;
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate(stream, too_much, align), rmm::out_of_memory);
  auto const rows = parse_log(out.str());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].action == "allocate failure");
  CHECK(rows[0].null_pointer);
  CHECK(rows[0].size == too_much);
  CHECK(rows[0].stream == handle_of(stream));
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("logging_resource_adaptor (gpu): many threads on their own streams", "[gpu][logging]") {
  std::ostringstream out;
  logging_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                              out};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 100;
  std::atomic<std::size_t> mismatches{0};
  std::atomic<int> errors{0};
  // Created up front: a stream made and destroyed inside a thread could reuse another's handle.
  std::vector<rmm::cuda_stream> streams(num_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto& stream = streams[static_cast<std::size_t>(t)];
        for (int i = 0; i < per_thread; ++i) {
          auto const seed = static_cast<std::uint32_t>(t * 1000 + i);
          void* p         = mr.allocate(stream, 8192, align);
          rmm::test::fill_pattern(p, 8192, seed, stream.value());
          mismatches += rmm::test::count_pattern_mismatches(p, 8192, seed, stream.value());
          mr.deallocate(stream, p, 8192, align);
        }
        stream.synchronize();
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  CHECK(mismatches == 0);
  auto const rows = parse_log(out.str());
  CHECK(rows.size() == 2 * num_threads * per_thread);
  std::map<std::uintptr_t, int> per_stream;
  for (auto const& row : rows) {
    ++per_stream[row.stream];
  }
  for (auto const& stream : streams) {
    CHECK(per_stream[handle_of(stream)] == 2 * per_thread);
  }
}
