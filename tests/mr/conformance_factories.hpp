// The conformance suite's factories (one per resource: how to make it, whether it can run here,
// what it accepts) and its helpers, included by conformance_gpu_tests.cpp only (an anonymous
// namespace, as the adaptor factories' headers it includes).
#pragma once

#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/block_memory_pool_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/device_host_pool_pair.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/mr/stream_ordered_allocator.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/unbounded_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr std::size_t GiB = 1024 * MiB;

// Each factory: make() builds a resource; unavailable() says why it cannot run here (empty when
// it can); host_accessible says whether the host may touch the memory; oom_probe is a request
// that must fail with out_of_memory (nullopt where probing is unsafe).
struct cuda_factory {
  static constexpr char const* name = "cuda_memory_resource";
  static rmm::mr::cuda_memory_resource make() { return {}; }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct managed_factory {
  static constexpr char const* name = "managed_memory_resource";
  static rmm::mr::managed_memory_resource make() { return {}; }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = true;
  // Asking for more managed memory than the card has can hang the GPU: never probe.
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

struct pinned_factory {
  static constexpr char const* name = "pinned_host_memory_resource";
  static rmm::mr::pinned_host_memory_resource make() { return {}; }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = true;
  static std::optional<std::size_t> oom_probe() { return std::size_t{1} << 52; }  // 4 PiB
};

struct system_factory {
  static constexpr char const* name = "system_memory_resource";
  static rmm::mr::system_memory_resource make() { return {}; }
  static std::string unavailable() {
    if (rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device())) {
      return {};
    }
    return "device reports no pageable memory access (no HMM or ATS)";
  }
  static constexpr bool host_accessible = true;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

// A callback resource over cudaMallocAsync/cudaFreeAsync: exercises real stream ordering.
struct callback_factory {
  static constexpr char const* name = "callback_memory_resource";
  static rmm::mr::callback_memory_resource make() {
    return rmm::mr::callback_memory_resource{
        [](std::size_t bytes, rmm::cuda_stream_view stream, void*) -> void* {
          if (bytes == 0) {
            return nullptr;
          }
          void* ptr{nullptr};
          RMM_CUDA_TRY_ALLOC(cudaMallocAsync(&ptr, bytes, stream.value()), bytes);
          return ptr;
        },
        [](void* ptr, std::size_t, rmm::cuda_stream_view stream, void*) {
          if (ptr != nullptr) {
            RMM_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream.value()));
          }
        }};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

// --- the suballocators and their compositions ---
// Unless a factory says otherwise, a resource serves every size of the suite.
template <typename Factory, typename = void>
struct max_request_of {
  static constexpr std::size_t value = ~std::size_t{0};
};
template <typename Factory>
struct max_request_of<Factory, std::void_t<decltype(Factory::max_request)>> {
  static constexpr std::size_t value = Factory::max_request;
};

struct pool_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct pool_over_managed_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::pool_memory_resource{rmm::mr::managed_memory_resource{}, 64 * MiB};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;  // the pool declares device access only
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

struct pool_over_pinned_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::pool_memory_resource{rmm::mr::pinned_host_memory_resource{}, 0, 4 * GiB};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return 8 * GiB; }  // above the maximum
};

// --- virtual memory: the resource itself and the expandable pool over it ---

struct virtual_memory_factory {
  static constexpr char const* name = "virtual_memory_resource";
  static rmm::mr::virtual_memory_resource make() { return rmm::mr::virtual_memory_resource{}; }
  static std::string unavailable() { return rmm::test::vmm_unavailable_reason(); }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct pool_over_virtual_memory_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::pool_memory_resource{rmm::mr::virtual_memory_resource{}, 0};
  }
  static std::string unavailable() { return rmm::test::vmm_unavailable_reason(); }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct fixed_size_factory {
  static constexpr char const* name = "fixed_size_memory_resource";
  static rmm::mr::fixed_size_memory_resource make() {
    return rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, 4 * MiB, 16};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible    = false;
  static constexpr std::size_t max_request = 4 * MiB;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }  // see its own tests
};

