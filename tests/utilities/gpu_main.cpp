// Test runner for suites that need a GPU: where there is none it says so and exits with 77,
// which CTest reports as "Skipped" (SKIP_RETURN_CODE).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

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
  return Catch::Session().run(argc, argv);
}
