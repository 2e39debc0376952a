// rmm/detail/runtime_capabilities.hpp on any machine: every query compiles under RMM's names,
// is noexcept, and agrees with CUDA asked directly; where there is no GPU the device queries
// answer false instead of throwing.
#include <rmm/cuda_device.hpp>
#include <rmm/detail/runtime_capabilities.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

namespace {

using namespace rmm::detail;

/// cudaDeviceGetAttribute(attr, device) == 1, false if it fails.
bool attribute_is_one(cudaDeviceAttr attr, int device) {
  int value{0};
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return false;
  }
  return value == 1;
}

}  // namespace

TEST_CASE("runtime_capabilities: RMM's names and macros exist and never throw",
          "[runtime_capabilities]") {
  STATIC_REQUIRE(RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION == 12080);
  STATIC_REQUIRE(RMM_MIN_ASYNC_MANAGED_ALLOC_CUDA_VERSION == 13000);
  STATIC_REQUIRE(noexcept(runtime_async_alloc::is_supported()));
  STATIC_REQUIRE(noexcept(export_handle_type::is_supported(cudaMemHandleTypeNone)));
  STATIC_REQUIRE(noexcept(hwdecompress::is_supported()));
  STATIC_REQUIRE(noexcept(concurrent_managed_access::is_supported()));
  STATIC_REQUIRE(noexcept(runtime_async_managed_alloc::is_supported()));
  STATIC_REQUIRE(noexcept(device_integrated_memory::is_supported()));
  // Calls written as code for RMM writes them (static members of the structs).
  bool const answers[] = {
      rmm::detail::runtime_async_alloc::is_supported(),
      rmm::detail::export_handle_type::is_supported(cudaMemHandleTypePosixFileDescriptor),
      rmm::detail::hwdecompress::is_supported(),
      rmm::detail::concurrent_managed_access::is_supported(),
      rmm::detail::runtime_async_managed_alloc::is_supported(),
      rmm::detail::device_integrated_memory::is_supported()};
  static_cast<void>(answers);
  if (rmm::get_num_cuda_devices() > 0) {
    // Failed queries leave no error behind (without a driver the runtime's error is sticky).
    CHECK(cudaGetLastError() == cudaSuccess);
  }
}

TEST_CASE("runtime_capabilities: no handle type is always supported", "[runtime_capabilities]") {
  CHECK(export_handle_type::is_supported(cudaMemHandleTypeNone));
  CHECK(export_handle_type::is_supported(cudaMemHandleTypeNone, rmm::cuda_device_id{0}));
}

TEST_CASE("runtime_capabilities: hwdecompress follows the driver version",
          "[runtime_capabilities]") {
  int driver{0};
  if (cudaDriverGetVersion(&driver) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    driver = 0;
  }
  CHECK(hwdecompress::is_supported() == (driver >= RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION));
  CHECK(hwdecompress::is_supported() == hwdecompress::is_supported());  // cached, stable
}

TEST_CASE("runtime_capabilities: without a device every device query answers false",
          "[runtime_capabilities]") {
  if (rmm::get_num_cuda_devices() > 0) {
    SUCCEED("a device is present: runtime_capabilities_gpu_tests.cpp checks the answers");
    return;
  }
  CHECK_FALSE(runtime_async_alloc::is_supported());
  CHECK_FALSE(runtime_async_alloc::is_supported(rmm::cuda_device_id{0}));
  CHECK_FALSE(export_handle_type::is_supported(cudaMemHandleTypePosixFileDescriptor));
  CHECK_FALSE(export_handle_type::is_supported(cudaMemHandleTypeFabric, rmm::cuda_device_id{0}));
  CHECK_FALSE(concurrent_managed_access::is_supported());
  CHECK_FALSE(runtime_async_managed_alloc::is_supported());
  CHECK_FALSE(device_integrated_memory::is_supported());
  CHECK_FALSE(device_integrated_memory::is_supported(rmm::cuda_device_id{-1}));
  // A failed query is not cached: asking again asks CUDA again, and still says false.
  CHECK_FALSE(runtime_async_alloc::is_supported());
}

TEST_CASE("runtime_capabilities: with a device the answers are CUDA's", "[runtime_capabilities]") {
  if (rmm::get_num_cuda_devices() == 0) {
    SUCCEED("no device here: the answers are checked where there is one");
    return;
  }
  int const device = rmm::get_current_cuda_device().value();
  CHECK(runtime_async_alloc::is_supported() ==
        attribute_is_one(cudaDevAttrMemoryPoolsSupported, device));
  CHECK(concurrent_managed_access::is_supported() ==
        attribute_is_one(cudaDevAttrConcurrentManagedAccess, device));
  CHECK(device_integrated_memory::is_supported() ==
        attribute_is_one(cudaDevAttrIntegrated, device));
}
