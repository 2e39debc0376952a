// cuda_async_managed_memory_resource: the device's default managed pool, host and device access,
// untouched pool attributes, equality and statistics.
#include "../utilities/device_kernels.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace {

using rmm::mr::cuda_async_managed_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20;

// The resource, or nullopt (with a warning) where the driver has no managed pools.
std::optional<cuda_async_managed_memory_resource> make_or_skip() {
  try {
    return cuda_async_managed_memory_resource{};
  } catch (rmm::logic_error const& e) {
    WARN("SKIPPED: " << e.what());
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("cuda_async_managed: the default managed pool", "[gpu][cuda_async_managed]") {
  auto made = make_or_skip();
  if (!made) {
    return;
  }
  auto& mr = *made;
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id   = rmm::get_current_cuda_device().value();
  cudaMemPool_t expected{};
  RMM_CUDA_TRY(cudaMemGetDefaultMemPool(&expected, &location, cudaMemAllocationTypeManaged));
  CHECK(mr.pool_handle() == expected);
  // Every instance uses the same pool: they compare equal and share the limit.
  cuda_async_managed_memory_resource second;
  CHECK(second == mr);
  mr.set_limit(64 * MiB);
  CHECK(second.get_limit() == 64 * MiB);
  mr.set_limit(0);
}

TEST_CASE("cuda_async_managed: the release threshold is not modified",
          "[gpu][cuda_async_managed]") {
  auto made = make_or_skip();
  if (!made) {
    return;
  }
  cudaMemPool_t const pool   = made->pool_handle();
  std::uint64_t const marker = 12345 * MiB;
  std::uint64_t original{0};
  RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &original));
  std::uint64_t value = marker;
  RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value));
  { cuda_async_managed_memory_resource another; }
  RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value));
  CHECK(value == marker);
  RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &original));
}

TEST_CASE("cuda_async_managed: host and device see the same memory", "[gpu][cuda_async_managed]") {
  auto made = make_or_skip();
  if (!made) {
    return;
  }
  auto& mr = *made;
  STATIC_REQUIRE(cuda::has_property<cuda_async_managed_memory_resource, cuda::mr::host_accessible>);
  rmm::host_device_async_resource_ref ref{mr};
  rmm::cuda_stream stream;
  std::size_t const bytes = 4 * MiB + 3;
  void* ptr               = ref.allocate(stream, bytes, 256);
  // Device writes, host reads.
  rmm::test::fill_pattern(ptr, bytes, 17, stream.value());
  stream.synchronize();
  CHECK(rmm::test::count_pattern_mismatches_host(ptr, bytes, 17) == 0);
  // Host writes, device reads.
  rmm::test::fill_pattern_host(ptr, bytes, 18);
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, 18, stream.value()) == 0);
  stream.synchronize();
  CHECK(mr.used_bytes() >= bytes);
  ref.deallocate(stream, ptr, bytes, 256);
  stream.synchronize();
}
