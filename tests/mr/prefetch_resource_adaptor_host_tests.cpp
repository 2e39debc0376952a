// prefetch_resource_adaptor without a GPU: its types, what needs no CUDA call (size 0, the
// alignment check, frees, copies, the upstream), and that an allocation whose prefetch cannot be
// issued (no device here) gives its memory back before the error propagates. On a GPU machine
// the same allocation succeeds (host memory is not managed: the prefetch is a no-op, or a
// migration where the GPU reaches pageable memory) and is freed normally.
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::prefetch_resource_adaptor;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;

cuda::stream_ref host_stream() { return cuda::stream_ref{cudaStream_t{}}; }

}  // namespace

TEST_CASE("prefetch_resource_adaptor: types", "[prefetch_resource_adaptor]") {
  STATIC_REQUIRE(cuda::mr::resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(
      cuda::mr::synchronous_resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(!cuda::has_property<prefetch_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<prefetch_resource_adaptor>);
  STATIC_REQUIRE(std::is_copy_assignable_v<prefetch_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<prefetch_resource_adaptor>);
  STATIC_REQUIRE(!std::is_convertible_v<rmm::test::any_device_resource, prefetch_resource_adaptor>);
}

TEST_CASE("prefetch_resource_adaptor: size 0 and frees need no prefetch",
          "[prefetch_resource_adaptor]") {
  verifying_resource verifying{host_backed_resource{}};
  prefetch_resource_adaptor mr{verifying};
  CHECK(mr.allocate(host_stream(), 0, 256) == nullptr);
  CHECK(mr.allocate_sync(0, 256) == nullptr);
  mr.deallocate(host_stream(), nullptr, 0, 256);
  mr.deallocate_sync(nullptr, 0, 256);
  // Memory from the upstream is freed through the adaptor unchanged.
  void* ptr = verifying.allocate(host_stream(), 1000, 64);
  mr.deallocate(host_stream(), ptr, 1000, 64);
  ptr = verifying.allocate_sync(2000, 256);
  mr.deallocate_sync(ptr, 2000, 256);
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
}

TEST_CASE("prefetch_resource_adaptor: a bad alignment is refused before the upstream is asked",
          "[prefetch_resource_adaptor][expected_api_errors]") {
  verifying_resource verifying{host_backed_resource{}};
  prefetch_resource_adaptor mr{verifying};
  CHECK_THROWS_WITH(mr.allocate(host_stream(), 64, 3),
                    Contains("prefetch_resource_adaptor: alignment 3 is not a power of two"));
  CHECK_THROWS_AS(mr.allocate_sync(64, 0), rmm::logic_error);
  CHECK(verifying.live_allocations() == 0);
}

TEST_CASE(
    "prefetch_resource_adaptor: a failed prefetch gives the memory back; otherwise the "
    "allocation is the upstream's",
    "[prefetch_resource_adaptor]") {
  verifying_resource verifying{host_backed_resource{}};
  prefetch_resource_adaptor mr{verifying};
  for (bool sync : {false, true}) {
    INFO((sync ? "allocate_sync" : "allocate"));
    void* ptr = nullptr;
    try {
      ptr = sync ? mr.allocate_sync(4096, 256) : mr.allocate(host_stream(), 4096, 256);
    } catch (rmm::cuda_error const&) {
      // No device (or no driver) here: the prefetch could not be issued.
      CHECK(verifying.live_allocations() == 0);
      continue;
    }
    REQUIRE(ptr != nullptr);
    CHECK(verifying.live_allocations() == 1);
    if (sync) {
      mr.deallocate_sync(ptr, 4096, 256);
    } else {
      mr.deallocate(host_stream(), ptr, 4096, 256);
    }
  }
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
}

TEST_CASE("prefetch_resource_adaptor: copies, equality and the upstream",
          "[prefetch_resource_adaptor]") {
  verifying_resource verifying{host_backed_resource{}};
  prefetch_resource_adaptor mr{verifying};
  prefetch_resource_adaptor copy{mr};
  prefetch_resource_adaptor other{verifying};
  CHECK(copy == mr);
  CHECK_FALSE(copy != mr);
  CHECK(other != mr);
  auto moved = std::move(copy);
  CHECK(moved == mr);
  rmm::device_async_resource_ref upstream = moved.get_upstream_resource();
  void* ptr = upstream.allocate(host_stream(), 128, 256);  // straight to the upstream
  CHECK(verifying.live_allocations() == 1);
  mr.deallocate(host_stream(), ptr, 128, 256);
  CHECK(verifying.live_allocations() == 0);
  CHECK(verifying.failures().empty());
}
