// Host-side behaviour of callback_memory_resource: callbacks over host memory, no GPU needed.
#include "../utilities/test_resources.hpp"

#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using Catch::Matchers::Contains;

namespace {
struct call_log {
  int allocations{0};
  int deallocations{0};
  std::size_t last_bytes{0};
  cudaStream_t last_stream{};
};

void* allocate_cb(std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
  auto* log = static_cast<call_log*>(arg);
  log->allocations += 1;
  log->last_bytes  = bytes;
  log->last_stream = stream.value();
  return bytes == 0 ? nullptr : std::aligned_alloc(256, rmm::align_up(bytes, 256));
}

void deallocate_cb(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
  auto* log = static_cast<call_log*>(arg);
  log->deallocations += 1;
  log->last_bytes  = bytes;
  log->last_stream = stream.value();
  std::free(ptr);
}
}  // namespace

TEST_CASE("callback_memory_resource forwards size, stream and argument", "[callback]") {
  call_log alloc_log;
  call_log free_log;
  rmm::mr::callback_memory_resource mr{allocate_cb, deallocate_cb, &alloc_log, &free_log};
  auto const stream = reinterpret_cast<cudaStream_t>(0x42);
  void* ptr         = mr.allocate(cuda::stream_ref{stream}, 1000, 256);
  REQUIRE(ptr != nullptr);
  CHECK(alloc_log.allocations == 1);
  CHECK(alloc_log.last_bytes == 1000);
  CHECK(alloc_log.last_stream == stream);
  mr.deallocate(cuda::stream_ref{stream}, ptr, 1000, 256);
  CHECK(free_log.deallocations == 1);
  CHECK(free_log.last_bytes == 1000);
  CHECK(free_log.last_stream == stream);
  CHECK(alloc_log.deallocations == 0);
}

TEST_CASE("callback_memory_resource copies share state and compare equal", "[callback]") {
  call_log log;
  rmm::mr::callback_memory_resource a{allocate_cb, deallocate_cb, &log, &log};
  rmm::mr::callback_memory_resource b = a;
  rmm::mr::callback_memory_resource c{allocate_cb, deallocate_cb, &log, &log};
  CHECK(a == b);
  CHECK_FALSE(a != b);
  CHECK(a != c);
  cuda::mr::any_resource<cuda::mr::device_accessible> owning{b};
  rmm::device_async_resource_ref ref{owning};
  void* ptr = ref.allocate(cuda::stream_ref{cudaStream_t{}}, 64, 256);
  ref.deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, 64, 256);
  CHECK(log.allocations == 1);
  CHECK(log.deallocations == 1);
  STATIC_REQUIRE(
      cuda::mr::resource_with<rmm::mr::callback_memory_resource, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(
      cuda::has_property<rmm::mr::callback_memory_resource, cuda::mr::host_accessible>);
  STATIC_REQUIRE_FALSE(std::is_default_constructible_v<rmm::mr::callback_memory_resource>);
}

TEST_CASE("callback_memory_resource rejects empty callbacks", "[callback]") {
  CHECK_THROWS_AS(rmm::mr::callback_memory_resource(nullptr, deallocate_cb), rmm::logic_error);
  CHECK_THROWS_WITH(rmm::mr::callback_memory_resource(nullptr, deallocate_cb),
                    Contains("allocate_callback is empty"));
  CHECK_THROWS_WITH(rmm::mr::callback_memory_resource(allocate_cb, nullptr),
                    Contains("deallocate_callback is empty"));
}

TEST_CASE("callback_memory_resource returns what the allocate callback returns", "[callback]") {
  // As in RMM: the resource checks nothing, so a nullptr from the callback reaches the caller,
  // for any size, and so does any other value.
  int calls = 0;
  rmm::mr::callback_memory_resource null_returning{
      [](std::size_t, rmm::cuda_stream_view, void* arg) -> void* {
        ++*static_cast<int*>(arg);
        return nullptr;
      },
      [](void*, std::size_t, rmm::cuda_stream_view, void*) {},
      &calls};
  CHECK(null_returning.allocate(cuda::stream_ref{cudaStream_t{}}, 4096, 256) == nullptr);
  CHECK(null_returning.allocate(cuda::stream_ref{cudaStream_t{}}, 0, 256) == nullptr);
  CHECK(null_returning.allocate(cuda::stream_ref{cudaStream_t{}}, 1, 256) == nullptr);
  CHECK(calls == 3);

  static int marker = 0;
  rmm::mr::callback_memory_resource fixed{
      [](std::size_t, rmm::cuda_stream_view, void*) -> void* { return &marker; },
      [](void*, std::size_t, rmm::cuda_stream_view, void*) {}};
  CHECK(fixed.allocate(cuda::stream_ref{cudaStream_t{}}, 0, 256) == &marker);
  CHECK(fixed.allocate(cuda::stream_ref{cudaStream_t{}}, 1 << 20, 256) == &marker);
}

TEST_CASE("callback_memory_resource propagates what the allocate callback throws", "[callback]") {
  rmm::mr::callback_memory_resource failing{
      [](std::size_t bytes, rmm::cuda_stream_view, void*) -> void* {
        throw rmm::out_of_memory{"test callback: no room for " + std::to_string(bytes) + " bytes"};
      },
      [](void*, std::size_t, rmm::cuda_stream_view, void*) {}};
  CHECK_THROWS_AS(failing.allocate(cuda::stream_ref{cudaStream_t{}}, 4096, 256),
                  rmm::out_of_memory);
  CHECK_THROWS_WITH(failing.allocate(cuda::stream_ref{cudaStream_t{}}, 4096, 256),
                    Contains("no room for 4096 bytes"));
}
