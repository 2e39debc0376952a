// prefetch_resource_adaptor on a GPU: managed allocations are prefetched to the current device
// (the driver's last-prefetch location of the range says so) and are usable from kernels and the
// host; blocks of a managed pool are prefetched one by one; over memory that cannot be
// prefetched (cudaMalloc, pinned host, a driver pool) allocation works and leaves no CUDA error.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

namespace {

using rmm::mr::prefetch_resource_adaptor;
using rmm::test::verifying_resource;

constexpr std::size_t MiB = std::size_t{1} << 20U;

// The device the driver last prefetched [ptr, ptr + bytes) to (cudaInvalidDeviceId if the range
// has no single last location).
int last_prefetch_location(void const* ptr, std::size_t bytes) {
  int location = cudaInvalidDeviceId;
  RMM_CUDA_TRY(cudaMemRangeGetAttribute(
      &location, sizeof(location), cudaMemRangeAttributeLastPrefetchLocation, ptr, bytes));
  return location;
}

bool device_can_prefetch() {
  int concurrent = 0;
  RMM_CUDA_TRY(cudaDeviceGetAttribute(
      &concurrent, cudaDevAttrConcurrentManagedAccess, rmm::get_current_cuda_device().value()));
  return concurrent != 0;
}

}  // namespace

TEST_CASE("prefetch_resource_adaptor: managed allocations are prefetched to the current device",
          "[gpu][prefetch_resource_adaptor]") {
  verifying_resource verifying{rmm::mr::managed_memory_resource{}};
  prefetch_resource_adaptor mr{verifying};
  rmm::cuda_stream stream;
  int const device = rmm::get_current_cuda_device().value();
  bool const can   = device_can_prefetch();
  if (!can) {
    WARN("no concurrent managed access: prefetches are no-ops, only usability is checked");
  }
  std::uint32_t seed = 0;
  for (std::size_t bytes : {std::size_t{1}, 4096 + std::size_t{1}, 3 * MiB, 64 * MiB}) {
    INFO(bytes << " bytes");
    for (bool sync : {false, true}) {
      void* ptr = sync ? mr.allocate_sync(bytes, 256) : mr.allocate(stream, bytes, 256);
      REQUIRE(ptr != nullptr);
      RMM_CUDA_TRY(cudaDeviceSynchronize());  // the prefetch has completed
      if (can) {
        CHECK(last_prefetch_location(ptr, bytes) == device);
      }
      rmm::test::fill_pattern(ptr, bytes, ++seed, stream.value());
      CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value()) == 0);
      CHECK(rmm::test::count_pattern_mismatches_host(ptr, bytes, seed) == 0);
      if (sync) {
        mr.deallocate_sync(ptr, bytes, 256);
      } else {
        mr.deallocate(stream, ptr, bytes, 256);
      }
    }
  }
  stream.synchronize();
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("prefetch_resource_adaptor: blocks of a managed pool are prefetched one by one",
          "[gpu][prefetch_resource_adaptor]") {
  if (!device_can_prefetch()) {
    WARN("SKIPPED: no concurrent managed access, prefetches are no-ops");
    return;
  }
  rmm::mr::pool_memory_resource pool{rmm::mr::managed_memory_resource{}, 64 * MiB};
  prefetch_resource_adaptor mr{pool};
  rmm::cuda_stream stream;
  void* first  = mr.allocate(stream, 8 * MiB, 256);
  void* second = mr.allocate(stream, 8 * MiB, 256);
  stream.synchronize();
  int const device = rmm::get_current_cuda_device().value();
  CHECK(last_prefetch_location(first, 8 * MiB) == device);
  CHECK(last_prefetch_location(second, 8 * MiB) == device);
  // Moved to the host, the block goes back to the device when allocated again.
  cudaMemLocation host{};
  host.type = cudaMemLocationTypeHost;
  RMM_CUDA_TRY(cudaMemPrefetchAsync(first, 8 * MiB, host, 0U, stream.value()));
  stream.synchronize();
  CHECK(last_prefetch_location(first, 8 * MiB) == cudaCpuDeviceId);
  mr.deallocate(stream, first, 8 * MiB, 256);
  void* again = mr.allocate(stream, 8 * MiB, 256);
  stream.synchronize();
  CHECK(last_prefetch_location(again, 8 * MiB) == device);
  mr.deallocate(stream, again, 8 * MiB, 256);
  mr.deallocate(stream, second, 8 * MiB, 256);
  stream.synchronize();
}

TEMPLATE_TEST_CASE(
    "prefetch_resource_adaptor: memory that cannot be prefetched is returned as it "
    "is",
    "[gpu][prefetch_resource_adaptor]",
    rmm::mr::cuda_memory_resource,
    rmm::mr::pinned_host_memory_resource,
    rmm::mr::cuda_async_memory_resource) {
  prefetch_resource_adaptor mr{TestType{}};
  rmm::cuda_stream stream;
  REQUIRE(cudaGetLastError() == cudaSuccess);
  for (bool sync : {false, true}) {
    void* ptr = sync ? mr.allocate_sync(4 * MiB, 256) : mr.allocate(stream, 4 * MiB, 256);
    REQUIRE(ptr != nullptr);
    CHECK(cudaGetLastError() == cudaSuccess);  // the refused prefetch left no error behind
    rmm::test::fill_pattern(ptr, 4 * MiB, 3, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(ptr, 4 * MiB, 3, stream.value()) == 0);
    if (sync) {
      mr.deallocate_sync(ptr, 4 * MiB, 256);
    } else {
      mr.deallocate(stream, ptr, 4 * MiB, 256);
    }
  }
  stream.synchronize();
  CHECK(cudaGetLastError() == cudaSuccess);
}