struct binning_over_pool_factory {
  static constexpr char const* name = "binning_memory_resource";
  static rmm::mr::binning_memory_resource make() {
    return rmm::mr::binning_memory_resource{
        rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}, 10, 16};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct arena_factory {
  static constexpr char const* name = "arena_memory_resource";
  static rmm::mr::arena_memory_resource make() {
    return rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, 2 * GiB};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return 3 * GiB; }  // above the arena
};

// --- the sensor-streaming SDK's allocators (docs/sdk_allocators.md) ---
std::string unavailable_without_sam() {
  if (rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device())) {
    return {};
  }
  return "device reports no pageable memory access (no HMM or ATS)";
}

struct unbounded_device_factory {
  static constexpr char const* name = "unbounded_memory_resource";
  static rmm::mr::unbounded_memory_resource make() {
    return rmm::mr::unbounded_memory_resource{rmm::mr::storage_type::device};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct unbounded_pinned_factory {
  static constexpr char const* name = "unbounded_memory_resource";
  static rmm::mr::unbounded_memory_resource make() {
    return rmm::mr::unbounded_memory_resource{rmm::mr::storage_type::pinned_host};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;  // declared for no storage: device is not
  static std::optional<std::size_t> oom_probe() { return std::size_t{1} << 52; }  // 4 PiB
};

struct unbounded_system_factory {
  static constexpr char const* name = "unbounded_memory_resource";
  static rmm::mr::unbounded_memory_resource make() {
    return rmm::mr::unbounded_memory_resource{rmm::mr::storage_type::system};
  }
  static std::string unavailable() { return unavailable_without_sam(); }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

// The suite's largest live set is 100 requests of up to 2 MiB (sizes above max_request are
// skipped): 128 blocks of 2 MiB hold it. Exhaustion and too-large requests are tested in
// sdk_allocators_gpu_tests.cpp, so no out-of-memory probe here (its message has no device).
struct block_pool_factory {
  static constexpr char const* name = "block_memory_pool_resource";
  static rmm::mr::block_memory_pool_resource make() {
    return rmm::mr::block_memory_pool_resource{rmm::mr::storage_type::device, 2 * MiB, 128};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible    = false;
  static constexpr std::size_t max_request = 2 * MiB;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

struct block_pool_pinned_factory {
  static constexpr char const* name = "block_memory_pool_resource";
  static rmm::mr::block_memory_pool_resource make() {
    return rmm::mr::block_memory_pool_resource{rmm::mr::storage_type::pinned_host, 2 * MiB, 128};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible    = false;
  static constexpr std::size_t max_request = 2 * MiB;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

rmm::mr::device_host_pool_config pool_pair_config() {
  rmm::mr::device_host_pool_config config;
  config.device_memory_max_size = "2GB";  // the suite allocates up to 1 GiB at once
  config.host_memory_max_size   = "2GB";
  return config;
}

struct pool_pair_device_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::device_host_pool_pair{pool_pair_config()}.device_memory_resource();
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return 4 * GiB; }  // above the maximum
};

struct pool_pair_host_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::device_host_pool_pair{pool_pair_config()}.host_memory_resource();
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return 4 * GiB; }  // above the maximum
};

struct stream_ordered_allocator_factory {
  static constexpr char const* name = "cuda_async_memory_resource";
  static rmm::mr::cuda_async_memory_resource make() {
    rmm::mr::stream_ordered_allocator_config config;
    config.device_memory_max_size = "4GB";
    return rmm::mr::make_stream_ordered_allocator(config);
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return 8 * GiB; }  // above the limit
};

struct sam_headroom_factory {
  static constexpr char const* name = "sam_headroom_memory_resource";
  static rmm::mr::sam_headroom_memory_resource make() {
    return rmm::mr::sam_headroom_memory_resource{GiB};
  }
  static std::string unavailable() { return unavailable_without_sam(); }
  static constexpr bool host_accessible = true;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

// --- the driver-pool resources (cudaMallocFromPoolAsync) ---
struct cuda_async_factory {
  static constexpr char const* name = "cuda_async_memory_resource";
  static rmm::mr::cuda_async_memory_resource make() { return {}; }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

// A view of the device's default pool (the driver's; never destroyed).
struct cuda_async_view_factory {
  static constexpr char const* name = "cuda_async_view_memory_resource";
  static rmm::mr::cuda_async_view_memory_resource make() {
    cudaMemPool_t pool{};
    RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, rmm::get_current_cuda_device().value()));
    return rmm::mr::cuda_async_view_memory_resource{pool};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() {
    return rmm::available_device_memory().second * 2;
  }
};

struct cuda_async_managed_factory {
  static constexpr char const* name = "cuda_async_managed_memory_resource";
  static rmm::mr::cuda_async_managed_memory_resource make() { return {}; }
  static std::string unavailable() {
    try {
      rmm::mr::cuda_async_managed_memory_resource probe;
    } catch (rmm::logic_error const& e) {
      return e.what();
    }
    return {};
  }
  static constexpr bool host_accessible = true;
  // As for managed_factory: never ask for more managed memory than the card has.
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

// An owned pool of pinned host memory with a max_size, so that the out-of-memory probe is
// refused by the resource before the driver is asked.
struct cuda_async_pinned_factory {
  static constexpr char const* name = "cuda_async_pinned_memory_resource";
  static rmm::mr::cuda_async_pinned_memory_resource make() {
    rmm::mr::pinned_pool_options options;
    options.max_size = 4 * GiB;
    return rmm::mr::cuda_async_pinned_memory_resource{options};
  }
  static std::string unavailable() {
    int supported{0};
    RMM_CUDA_TRY(cudaDeviceGetAttribute(
        &supported, cudaDevAttrHostMemoryPoolsSupported, rmm::get_current_cuda_device().value()));
    return supported != 0 ? std::string{} : "cudaDevAttrHostMemoryPoolsSupported is 0";
  }
  static constexpr bool host_accessible = true;
  static std::optional<std::size_t> oom_probe() { return 8 * GiB; }  // above max_size
};

template <typename Factory>
bool skip_if_unavailable() {
  auto const why = Factory::unavailable();
  if (!why.empty()) {
    WARN("SKIPPED for " << Factory::name << ": " << why);
    return true;
  }
  return false;
}

void check_pattern(void* ptr, std::size_t bytes, std::uint32_t seed, rmm::cuda_stream_view stream) {
  rmm::test::fill_pattern(ptr, bytes, seed, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value()) == 0);
}

}  // namespace

// The resource adaptors' factories (each list starts with a comma; empty until they exist).
#include "conformance_adaptor_factories_a.hpp"
#include "conformance_adaptor_factories_b.hpp"

#define RMM_CONFORMANCE_FACTORIES                                                                \
  cuda_factory, managed_factory, pinned_factory, system_factory, callback_factory, pool_factory, \
      pool_over_managed_factory, pool_over_pinned_factory, fixed_size_factory,                   \
      binning_over_pool_factory, arena_factory, unbounded_device_factory,                        \
      unbounded_pinned_factory, unbounded_system_factory, block_pool_factory,                    \
      block_pool_pinned_factory, pool_pair_device_factory, pool_pair_host_factory,               \
      stream_ordered_allocator_factory, sam_headroom_factory, cuda_async_factory,                \
      cuda_async_view_factory, cuda_async_managed_factory, cuda_async_pinned_factory,            \
      virtual_memory_factory,                                                                    \
      pool_over_virtual_memory_factory RMM_CONFORMANCE_ADAPTOR_FACTORIES_A                       \
          RMM_CONFORMANCE_ADAPTOR_FACTORIES_B
