// Test runner for suites that need a GPU: where there is none it says so and exits with 77,
// which CTest reports as "Skipped" (SKIP_RETURN_CODE). RMM_TEST_DEVICE=N makes device N current
// on the main thread first (the multi-GPU run uses it for the conformance suite on every device;
// threads a test starts begin on device 0, so only single-threaded suites mean anything there).
#include "catch_session.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
  int count                = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf(
        "SKIPPED: %s needs a CUDA device and found none (cudaGetDeviceCount: %s, %d "
        "devices). Run it on the GPU machine: see docs/gpu-testing.md.\n",
        argv[0],
        status == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(status),
        count);
    return 77;
  }
  if (char const* device = std::getenv("RMM_TEST_DEVICE"); device != nullptr && device[0] != '\0') {
    int const id = std::atoi(device);
    if (id < 0 || id >= count || cudaSetDevice(id) != cudaSuccess) {
      std::printf("RMM_TEST_DEVICE=%s: no such device (%d visible)\n", device, count);
      return 2;
    }
    std::printf("%s: on device %d of %d (RMM_TEST_DEVICE)\n", argv[0], id, count);
  }
  return rmm::test::run_catch_session(argc, argv);
}
