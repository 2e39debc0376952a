// sam_headroom_memory_resource: refusal without pageable memory access; where the device has it
// (HMM or ATS), the preferred location follows the headroom, data is readable on host and
// device, copies share the state. The headroom arithmetic itself is tested on the host
// (sdk_allocators_host_tests.cpp).
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::sam_headroom_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20U;

// True (after a warning saying why) where the device cannot access pageable memory.
bool skip_without_sam() {
  if (rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device())) {
    return false;
  }
  WARN(
      "SKIPPED sam_headroom_memory_resource test: device reports no pageable memory access "
      "(no HMM or ATS)");
  return true;
}

// cudaMemRangeAttributePreferredLocation of the range: a device id, or cudaCpuDeviceId.
int preferred_location(void const* ptr, std::size_t bytes) {
  int location{-2};
  RMM_CUDA_TRY(cudaMemRangeGetAttribute(
      &location, sizeof(location), cudaMemRangeAttributePreferredLocation, ptr, bytes));
  return location;
}

}  // namespace

TEST_CASE("sam_headroom: refused without pageable memory access", "[gpu][sam_headroom]") {
  auto const device = rmm::get_current_cuda_device();
  if (rmm::mr::detail::is_system_memory_supported(device)) {
    WARN("device supports system allocated memory: the refusal path is not exercised here");
    return;
  }
  CHECK_THROWS_AS(sam_headroom_memory_resource{MiB}, rmm::logic_error);
  CHECK_THROWS_WITH(sam_headroom_memory_resource{MiB},
                    Contains("device " + std::to_string(device.value())) && Contains("HMM or ATS"));
}

TEST_CASE("sam_headroom: small headroom prefers the GPU", "[gpu][sam_headroom]") {
  if (skip_without_sam()) {
    return;
  }
  sam_headroom_memory_resource mr{0};
  CHECK(mr.headroom() == 0);
  CHECK(mr.device() == rmm::get_current_cuda_device());
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, 4 * MiB, 256);
  REQUIRE(ptr != nullptr);
  CHECK(rmm::is_pointer_aligned(ptr, 4096));
  CHECK(preferred_location(ptr, 4 * MiB) == mr.device().value());
  rmm::test::fill_pattern(ptr, 4 * MiB, 1, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 4 * MiB, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches_host(ptr, 4 * MiB, 1) == 0);
  mr.deallocate(stream, ptr, 4 * MiB, 256);
}

TEST_CASE("sam_headroom: headroom above the free memory keeps the allocation on the host",
          "[gpu][sam_headroom]") {
  if (skip_without_sam()) {
    return;
  }
  sam_headroom_memory_resource mr{std::numeric_limits<std::size_t>::max()};
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, 4 * MiB, 256);
  CHECK(preferred_location(ptr, 4 * MiB) == cudaCpuDeviceId);
  // Still device accessible.
  rmm::test::fill_pattern(ptr, 4 * MiB, 2, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 4 * MiB, 2, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches_host(ptr, 4 * MiB, 2) == 0);
  mr.deallocate(stream, ptr, 4 * MiB, 256);
}

TEST_CASE("sam_headroom: copies, sizes and alignment", "[gpu][sam_headroom]") {
  if (skip_without_sam()) {
    return;
  }
  sam_headroom_memory_resource mr{64 * MiB};
  sam_headroom_memory_resource other{64 * MiB};
  auto copy = mr;
  CHECK(copy == mr);
  CHECK(other != mr);
  CHECK(copy.headroom() == 64 * MiB);
  rmm::host_device_async_resource_ref ref{mr};
  void* p = ref.allocate_sync(1000, 256);
  copy.deallocate_sync(p, 1000, 256);  // freed through a copy
  rmm::cuda_stream stream;
  CHECK(mr.allocate(stream, 0, 256) == nullptr);
  mr.deallocate(stream, nullptr, 0, 256);
  CHECK_THROWS_WITH(mr.allocate(stream, 100, 3),
                    Contains("sam_headroom_memory_resource: alignment 3 is not a power of two"));
  CHECK_THROWS_WITH(mr.allocate(stream, 100, 8192), Contains("alignment 8192 exceeds"));
}
