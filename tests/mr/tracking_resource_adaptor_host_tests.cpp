// tracking_resource_adaptor without a GPU, over host-backed "device" memory
// (utilities/test_resources.hpp): the outstanding-allocations map and byte count, the string of
// outstanding allocations with and without stacks, logging them, frees of unknown pointers and
// with wrong sizes (logged, as RMM does), a pointer handed out twice, copies and many threads.
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/detail/stack_trace.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::tracking_resource_adaptor;
using rmm::test::host_backed_resource;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
cuda::stream_ref const stream{cudaStream_t{}};

std::string pointer_text(void* ptr) {
  std::ostringstream oss;
  oss << ptr;
  return oss.str();
}

std::string printf_pointer(void* ptr) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", ptr);
  return text;
}

std::string read_file(std::string const& path) {
  std::ifstream in{path};
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// Sends the process-wide log to a file for the test's duration, then back to stderr.
struct captured_log {
  std::string path      = "rmm_tracking_test_" + std::to_string(::getpid()) + ".log";
  rmm::level_enum level = rmm::get_log_level();
  explicit captured_log(rmm::level_enum new_level) {
    std::remove(path.c_str());
    rmm::set_log_file(path);
    rmm::set_log_level(new_level);
  }
  captured_log(captured_log const&)            = delete;
  captured_log& operator=(captured_log const&) = delete;
  ~captured_log() {
    rmm::set_log_to_stderr();
    rmm::set_log_level(level);
    std::remove(path.c_str());
  }
  [[nodiscard]] std::string text() const {
    rmm::flush_log();
    return read_file(path);
  }
};

}  // namespace

// An upstream that hands out the same block every time, in a named namespace: clang drops the
// hidden-friend get_property of a class with internal linkage as unneeded.
namespace rmm::test::tracking_fakes {
struct same_pointer_resource {
  std::shared_ptr<std::byte[]> block{new std::byte[4096]};  // NOLINT(modernize-avoid-c-arrays)
  std::shared_ptr<int> frees = std::make_shared<int>(0);
  void* allocate_sync(std::size_t, std::size_t) { return block.get(); }
  void deallocate_sync(void*, std::size_t, std::size_t) noexcept { ++*frees; }
  void* allocate(cuda::stream_ref, std::size_t, std::size_t) { return block.get(); }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept { ++*frees; }
  bool operator==(same_pointer_resource const& o) const noexcept { return block == o.block; }
  bool operator!=(same_pointer_resource const& o) const noexcept { return !(*this == o); }
  friend void get_property(same_pointer_resource const&, cuda::mr::device_accessible) noexcept {}
};
}  // namespace rmm::test::tracking_fakes

