// rmm/detail/runtime_capabilities.hpp on a GPU: every answer agrees with CUDA asked directly, on
// every device (answers are cached per device), and on an H100 the answers are the known ones.
#include <rmm/cuda_device.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace {

using namespace rmm::detail;

int attribute(cudaDeviceAttr attr, int device) {
  int value{0};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

int driver_version() {
  int version{0};
  RMM_CUDA_TRY(cudaDriverGetVersion(&version));
  return version;
}

int runtime_version() {
  int version{0};
  RMM_CUDA_TRY(cudaRuntimeGetVersion(&version));
  return version;
}

std::string device_name(int device) {
  cudaDeviceProp props{};
  RMM_CUDA_TRY(cudaGetDeviceProperties(&props, device));
  return props.name;
}

}  // namespace

TEST_CASE("runtime_capabilities: every device's answers are CUDA's, before and after caching",
          "[gpu][runtime_capabilities]") {
  for (int device = 0; device < rmm::get_num_cuda_devices(); ++device) {
    rmm::cuda_set_device_raii const on{rmm::cuda_device_id{device}};
    rmm::cuda_device_id const id{device};
    bool const pools         = attribute(cudaDevAttrMemoryPoolsSupported, device) == 1;
    bool const managed       = attribute(cudaDevAttrConcurrentManagedAccess, device) == 1;
    bool const integrated    = attribute(cudaDevAttrIntegrated, device) == 1;
    int const handles        = attribute(cudaDevAttrMemoryPoolSupportedHandleTypes, device);
    bool const managed_pools = managed && driver_version() >= 13000 && runtime_version() >= 13000;
    for (int round = 0; round < 2; ++round) {  // the first call fills the cache, the second reads
      CAPTURE(device, round);
      CHECK(runtime_async_alloc::is_supported() == pools);
      CHECK(runtime_async_alloc::is_supported(id) == pools);
      CHECK(concurrent_managed_access::is_supported() == managed);
      CHECK(concurrent_managed_access::is_supported(id) == managed);
      CHECK(device_integrated_memory::is_supported() == integrated);
      CHECK(device_integrated_memory::is_supported(id) == integrated);
      CHECK(runtime_async_managed_alloc::is_supported() == managed_pools);
      CHECK(runtime_async_managed_alloc::is_supported(id) == managed_pools);
      for (auto type : {cudaMemHandleTypePosixFileDescriptor,
                        cudaMemHandleTypeWin32,
                        cudaMemHandleTypeWin32Kmt,
                        cudaMemHandleTypeFabric}) {
        CAPTURE(static_cast<int>(type));
        bool const expected = (handles & static_cast<int>(type)) == static_cast<int>(type);
        CHECK(export_handle_type::is_supported(type) == expected);
        CHECK(export_handle_type::is_supported(type, id) == expected);
      }
    }
  }
  CHECK(hwdecompress::is_supported() == (driver_version() >= 12080));
}

TEST_CASE("runtime_capabilities: an H100's answers", "[gpu][runtime_capabilities]") {
  int const device       = rmm::get_current_cuda_device().value();
  std::string const name = device_name(device);
  if (name.find("H100") == std::string::npos) {
    SUCCEED("device " << device << " is a " << name << ", not an H100: nothing to compare");
    return;
  }
  CHECK(runtime_async_alloc::is_supported());
  CHECK(concurrent_managed_access::is_supported());  // Linux, Hopper
  CHECK_FALSE(device_integrated_memory::is_supported());
  CHECK(export_handle_type::is_supported(cudaMemHandleTypeNone));
  CHECK(export_handle_type::is_supported(cudaMemHandleTypePosixFileDescriptor));
  CHECK_FALSE(export_handle_type::is_supported(cudaMemHandleTypeWin32));
  CHECK_FALSE(export_handle_type::is_supported(cudaMemHandleTypeWin32Kmt));
  // The suites are built with CUDA 13, so a driver that runs them is 13.0 or later.
  CHECK(hwdecompress::is_supported());
  CHECK(runtime_async_managed_alloc::is_supported());
}
