#include "device_kernels.hpp"

#include <rmm/error.hpp>

namespace rmm::test {
namespace {

__device__ std::uint64_t globaltimer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void fill_kernel(std::uint8_t* data, std::size_t bytes, std::uint32_t seed) {
  auto const stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (auto i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += stride) {
    data[i] = pattern_byte(seed, i);
  }
}

__global__ void check_kernel(std::uint8_t const* data,
                             std::size_t bytes,
                             std::uint32_t seed,
                             unsigned long long* mismatches) {
  auto const stride       = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  unsigned long long mine = 0;
  for (auto i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += stride) {
    if (data[i] != pattern_byte(seed, i)) {
      ++mine;
    }
  }
  if (mine != 0) {
    atomicAdd(mismatches, mine);
  }
}

__global__ void delayed_fill_kernel(std::uint8_t* data,
                                    std::size_t bytes,
                                    std::uint32_t seed,
                                    std::uint64_t spin_ns) {
  if (threadIdx.x == 0) {
    auto const start = globaltimer_ns();
    while (globaltimer_ns() - start < spin_ns) {
    }
  }
  __syncthreads();
  auto const stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (auto i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += stride) {
    data[i] = pattern_byte(seed, i);
  }
}

unsigned int grid_for(std::size_t bytes) {
  constexpr std::size_t threads = 256;
  auto const blocks             = (bytes + threads - 1) / threads;
  return static_cast<unsigned int>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}

}  // namespace

void fill_pattern(void* ptr, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  if (bytes == 0) {
    return;
  }
  fill_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<std::uint8_t*>(ptr), bytes, seed);
  RMM_CUDA_TRY(cudaGetLastError());
}

void fill_pattern_after_delay(
    void* ptr, std::size_t bytes, std::uint32_t seed, std::uint64_t spin_ns, cudaStream_t stream) {
  if (bytes == 0) {
    return;
  }
  delayed_fill_kernel<<<grid_for(bytes), 256, 0, stream>>>(
      static_cast<std::uint8_t*>(ptr), bytes, seed, spin_ns);
  RMM_CUDA_TRY(cudaGetLastError());
}

std::size_t count_pattern_mismatches(void const* ptr,
                                     std::size_t bytes,
                                     std::uint32_t seed,
                                     cudaStream_t stream) {
  if (bytes == 0) {
    return 0;
  }
  unsigned long long* counter{nullptr};
  RMM_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&counter), sizeof(*counter), stream));
  RMM_CUDA_TRY(cudaMemsetAsync(counter, 0, sizeof(*counter), stream));
  check_kernel<<<grid_for(bytes), 256, 0, stream>>>(
      static_cast<std::uint8_t const*>(ptr), bytes, seed, counter);
  RMM_CUDA_TRY(cudaGetLastError());
  unsigned long long result{0};
  RMM_CUDA_TRY(cudaMemcpyAsync(&result, counter, sizeof(result), cudaMemcpyDeviceToHost, stream));
  RMM_CUDA_TRY(cudaFreeAsync(counter, stream));
  RMM_CUDA_TRY(cudaStreamSynchronize(stream));
  return static_cast<std::size_t>(result);
}

std::size_t count_pattern_mismatches_host(void const* ptr, std::size_t bytes, std::uint32_t seed) {
  auto const* data  = static_cast<std::uint8_t const*>(ptr);
  std::size_t count = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    if (data[i] != pattern_byte(seed, i)) {
      ++count;
    }
  }
  return count;
}

void fill_pattern_host(void* ptr, std::size_t bytes, std::uint32_t seed) {
  auto* data = static_cast<std::uint8_t*>(ptr);
  for (std::size_t i = 0; i < bytes; ++i) {
    data[i] = pattern_byte(seed, i);
  }
}

}  // namespace rmm::test