TEST_CASE("tracking_resource_adaptor: types and properties", "[tracking]") {
  STATIC_REQUIRE(cuda::mr::resource_with<tracking_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(cuda::has_property<tracking_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<tracking_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<tracking_resource_adaptor>);
  STATIC_REQUIRE(
      std::is_same_v<tracking_resource_adaptor::read_lock_t, std::shared_lock<std::shared_mutex>>);
  STATIC_REQUIRE(
      std::is_same_v<tracking_resource_adaptor::write_lock_t, std::unique_lock<std::shared_mutex>>);
  using info = tracking_resource_adaptor::allocation_info;
  STATIC_REQUIRE(std::is_same_v<decltype(info::allocation_size), std::size_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(info::strace), std::unique_ptr<rmm::detail::stack_trace>>);
  STATIC_REQUIRE_FALSE(std::is_default_constructible_v<info>);
  STATIC_REQUIRE(std::is_constructible_v<info, std::size_t, bool>);
}

TEST_CASE("tracking_resource_adaptor: tracks outstanding allocations", "[tracking]") {
  tracking_resource_adaptor mr{host_backed_resource{}};
  CHECK(mr.get_outstanding_allocations().empty());
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(mr.get_outstanding_allocations_str().empty());

  void* a = mr.allocate(stream, 100, align);
  void* b = mr.allocate_sync(3000, align);
  void* z = mr.allocate(stream, 0, align);  // zero bytes: not tracked
  {
    auto const& map = mr.get_outstanding_allocations();
    REQUIRE(map.size() == 2);
    CHECK(map.at(a).allocation_size == 100);
    CHECK(map.at(b).allocation_size == 3000);
    CHECK(map.at(a).strace == nullptr);  // stacks not captured by default
  }
  CHECK(mr.get_allocated_bytes() == 3100);

  // One line per allocation in address order: "<pointer>: <size> B".
  void* first  = a < b ? a : b;
  void* second = a < b ? b : a;
  auto size_of = [&](void* p) { return p == a ? std::string{"100"} : std::string{"3000"}; };
  CHECK(mr.get_outstanding_allocations_str() == pointer_text(first) + ": " + size_of(first) +
                                                    " B\n" + pointer_text(second) + ": " +
                                                    size_of(second) + " B\n");

  mr.deallocate(stream, a, 100, align);
  CHECK(mr.get_outstanding_allocations().size() == 1);
  CHECK(mr.get_allocated_bytes() == 3000);
  mr.deallocate_sync(b, 3000, align);
  mr.deallocate(stream, z, 0, align);
  CHECK(mr.get_outstanding_allocations().empty());
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(mr.get_outstanding_allocations_str().empty());
}

TEST_CASE("tracking_resource_adaptor: capture_stacks records the allocating call stack",
          "[tracking]") {
  tracking_resource_adaptor mr{host_backed_resource{}, true};
  void* p          = mr.allocate(stream, 64, align);
  auto const& info = mr.get_outstanding_allocations().at(p);
  REQUIRE(info.strace != nullptr);
  auto const text = mr.get_outstanding_allocations_str();
  CHECK_THAT(text, Contains(pointer_text(p) + ": 64 B : callstack:\n"));
#if defined(__GLIBC__)
  CHECK_FALSE(info.strace->frames().empty());
  CHECK_THAT(text, Contains("#0 in "));
  CHECK_THAT(text, Contains("#1 in "));
#endif
  mr.deallocate(stream, p, 64, align);
  CHECK(mr.get_outstanding_allocations_str().empty());
}

TEST_CASE("tracking_resource_adaptor: stacks are captured by each allocating thread",
          "[tracking]") {
  tracking_resource_adaptor mr{host_backed_resource{}, true};
  std::vector<std::thread> threads;
  std::vector<void*> ptrs(8);
  for (std::size_t t = 0; t < ptrs.size(); ++t) {
    threads.emplace_back([&, t] { ptrs[t] = mr.allocate(stream, 100 + t, align); });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  for (std::size_t t = 0; t < ptrs.size(); ++t) {
    auto const& info = mr.get_outstanding_allocations().at(ptrs[t]);
    CHECK(info.allocation_size == 100 + t);
    CHECK(info.strace != nullptr);
  }
  CHECK(mr.get_allocated_bytes() == 8 * 100 + 28);
  for (std::size_t t = 0; t < ptrs.size(); ++t) {
    mr.deallocate(stream, ptrs[t], 100 + t, align);
  }
  CHECK(mr.get_outstanding_allocations().empty());
}

TEST_CASE("tracking_resource_adaptor: log_outstanding_allocations logs at level debug",
          "[tracking]") {
  tracking_resource_adaptor mr{host_backed_resource{}};
  void* p = mr.allocate(stream, 4321, align);
  {
    captured_log log{rmm::level_enum::debug};
    mr.log_outstanding_allocations();
    auto const text = log.text();
    CHECK_THAT(text,
               Contains("Outstanding Allocations: " + pointer_text(p) + ": 4321 B") &&
                   Contains("[debug]"));
  }
  {
    captured_log log{rmm::level_enum::info};
    mr.log_outstanding_allocations();
    CHECK(log.text().find("Outstanding Allocations") == std::string::npos);
  }
  mr.deallocate(stream, p, 4321, align);
}

TEST_CASE("tracking_resource_adaptor: freeing an untracked pointer logs an error and forwards",
          "[tracking][expected_api_errors]") {
  rmm::test::counting_resource upstream{host_backed_resource{}};
  tracking_resource_adaptor mr{upstream};
  void* tracked = mr.allocate(stream, 512, align);
  void* foreign = upstream.allocate(stream, 1000, align);  // not through the adaptor
  captured_log log{rmm::level_enum::warn};
  mr.deallocate(stream, foreign, 1000, align);
  CHECK(upstream.counts().deallocations == 1);  // the free still reached the upstream
  CHECK(mr.get_allocated_bytes() == 512);       // and did not disturb the count
  CHECK(mr.get_outstanding_allocations().size() == 1);
  CHECK_THAT(
      log.text(),
      Contains("[error]") &&
          Contains("Deallocating a pointer that was not tracked. Ptr: " + printf_pointer(foreign) +
                   " [1000B], Current Num. Allocations: 1; tracking_resource_adaptor"));
  mr.deallocate(stream, tracked, 512, align);
  CHECK(upstream.counts().bytes_outstanding == 0);
}

TEST_CASE(
    "tracking_resource_adaptor: a free with the wrong size logs an error and gives the "
    "allocated size to the upstream",
    "[tracking][expected_api_errors]") {
  rmm::test::verifying_resource upstream{host_backed_resource{}};
  tracking_resource_adaptor mr{upstream};
  void* p = mr.allocate(stream, 1000, align);
  captured_log log{rmm::level_enum::warn};
  mr.deallocate(stream, p, 999, align);
  CHECK(upstream.failures().empty());  // the upstream saw the size it allocated
  CHECK(upstream.live_allocations() == 0);
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK_THAT(
      log.text(),
      Contains("[error]") && Contains("Alloc bytes (1000) and Dealloc bytes (999) do not match; "
                                      "tracking_resource_adaptor: pointer " +
                                      pointer_text(p)));
}

TEST_CASE("tracking_resource_adaptor: a pointer handed out twice is refused",
          "[tracking][expected_api_errors]") {
  rmm::test::tracking_fakes::same_pointer_resource upstream;
  tracking_resource_adaptor mr{upstream};
  void* p = mr.allocate(stream, 100, align);
  CHECK_THROWS_AS(mr.allocate(stream, 200, align), rmm::logic_error);
  CHECK_THROWS_WITH(mr.allocate_sync(200, align), Contains("pointer is already tracked"));
  CHECK(*upstream.frees == 2);  // both duplicates went back to the upstream
  CHECK(mr.get_allocated_bytes() == 100);
  CHECK(mr.get_outstanding_allocations().at(p).allocation_size == 100);
  mr.deallocate(stream, p, 100, align);
  CHECK(mr.get_allocated_bytes() == 0);
}

TEST_CASE("tracking_resource_adaptor: copies share the map; upstream is reported", "[tracking]") {
  host_backed_resource upstream;
  tracking_resource_adaptor mr{upstream};
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  tracking_resource_adaptor copy = mr;
  CHECK(copy == mr);
  CHECK(tracking_resource_adaptor{upstream} != mr);
  void* p = copy.allocate(stream, 10, align);
  CHECK(mr.get_outstanding_allocations().count(p) == 1);
  mr.deallocate(stream, p, 10, align);
  CHECK(copy.get_outstanding_allocations().empty());
}

TEST_CASE("tracking_resource_adaptor: many threads", "[tracking]") {
  // Without stacks: the readers below format the whole map each time, and resolving thousands
  // of stacks' symbols would take seconds.
  tracking_resource_adaptor mr{host_backed_resource{}};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 500;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::pair<void*, std::size_t>>> kept(num_threads);
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      auto& mine = kept[static_cast<std::size_t>(t)];
      for (int i = 0; i < per_thread; ++i) {
        auto const bytes = static_cast<std::size_t>(1 + (t * per_thread + i) % 1000);
        void* p          = mr.allocate(stream, bytes, align);
        if (i % 2 == 0) {
          mr.deallocate(stream, p, bytes, align);
        } else {
          mine.emplace_back(p, bytes);  // kept outstanding
        }
        if (i % 50 == 0) {
          static_cast<void>(mr.get_outstanding_allocations_str());  // readers alongside
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::size_t expected_bytes{0};
  std::size_t expected_count{0};
  for (auto const& mine : kept) {
    for (auto const& [p, bytes] : mine) {
      expected_bytes += bytes;
      ++expected_count;
      REQUIRE(mr.get_outstanding_allocations().at(p).allocation_size == bytes);
    }
  }
  CHECK(mr.get_outstanding_allocations().size() == expected_count);
  CHECK(mr.get_allocated_bytes() == expected_bytes);
  for (auto const& mine : kept) {
    for (auto const& [p, bytes] : mine) {
      mr.deallocate(stream, p, bytes, align);
    }
  }
  CHECK(mr.get_outstanding_allocations().empty());
  CHECK(mr.get_allocated_bytes() == 0);
}
