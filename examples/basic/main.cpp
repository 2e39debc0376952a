// A tour of the library: a device resource as the per-device default, a std::vector over managed
// memory through the allocator adaptors, and what running out of memory looks like.
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <numeric>
#include <vector>

namespace {

int run() {
  auto const [free_bytes, total_bytes] = rmm::available_device_memory();
  std::printf("device %d: %zu of %zu MiB free\n",
              rmm::get_current_cuda_device().value(),
              free_bytes >> 20,
              total_bytes >> 20);

  // 1. The per-device default resource. Setters take ownership and hand back the previous one.
  auto previous = rmm::mr::set_current_device_resource(rmm::mr::cuda_memory_resource{});
  rmm::device_async_resource_ref mr = rmm::mr::get_current_device_resource_ref();
  rmm::cuda_stream stream;
  void* buffer = mr.allocate(stream, 1 << 20, rmm::CUDA_ALLOCATION_ALIGNMENT);
  RMM_CUDA_TRY(cudaMemsetAsync(buffer, 0, 1 << 20, stream.value()));
  mr.deallocate(stream, buffer, 1 << 20, rmm::CUDA_ALLOCATION_ALIGNMENT);
  std::printf("allocated and freed 1 MiB through the current device resource\n");

  // 2. A standard container over managed memory: the stream-ordered allocator adapted to the
  //    standard Allocator interface.
  rmm::mr::polymorphic_allocator<int> managed_alloc{rmm::mr::managed_memory_resource{}};
  auto alloc = rmm::mr::stream_allocator_adaptor{managed_alloc, stream.view()};
  std::vector<int, decltype(alloc)> values(1000, 0, alloc);
  std::iota(values.begin(), values.end(), 1);
  long long const sum = std::accumulate(values.begin(), values.end(), 0LL);
  std::printf("std::vector<int> over managed memory: sum of 1..1000 = %lld\n", sum);

  // 3. Out of memory is a typed exception that says what was asked and what was free, as text
  //    and as data (its report).
  try {
    void* too_much = mr.allocate(stream, total_bytes * 2, rmm::CUDA_ALLOCATION_ALIGNMENT);
    mr.deallocate(stream, too_much, total_bytes * 2, rmm::CUDA_ALLOCATION_ALIGNMENT);
  } catch (rmm::out_of_memory const& e) {
    std::printf("caught rmm::out_of_memory:\n  %s\n", e.what());
    if (rmm::out_of_memory_report const* report = e.report();
        report != nullptr && report->device_free_bytes) {
      std::printf("  %s asked for %zu bytes; device %d had %zu bytes free\n",
                  report->resource.c_str(),
                  report->requested_bytes,
                  report->device.value_or(-1),
                  *report->device_free_bytes);
    }
  }
  stream.synchronize();
  static_cast<void>(rmm::mr::set_current_device_resource(std::move(previous)));
  return sum == 500500 ? 0 : 1;
}

}  // namespace

int main() {
  if (rmm::get_num_cuda_devices() == 0) {
    int count                = 0;
    cudaError_t const status = cudaGetDeviceCount(&count);
    std::printf(
        "rmm demo: no CUDA device is available on this machine (cudaGetDeviceCount: %s).\n"
        "The library built and linked; run this demo on a machine with a GPU to see it "
        "allocate.\n",
        cudaGetErrorString(status));
    return 0;
  }
  try {
    return run();
  } catch (std::exception const& e) {
    std::fprintf(stderr, "rmm demo failed: %s\n", e.what());
    return 1;
  }
}
