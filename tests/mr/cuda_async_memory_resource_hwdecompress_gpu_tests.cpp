// cuda_async_memory_resource asks for hardware-decompression usage of its pool when the driver
// supports it (rmm::detail::hwdecompress, CUDA 12.8+), as RMM does: the pool is created, its
// memory works, and where the device has a decompression engine the memory is capable of it.
#include "../utilities/device_kernels.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>

#include <catch2/catch.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

namespace {

using rmm::mr::cuda_async_memory_resource;
using impl = rmm::mr::detail::cuda_async_memory_resource_impl;

/// A driver function by name (the suites link only the runtime), or nullptr.
template <typename F>
F driver_function(char const* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &address, 12080, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    static_cast<void>(cudaGetLastError());
    return nullptr;
  }
  return reinterpret_cast<F>(address);
}

/// CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK of @p device, if the driver answers.
std::optional<int> decompress_algorithms(int device) {
  auto get = driver_function<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
  int value{0};
  if (get == nullptr ||
      get(&value, CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, device) != CUDA_SUCCESS) {
    return std::nullopt;
  }
  return value;
}

/// CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE of @p ptr, if the driver answers.
std::optional<bool> hw_decompress_capable(void* ptr) {
  auto get = driver_function<decltype(&cuPointerGetAttribute)>("cuPointerGetAttribute");
  int value{0};
  if (get == nullptr || get(&value,
                            CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE,
                            reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return std::nullopt;
  }
  return value != 0;
}

}  // namespace

TEST_CASE("cuda_async: the pool asks for hw-decompress usage when the driver supports it",
          "[gpu][cuda_async][hwdecompress]") {
  cuda_async_memory_resource mr;
  REQUIRE(mr.pool_handle() != nullptr);
  bool const usage = rmm::mr::detail::shared_state<impl>(mr).hw_decompress_usage();
  // RMM sets the flag whenever the driver is 12.8 or later; the driver accepts it on every
  // device (a refusal would make this resource fall back to a pool without it).
  CHECK(usage == rmm::detail::hwdecompress::is_supported());

  rmm::cuda_stream stream;
  constexpr std::size_t bytes = std::size_t{4} << 20;
  void* ptr                   = mr.allocate(stream, bytes, 256);
  REQUIRE(ptr != nullptr);
  rmm::test::fill_pattern(ptr, bytes, 7, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, 7, stream.value()) == 0);

  int const device                  = rmm::get_current_cuda_device().value();
  std::optional<int> const engines  = decompress_algorithms(device);
  std::optional<bool> const capable = hw_decompress_capable(ptr);
  INFO("decompression algorithms mask: " << (engines ? *engines : -1) << ", pointer capable: "
                                         << (capable ? static_cast<int>(*capable) : -1));
  if (usage && engines.value_or(0) != 0 && capable.has_value()) {
    CHECK(*capable);  // a device with the engine: the pool's memory can feed it
  }
  mr.deallocate(stream, ptr, bytes, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async: copies share the pool and its usage", "[gpu][cuda_async][hwdecompress]") {
  cuda_async_memory_resource a{std::size_t{2} << 20};  // primed: the flag does not stop priming
  cuda_async_memory_resource const b = a;
  CHECK(a == b);
  CHECK(rmm::mr::detail::shared_state<impl>(b).hw_decompress_usage() ==
        rmm::mr::detail::shared_state<impl>(a).hw_decompress_usage());
  CHECK(a.reserved_bytes() >= (std::size_t{2} << 20));
  void* ptr = a.allocate_sync(1024, 256);
  CHECK(ptr != nullptr);
  a.deallocate_sync(ptr, 1024, 256);
}
