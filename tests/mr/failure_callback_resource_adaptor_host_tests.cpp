// failure_callback_resource_adaptor without a GPU, over host-backed upstreams that fail on
// purpose (policy_adaptor_test_resources.hpp): the callback sees the failing size and its
// argument, true retries (and a callback that frees memory turns a failure into a success), false
// rethrows the upstream's exception unchanged, only the adaptor's exception type (and types
// derived from it) reach the callback, both allocation forms, copies, many threads.
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/failure_callback_t.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::failure_callback_resource_adaptor;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;
using rmm::test::policy_adaptor_fakes::capacity_resource;
using rmm::test::policy_adaptor_fakes::failing_resource;

constexpr std::size_t KiB = 1024;

cuda::stream_ref host_stream() { return cuda::stream_ref{cudaStream_t{}}; }

// What a callback saw: the sizes it was called with and the argument, and what it answers.
struct callback_log {
  std::mutex mtx;
  std::vector<std::size_t> sizes;
  std::vector<void*> args;
  bool answer{true};
};

bool logging_callback(std::size_t bytes, void* arg) {
  auto& log = *static_cast<callback_log*>(arg);
  std::lock_guard<std::mutex> lock(log.mtx);
  log.sizes.push_back(bytes);
  log.args.push_back(arg);
  return log.answer;
}

}  // namespace

