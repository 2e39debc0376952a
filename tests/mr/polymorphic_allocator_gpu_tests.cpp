#include "../utilities/device_kernels.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

TEST_CASE("std::vector over managed memory", "[gpu][polymorphic_allocator]") {
  rmm::cuda_stream stream;
  rmm::mr::polymorphic_allocator<std::uint8_t> alloc{rmm::mr::managed_memory_resource{}};
  auto adapted = rmm::mr::stream_allocator_adaptor{alloc, stream.view()};
  std::vector<std::uint8_t, decltype(adapted)> bytes(1 << 20, 0, adapted);
  // Written by a kernel, read back on the host: the vector's storage is managed memory.
  rmm::test::fill_pattern(bytes.data(), bytes.size(), 11, stream.value());
  stream.synchronize();
  CHECK(rmm::test::count_pattern_mismatches_host(bytes.data(), bytes.size(), 11) == 0);
  bytes.resize(3 << 20, 7);
  CHECK(bytes.back() == 7);
  CHECK(rmm::test::count_pattern_mismatches(bytes.data(), 1 << 20, 11, stream.value()) == 0);
}

TEST_CASE("default-constructed allocator uses the current device resource",
          "[gpu][polymorphic_allocator]") {
  rmm::mr::polymorphic_allocator<int> alloc;
  CHECK(alloc.get_upstream_resource() == rmm::mr::get_current_device_resource_ref());
  rmm::cuda_stream stream;
  int* ptr = alloc.allocate(1000, stream);
  RMM_CUDA_TRY(cudaMemsetAsync(ptr, 0, 1000 * sizeof(int), stream.value()));
  alloc.deallocate(ptr, 1000, stream);
  stream.synchronize();
}
