// The device-bound resources of the multi-GPU suite, each made for the device current when its
// factory runs: every suballocator and every resource that keeps per-device state.
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/block_memory_pool_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace rmm::test::mgpu {

using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

inline constexpr std::size_t MiB = std::size_t{1} << 20;

/// A resource's name (as its messages spell it), the largest request it serves, its factory.
struct named_factory {
  std::string name;
  std::size_t max_bytes;
  std::function<any_device_resource()> make;
};

/// Every device-bound resource, made for the current device.
inline std::vector<named_factory> device_resources() {
  using namespace rmm::mr;
  return {
      {"pool_memory_resource",
       64 * MiB,
       [] {
         return any_device_resource{pool_memory_resource{cuda_memory_resource{}, 0}};
       }},
      {"arena_memory_resource",
       16 * MiB,
       [] {
         return any_device_resource{arena_memory_resource{cuda_memory_resource{}, 256 * MiB}};
       }},
      {"binning_memory_resource",
       64 * MiB,
       [] {
         return any_device_resource{binning_memory_resource{
             pool_memory_resource{cuda_memory_resource{}, 0}, std::int8_t{10}, std::int8_t{20}}};
       }},
      {"fixed_size_memory_resource",
       1 * MiB,
       [] {
         return any_device_resource{
             fixed_size_memory_resource{cuda_memory_resource{}, 1 * MiB, 64}};
       }},
      {"cuda_async_memory_resource",
       64 * MiB,
       [] { return any_device_resource{cuda_async_memory_resource{}}; }},
      {"virtual_memory_resource",
       64 * MiB,
       [] {
         return any_device_resource{
             virtual_memory_resource{rmm::get_current_cuda_device(), 64 * MiB}};
       }},
      {"block_memory_pool_resource",
       1 * MiB,
       [] {
         return any_device_resource{block_memory_pool_resource{storage_type::device, 1 * MiB, 256}};
       }},
  };
}

/// The factory named @p name (empty function if none).
inline named_factory find_resource(std::string const& name) {
  for (auto& f : device_resources()) {
    if (f.name == name) {
      return f;
    }
  }
  return {};
}

}  // namespace rmm::test::mgpu