TEST_CASE("failure_callback_resource_adaptor: types", "[failure_callback_resource_adaptor]") {
  STATIC_REQUIRE(
      std::is_same_v<failure_callback_resource_adaptor<>::exception_type, rmm::out_of_memory>);
  STATIC_REQUIRE(std::is_same_v<failure_callback_resource_adaptor<std::bad_alloc>::exception_type,
                                std::bad_alloc>);
  STATIC_REQUIRE(
      std::is_same_v<rmm::mr::failure_callback_t, std::function<bool(std::size_t, void*)>>);
  using adaptor = failure_callback_resource_adaptor<>;
  STATIC_REQUIRE(cuda::mr::resource_with<adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(cuda::mr::synchronous_resource_with<adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(!cuda::has_property<adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<adaptor>);
  STATIC_REQUIRE(std::is_copy_assignable_v<adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<adaptor>);
  STATIC_REQUIRE(!std::is_default_constructible_v<adaptor>);
  STATIC_REQUIRE(cuda::mr::resource_with<failure_callback_resource_adaptor<rmm::bad_alloc>,
                                         cuda::mr::device_accessible>);
}

TEST_CASE(
    "failure_callback_resource_adaptor: the callback gets the failing size and its argument; "
    "true retries until the upstream succeeds",
    "[failure_callback_resource_adaptor]") {
  failing_resource<> upstream{host_backed_resource{}, 2};
  callback_log log;
  failure_callback_resource_adaptor<> mr{upstream, logging_callback, &log};

  SECTION("stream-ordered") {
    void* ptr = mr.allocate(host_stream(), 1000, 256);
    REQUIRE(ptr != nullptr);
    CHECK(rmm::is_pointer_aligned(ptr, 256));
    mr.deallocate(host_stream(), ptr, 1000, 256);
  }
  SECTION("synchronous") {
    void* ptr = mr.allocate_sync(1000, 256);
    REQUIRE(ptr != nullptr);
    mr.deallocate_sync(ptr, 1000, 256);
  }
  CHECK(log.sizes == std::vector<std::size_t>{1000, 1000});
  CHECK(log.args == std::vector<void*>{&log, &log});
  CHECK(upstream.requests() == std::vector<std::size_t>{1000, 1000, 1000});
}

TEST_CASE("failure_callback_resource_adaptor: no failure, no callback",
          "[failure_callback_resource_adaptor]") {
  failing_resource<> upstream{host_backed_resource{}, 0};
  callback_log log;
  failure_callback_resource_adaptor<> mr{upstream, logging_callback, &log};
  void* ptr = mr.allocate(host_stream(), 4 * KiB, 256);
  mr.deallocate(host_stream(), ptr, 4 * KiB, 256);
  CHECK(mr.allocate(host_stream(), 0, 256) == nullptr);
  CHECK(log.sizes.empty());
}

TEST_CASE(
    "failure_callback_resource_adaptor: a callback that frees memory turns out-of-memory "
    "into a successful retry",
    "[failure_callback_resource_adaptor]") {
  capacity_resource upstream{host_backed_resource{}, 1024 * KiB};
  struct spill_state {
    failure_callback_resource_adaptor<>* mr{nullptr};
    void* held{nullptr};
    std::size_t held_bytes{0};
    std::vector<std::size_t> failed_sizes;
  } spill;
  auto spill_callback = [](std::size_t bytes, void* arg) {
    auto& s = *static_cast<spill_state*>(arg);
    s.failed_sizes.push_back(bytes);
    if (s.held == nullptr) {
      return false;  // nothing left to free
    }
    s.mr->deallocate(host_stream(), s.held, s.held_bytes, 256);
    s.held = nullptr;
    return true;
  };
  failure_callback_resource_adaptor<> mr{upstream, spill_callback, &spill};
  spill.mr         = &mr;
  spill.held_bytes = 768 * KiB;
  spill.held       = mr.allocate(host_stream(), spill.held_bytes, 256);

  void* ptr = mr.allocate(host_stream(), 512 * KiB, 256);
  REQUIRE(ptr != nullptr);
  CHECK(spill.failed_sizes == std::vector<std::size_t>{512 * KiB});
  CHECK(spill.held == nullptr);
  CHECK(upstream.outstanding() == 512 * KiB);

  // Nothing more to free: the next failure is rethrown after one callback.
  CHECK_THROWS_AS(mr.allocate(host_stream(), 768 * KiB, 256), rmm::out_of_memory);
  CHECK(spill.failed_sizes == std::vector<std::size_t>{512 * KiB, 768 * KiB});
  mr.deallocate(host_stream(), ptr, 512 * KiB, 256);
  CHECK(upstream.outstanding() == 0);
}

TEST_CASE("failure_callback_resource_adaptor: false rethrows the upstream's exception unchanged",
          "[failure_callback_resource_adaptor][expected_api_errors]") {
  failing_resource<> upstream{host_backed_resource{}, 1};
  callback_log log;
  log.answer = false;
  failure_callback_resource_adaptor<> mr{upstream, logging_callback, &log};
  SECTION("stream-ordered") {
    CHECK_THROWS_WITH(mr.allocate(host_stream(), 1000, 256),
                      Contains("out_of_memory") && Contains("deliberate failure of 1000 bytes"));
  }
  SECTION("synchronous") { CHECK_THROWS_AS(mr.allocate_sync(1000, 256), rmm::out_of_memory); }
  CHECK(log.sizes == std::vector<std::size_t>{1000});
  CHECK(upstream.requests().size() == 1);
  // The failure consumed, the next allocation succeeds without the callback.
  void* ptr = mr.allocate(host_stream(), 1000, 256);
  mr.deallocate(host_stream(), ptr, 1000, 256);
  CHECK(log.sizes.size() == 1);
}

TEST_CASE("failure_callback_resource_adaptor: retry once, as in the documentation",
          "[failure_callback_resource_adaptor][expected_api_errors]") {
  failing_resource<> upstream{host_backed_resource{}, 5};
  bool retried{false};
  auto retry_once = [](std::size_t, void* arg) {
    bool& flag = *static_cast<bool*>(arg);
    if (!flag) {
      flag = true;
      return true;
    }
    return false;
  };
  failure_callback_resource_adaptor<> mr{upstream, retry_once, &retried};
  CHECK_THROWS_AS(mr.allocate(host_stream(), 64, 256), rmm::out_of_memory);
  CHECK(retried);
  CHECK(upstream.requests().size() == 2);
}

TEST_CASE(
    "failure_callback_resource_adaptor: only the exception type and types derived from it "
    "reach the callback",
    "[failure_callback_resource_adaptor][expected_api_errors]") {
  callback_log log;
  SECTION("rmm::bad_alloc is not an rmm::out_of_memory: propagates, no callback") {
    failing_resource<rmm::bad_alloc> upstream{host_backed_resource{}, 1};
    failure_callback_resource_adaptor<> mr{upstream, logging_callback, &log};
    CHECK_THROWS_AS(mr.allocate(host_stream(), 64, 256), rmm::bad_alloc);
    CHECK(log.sizes.empty());
  }
  SECTION("rmm::logic_error: propagates, no callback") {
    failing_resource<rmm::logic_error> upstream{host_backed_resource{}, 1};
    failure_callback_resource_adaptor<rmm::bad_alloc> mr{upstream, logging_callback, &log};
    CHECK_THROWS_AS(mr.allocate(host_stream(), 64, 256), rmm::logic_error);
    CHECK(log.sizes.empty());
  }
  SECTION("rmm::out_of_memory reaches a callback for rmm::bad_alloc") {
    failing_resource<rmm::out_of_memory> upstream{host_backed_resource{}, 1};
    failure_callback_resource_adaptor<rmm::bad_alloc> mr{upstream, logging_callback, &log};
    void* ptr = mr.allocate(host_stream(), 64, 256);
    mr.deallocate(host_stream(), ptr, 64, 256);
    CHECK(log.sizes == std::vector<std::size_t>{64});
  }
  SECTION("std::bad_alloc and what derives from it reach a callback for std::bad_alloc") {
    failing_resource<std::bad_alloc> plain{host_backed_resource{}, 1};
    failing_resource<rmm::out_of_memory> derived{plain, 1};
    failure_callback_resource_adaptor<std::bad_alloc> mr{derived, logging_callback, &log};
    void* ptr = mr.allocate(host_stream(), 64, 256);  // out_of_memory, then std::bad_alloc
    mr.deallocate(host_stream(), ptr, 64, 256);
    CHECK(log.sizes == std::vector<std::size_t>{64, 64});
  }
}

TEST_CASE("failure_callback_resource_adaptor: an exception of the callback propagates",
          "[failure_callback_resource_adaptor][expected_api_errors]") {
  failing_resource<> upstream{host_backed_resource{}, 1};
  failure_callback_resource_adaptor<> mr{
      upstream,
      [](std::size_t, void*) -> bool { throw std::runtime_error{"from the callback"}; },
      nullptr};
  CHECK_THROWS_WITH(mr.allocate(host_stream(), 64, 256), "from the callback");
}

TEST_CASE("failure_callback_resource_adaptor: refusals name the adaptor and the value",
          "[failure_callback_resource_adaptor][expected_api_errors]") {
  CHECK_THROWS_AS(failure_callback_resource_adaptor<>(
                      host_backed_resource{}, rmm::mr::failure_callback_t{}, nullptr),
                  rmm::logic_error);
  CHECK_THROWS_WITH(failure_callback_resource_adaptor<>(host_backed_resource{}, nullptr, nullptr),
                    Contains("failure_callback_resource_adaptor") && Contains("callback is empty"));
  callback_log log;
  failure_callback_resource_adaptor<> mr{host_backed_resource{}, logging_callback, &log};
  CHECK_THROWS_WITH(
      mr.allocate(host_stream(), 64, 3),
      Contains("failure_callback_resource_adaptor: alignment 3 is not a power of two"));
  CHECK_THROWS_AS(mr.allocate_sync(64, 0), rmm::logic_error);
  CHECK(log.sizes.empty());
}

TEST_CASE(
    "failure_callback_resource_adaptor: frees go to the upstream unchanged; copies share "
    "the state",
    "[failure_callback_resource_adaptor]") {
  verifying_resource verifying{host_backed_resource{}};
  callback_log log;
  failure_callback_resource_adaptor<> mr{verifying, logging_callback, &log};
  failure_callback_resource_adaptor<> copy{mr};
  failure_callback_resource_adaptor<> other{verifying, logging_callback, &log};
  CHECK(copy == mr);
  CHECK_FALSE(copy != mr);
  CHECK(other != mr);

  void* a = mr.allocate(host_stream(), 1000, 64);
  void* b = copy.allocate_sync(3000, 256);
  CHECK(verifying.live_allocations() == 2);
  copy.deallocate(host_stream(), a, 1000, 64);
  mr.deallocate_sync(b, 3000, 256);
  CHECK(verifying.live_allocations() == 0);
  CHECK(verifying.failures().empty());

  rmm::device_async_resource_ref upstream = mr.get_upstream_resource();
  void* c                                 = upstream.allocate(host_stream(), 128, 256);
  CHECK(verifying.live_allocations() == 1);
  verifying.deallocate(host_stream(), c, 128, 256);
  CHECK(verifying.failures().empty());

  auto moved = std::move(copy);
  CHECK(moved == mr);
  rmm::device_async_resource_ref ref{moved};
  void* d = ref.allocate(host_stream(), 10, 256);
  ref.deallocate(host_stream(), d, 10, 256);
  CHECK(log.sizes.empty());
}

TEST_CASE(
    "failure_callback_resource_adaptor: failures in many threads each call the callback "
    "once",
    "[failure_callback_resource_adaptor]") {
  constexpr int num_threads = 8;
  constexpr int per_thread  = 50;
  constexpr int failures    = 100;
  failing_resource<> upstream{host_backed_resource{}, failures};
  std::atomic<int> calls{0};
  failure_callback_resource_adaptor<> mr{upstream,
                                         [](std::size_t, void* arg) {
                                           ++*static_cast<std::atomic<int>*>(arg);
                                           return true;
                                         },
                                         &calls};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < per_thread; ++i) {
          auto const bytes = static_cast<std::size_t>(1 + t * per_thread + i);
          void* ptr        = mr.allocate(host_stream(), bytes, 256);
          mr.deallocate(host_stream(), ptr, bytes, 256);
        }
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  CHECK(calls == failures);
  CHECK(upstream.requests().size() == std::size_t{num_threads * per_thread + failures});
}
