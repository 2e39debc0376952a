// Test runner of the multi-GPU suite: where fewer than two devices are visible it says so and
// exits with 77, which CTest reports as "Skipped" (SKIP_RETURN_CODE).
#include "../utilities/catch_session.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char* argv[]) {
  int count                = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count < 2) {
    std::printf(
        "SKIPPED: %s needs 2 or more CUDA devices and found %d (cudaGetDeviceCount: %s). Run it "
        "on a multi-GPU machine: see docs/multi-gpu.md.\n",
        argv[0],
        status == cudaSuccess ? count : 0,
        status == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(status));
    return 77;
  }
  std::printf("%s: %d CUDA devices\n", argv[0], count);
  return rmm::test::run_catch_session(argc, argv);
}
