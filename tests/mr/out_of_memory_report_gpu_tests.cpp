// rmm::out_of_memory's report from every resource of the library, on a GPU: each test provokes
// an out-of-memory cheaply (a request above the device's memory, or a small maximum, limit or
// capacity) and checks the report's fields, and that the message is the report written out.
// Tests tagged [expected_api_errors] make CUDA allocation calls fail on purpose (the sanitizer
// run treats them apart, docs/gpu-testing.md).
#include "../utilities/oom_report_checks.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/block_memory_pool_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/unbounded_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using rmm::test::no_cuda_error_left;
using rmm::test::report_of;

namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using rmm::out_of_memory_report;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// A request on `stream` of `mr` that must fail; returns its report.
template <typename R>
out_of_memory_report refused(R& mr, rmm::cuda_stream const& stream, std::size_t bytes) {
  return report_of([&] {
    void* p = mr.allocate(stream, bytes, 256);
    mr.deallocate(stream, p, bytes, 256);
  });
}

int current_device() { return rmm::get_current_cuda_device().value(); }

// The device fields name the current device and its memory.
void check_device(out_of_memory_report const& r) {
  CHECK(r.device == current_device());
  REQUIRE(r.device_total_bytes.has_value());
  REQUIRE(r.device_free_bytes.has_value());
  CHECK(*r.device_total_bytes == rmm::available_device_memory().second);
  CHECK(*r.device_total_bytes > 0);
  CHECK(*r.device_free_bytes <= *r.device_total_bytes);
}

void check_stream(out_of_memory_report const& r, rmm::cuda_stream const& stream) {
  CHECK(r.stream == reinterpret_cast<std::uintptr_t>(stream.value()));
}

// More than the device has: every device allocation of it fails at once.
std::size_t beyond_device() { return rmm::available_device_memory().second * 2; }

bool skip(std::string const& why) {
  if (!why.empty()) {
    WARN("SKIPPED: " << why);
    return true;
  }
  return false;
}

int device_attribute(cudaDeviceAttr attr) {
  int value = 0;
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, current_device()));
  return value;
}

std::string system_memory_unavailable() {
  return rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device())
             ? std::string{}
             : std::string{"no pageable memory access (no HMM or ATS)"};
}

}  // namespace

// --- the plain resources --------------------------------------------------------------------

TEST_CASE("oom report: cuda_memory_resource", "[gpu][oom][expected_api_errors]") {
  rmm::mr::cuda_memory_resource mr;
  rmm::cuda_stream stream;
  auto const bytes = beyond_device();
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "cuda_memory_resource");
  CHECK(r.requested_bytes == bytes);
  CHECK_THAT(r.reason, StartsWith("cudaMalloc returned cudaErrorMemoryAllocation"));
  check_device(r);
  CHECK_FALSE(r.stream);  // a synchronous resource: the stream is ignored
  CHECK_FALSE(r.reserved_bytes);
  CHECK(cudaGetLastError() == cudaSuccess);
}

// managed_memory_resource is not probed: asking for more managed memory than the card has can
// hang the GPU (as in the conformance suite). Its report comes from the same function as
// cuda_memory_resource's (rmm::detail::throw_resource_cuda_alloc_error, tested on the host).

TEST_CASE("oom report: pinned_host_memory_resource", "[gpu][oom][expected_api_errors]") {
  rmm::mr::pinned_host_memory_resource mr;
  rmm::cuda_stream stream;
  auto const bytes = std::size_t{1} << 52U;  // 4 PiB
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "pinned_host_memory_resource");
  CHECK(r.requested_bytes == bytes);
  CHECK_THAT(r.reason, StartsWith("cudaMallocHost returned cudaErrorMemoryAllocation"));
  check_device(r);  // the device current at the call
  CHECK_FALSE(r.stream);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("oom report: system_memory_resource", "[gpu][oom]") {
  if (skip(system_memory_unavailable())) {
    return;
  }
  rmm::mr::system_memory_resource mr;
  rmm::cuda_stream stream;
  auto const bytes = std::numeric_limits<std::size_t>::max() - 100;
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "system_memory_resource");
  CHECK(r.requested_bytes == bytes);
  CHECK_THAT(r.reason, StartsWith("the request is too large"));
  CHECK_FALSE(r.device);  // pageable host memory
  CHECK_FALSE(r.stream);
}

TEST_CASE("oom report: sam_headroom_memory_resource", "[gpu][oom]") {
  if (skip(system_memory_unavailable())) {
    return;
  }
  rmm::mr::sam_headroom_memory_resource mr{64 * MiB};
  rmm::cuda_stream stream;
  auto const bytes = std::numeric_limits<std::size_t>::max() - 100;
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "sam_headroom_memory_resource");
  CHECK(r.requested_bytes == bytes);
  CHECK_THAT(r.reason, StartsWith("system_memory_resource could not allocate"));
  check_device(r);  // the device whose headroom it keeps
}

TEST_CASE("oom report: unbounded_memory_resource passes its storage's report",
          "[gpu][oom][expected_api_errors]") {
  rmm::mr::unbounded_memory_resource mr{rmm::mr::storage_type::device};
  rmm::cuda_stream stream;
  auto const bytes = beyond_device();
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "cuda_memory_resource");
  CHECK(r.requested_bytes == bytes);
  check_device(r);
}

// --- the driver pools --------------------------------------------------------------------------

TEST_CASE("oom report: cuda_async_memory_resource over its limit", "[gpu][oom]") {
  rmm::mr::cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  mr.set_limit(8 * MiB);
  void* a      = mr.allocate(stream, 4 * MiB, 256);
  auto const r = refused(mr, stream, 5 * MiB);
  CHECK(r.resource == "cuda_async_memory_resource");
  CHECK(r.requested_bytes == 5 * MiB);
  CHECK(r.used_bytes == 4 * MiB);  // what the limit counts
  CHECK(r.maximum_bytes == 8 * MiB);
  CHECK(r.reserved_bytes.has_value());  // the pool's attributes
  CHECK(r.free_bytes.has_value());
  CHECK_THAT(r.reason, StartsWith("the limit of 8388608 bytes would be exceeded (4194304 bytes"));
  check_stream(r, stream);
  check_device(r);
  mr.deallocate(stream, a, 4 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("oom report: cuda_async_memory_resource refused by the driver",
          "[gpu][oom][expected_api_errors]") {
  rmm::mr::cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  auto const bytes = beyond_device();
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "cuda_async_memory_resource");
  CHECK(r.requested_bytes == bytes);
  CHECK_THAT(r.reason,
             StartsWith("cudaMallocFromPoolAsync returned cudaErrorMemoryAllocation") &&
                 Contains("no limit"));
  CHECK(r.reserved_bytes.has_value());
  CHECK(r.used_bytes.has_value());
  CHECK(r.free_bytes.has_value());
  check_stream(r, stream);
  check_device(r);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("oom report: cuda_async_view_memory_resource over its limit", "[gpu][oom]") {
  cudaMemPool_t pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, current_device()));
  rmm::mr::cuda_async_view_memory_resource view{pool};
  rmm::cuda_stream stream;
  view.set_limit(2 * MiB);
  auto const r = refused(view, stream, 3 * MiB);
  view.set_limit(0);
  CHECK(r.resource == "cuda_async_view_memory_resource");
  CHECK(r.requested_bytes == 3 * MiB);
  CHECK(r.used_bytes.has_value());  // through this library's resources over the pool
  CHECK(r.maximum_bytes == 2 * MiB);
  check_stream(r, stream);
  check_device(r);
}

TEST_CASE("oom report: cuda_async_managed_memory_resource over its limit", "[gpu][oom]") {
  std::optional<rmm::mr::cuda_async_managed_memory_resource> made;
  try {
    made.emplace();
  } catch (rmm::logic_error const& e) {
    WARN("SKIPPED: " << e.what());
    return;
  }
  auto& mr = *made;
  rmm::cuda_stream stream;
  mr.set_limit(MiB);  // the default managed pool's limit: shared, so put back below
  auto const r = refused(mr, stream, 2 * MiB);
  mr.set_limit(0);
  CHECK(r.resource == "cuda_async_managed_memory_resource");
  CHECK(r.requested_bytes == 2 * MiB);
  CHECK(r.maximum_bytes == MiB);
  check_stream(r, stream);
  check_device(r);
}

TEST_CASE("oom report: cuda_async_pinned_memory_resource above max_size", "[gpu][oom]") {
  if (device_attribute(cudaDevAttrMemoryPoolsSupported) == 0 ||
      device_attribute(cudaDevAttrHostMemoryPoolsSupported) == 0) {
    WARN("SKIPPED: no host memory pools on this device");
    return;
  }
  rmm::mr::pinned_pool_options options;
  options.max_size = 64 * MiB;
  rmm::mr::cuda_async_pinned_memory_resource mr{options};
  rmm::cuda_stream stream;
  auto const r = refused(mr, stream, 128 * MiB);
  CHECK(r.resource == "cuda_async_pinned_memory_resource");
  CHECK(r.requested_bytes == 128 * MiB);
  CHECK(r.maximum_bytes == 64 * MiB);
  CHECK(r.reason == "larger than the pool's max_size of 67108864 bytes");
  check_stream(r, stream);
  check_device(r);  // host memory: the device current at the request
}

// --- the suballocators -------------------------------------------------------------------------

TEST_CASE("oom report: pool_memory_resource at its maximum", "[gpu][oom]") {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB, 8 * MiB};
  rmm::cuda_stream stream;
  void* a      = pool.allocate(stream, 3 * MiB, 256);
  auto const r = refused(pool, stream, 6 * MiB + 1);
  CHECK(r.resource == "pool_memory_resource");
  CHECK(r.requested_bytes == 6 * MiB + 1);
  CHECK(r.reserved_bytes == 8 * MiB);
  CHECK(r.free_bytes == 5 * MiB);
  CHECK(r.largest_free_block == 5 * MiB);
  CHECK(r.maximum_bytes == 8 * MiB);
  CHECK_THAT(r.reason, Contains("pool size 8388608 bytes"));
  check_stream(r, stream);
  check_device(r);
  pool.deallocate(stream, a, 3 * MiB, 256);
}

TEST_CASE("oom report: pool_memory_resource whose upstream fails",
          "[gpu][oom][expected_api_errors]") {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  rmm::cuda_stream stream;
  auto const bytes = beyond_device();
  auto const r     = refused(pool, stream, bytes);
  CHECK(r.requested_bytes == bytes);
  CHECK(r.reserved_bytes == std::size_t{0});
  CHECK_FALSE(r.maximum_bytes);
  CHECK_THAT(
      r.reason,
      Contains("upstream failed to allocate") && Contains("cuda_memory_resource: cannot allocate"));
  check_stream(r, stream);
  check_device(r);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("oom report: expandable pool (pool over virtual_memory_resource)", "[gpu][oom][vmm]") {
  if (rmm::test::vmm_unavailable()) {
    return;
  }
  rmm::mr::virtual_memory_resource vmm;
  std::size_t const g = vmm.granularity();
  rmm::mr::pool_memory_resource pool{vmm, 0, 4 * g};
  rmm::cuda_stream stream;
  void* a      = pool.allocate(stream, 3 * g, 256);
  auto const r = refused(pool, stream, 2 * g);
  CHECK(r.resource == "pool_memory_resource");
  CHECK(r.requested_bytes == 2 * g);
  CHECK(r.reserved_bytes == 3 * g);
  CHECK(r.maximum_bytes == 4 * g);
  CHECK(r.free_bytes == std::size_t{0});
  CHECK_THAT(r.reason, Contains("would exceed the maximum"));
  check_stream(r, stream);
  check_device(r);
  pool.deallocate(stream, a, 3 * g, 256);
}

TEST_CASE("oom report: arena_memory_resource", "[gpu][oom]") {
  rmm::mr::arena_memory_resource mr{rmm::mr::cuda_memory_resource{}, 64 * MiB};
  rmm::cuda_stream stream;
  auto const too_large = refused(mr, stream, 128 * MiB);
  CHECK(too_large.resource == "arena_memory_resource");
  CHECK(too_large.requested_bytes == 128 * MiB);
  CHECK(too_large.reserved_bytes == 64 * MiB);
  CHECK(too_large.maximum_bytes == 64 * MiB);
  CHECK_THAT(too_large.reason, StartsWith("the request exceeds the arena size 67108864 bytes"));
  check_stream(too_large, stream);
  check_device(too_large);
  void* p      = mr.allocate(stream, 48 * MiB, 256);
  auto const r = refused(mr, stream, 48 * MiB);
  CHECK(r.requested_bytes == 48 * MiB);
  CHECK(r.free_bytes == 16 * MiB);
  CHECK(r.largest_free_block == 16 * MiB);
  CHECK(r.used_bytes == 48 * MiB);
  CHECK_THAT(r.reason, StartsWith("no free block fits"));
  check_stream(r, stream);
  mr.deallocate(stream, p, 48 * MiB, 256);
}

TEST_CASE("oom report: binning_memory_resource passes the report of its target",
          "[gpu][oom][expected_api_errors]") {
  rmm::mr::binning_memory_resource mr{rmm::mr::cuda_memory_resource{}, 10, 12};
  rmm::cuda_stream stream;
  auto const bytes = beyond_device();  // above every bin: the upstream's
  auto const r     = refused(mr, stream, bytes);
  CHECK(r.resource == "cuda_memory_resource");
  CHECK(r.requested_bytes == bytes);
  check_device(r);
}

TEST_CASE("oom report: fixed_size_memory_resource whose upstream is full", "[gpu][oom]") {
  // The upstream holds exactly one chunk of 4 blocks: the fifth block cannot be had.
  rmm::mr::limiting_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}, 256 * KiB};
  rmm::mr::fixed_size_memory_resource mr{upstream, 64 * KiB, 4};
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(mr.allocate(stream, 64 * KiB, 256));
  }
  auto const r = refused(mr, stream, 1000);
  CHECK(r.resource == "fixed_size_memory_resource");
  CHECK(r.requested_bytes == 1000);
  CHECK(r.reserved_bytes == 256 * KiB);
  CHECK(r.used_bytes == 256 * KiB);
  CHECK(r.free_bytes == std::size_t{0});
  CHECK(r.largest_free_block == std::size_t{0});
  CHECK_THAT(r.reason,
             StartsWith("all 4 blocks of 65536 bytes are in use") &&
                 Contains("limiting_resource_adaptor: cannot allocate 262144 bytes"));
  check_stream(r, stream);
  check_device(r);
  for (void* p : blocks) {
    mr.deallocate(stream, p, 64 * KiB, 256);
  }
}

TEST_CASE("oom report: block_memory_pool_resource", "[gpu][oom]") {
  rmm::mr::block_memory_pool_resource mr{rmm::mr::storage_type::device, 1000, 4};
  rmm::cuda_stream stream;
  auto const too_large = refused(mr, stream, 1001);
  CHECK(too_large.resource == "block_memory_pool_resource");
  CHECK(too_large.requested_bytes == 1001);
  CHECK(too_large.reason == "the request exceeds the block size of 1000 bytes");
  CHECK(too_large.reserved_bytes == 4 * KiB);  // 4 blocks spaced by 1024 bytes
  CHECK(too_large.free_bytes == 4 * KiB);
  CHECK(too_large.largest_free_block == std::size_t{1000});
  CHECK(too_large.maximum_bytes == 4 * KiB);
  check_stream(too_large, stream);
  check_device(too_large);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(mr.allocate(stream, 1000, 256));
  }
  auto const r = refused(mr, stream, 1);
  CHECK(r.requested_bytes == 1);
  CHECK_THAT(r.reason, StartsWith("all 4 blocks of 1000 bytes are in use"));
  CHECK(r.used_bytes == 4 * KiB);
  CHECK(r.free_bytes == std::size_t{0});
  CHECK(r.largest_free_block == std::size_t{0});
  check_stream(r, stream);
  check_device(r);
  for (void* p : blocks) {
    mr.deallocate(stream, p, 1000, 256);
  }
}

TEST_CASE("oom report: virtual_memory_resource", "[gpu][oom][vmm][expected_api_errors]") {
  if (rmm::test::vmm_unavailable()) {
    return;
  }
  rmm::mr::virtual_memory_resource mr;
  rmm::cuda_stream stream;
  void* held       = mr.allocate(stream, 8 * MiB, 256);
  auto const total = rmm::available_device_memory().second;
  auto const r     = refused(mr, stream, total);
  CHECK(r.resource == "virtual_memory_resource");
  CHECK(r.requested_bytes == total);
  CHECK(r.reserved_bytes == 8 * MiB);  // mapped
  CHECK(r.used_bytes == 8 * MiB);
  CHECK_FALSE(r.free_bytes);
  CHECK_THAT(r.reason, Contains("CUDA_ERROR_OUT_OF_MEMORY"));
  check_stream(r, stream);
  check_device(r);
  mr.deallocate(stream, held, 8 * MiB, 256);
}

// --- the adaptors --------------------------------------------------------------------------------

TEST_CASE("oom report: limiting_resource_adaptor", "[gpu][oom]") {
  rmm::mr::limiting_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, 16 * MiB};
  rmm::cuda_stream stream;
  void* a      = mr.allocate(stream, 16 * MiB, 256);
  auto const r = refused(mr, stream, 1);
  CHECK(r.resource == "limiting_resource_adaptor");
  CHECK(r.requested_bytes == 1);
  CHECK(r.used_bytes == 16 * MiB);
  CHECK(r.maximum_bytes == 16 * MiB);
  CHECK_THAT(r.reason, StartsWith("Exceeded memory limit (failed to allocate 1.000000 B)"));
  check_stream(r, stream);
  check_device(r);
  mr.deallocate(stream, a, 16 * MiB, 256);
}

TEST_CASE("oom report: aligned_resource_adaptor keeps its upstream's figures", "[gpu][oom]") {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, 2 * MiB};
  rmm::mr::aligned_resource_adaptor mr{pool, 64 * KiB, 0};  // every request aligned to 64 KiB
  rmm::cuda_stream stream;
  auto const r = refused(mr, stream, 2 * MiB);  // 2 MiB + 64 KiB - 256 of padding
  CHECK(r.resource == "aligned_resource_adaptor");
  CHECK(r.requested_bytes == 2 * MiB);
  CHECK_THAT(r.reason,
             StartsWith("(" + std::to_string(2 * MiB + 64 * KiB - 256) +
                        " with alignment padding) from the upstream: "
                        "pool_memory_resource could not allocate"));
  CHECK(r.maximum_bytes == 2 * MiB);  // the pool's
  check_stream(r, stream);
  check_device(r);
}

TEST_CASE("oom report: failure_callback_resource_adaptor passes its upstream's report",
          "[gpu][oom]") {
  rmm::mr::limiting_resource_adaptor limited{rmm::mr::cuda_memory_resource{}, MiB};
  int calls = 0;
  rmm::mr::failure_callback_resource_adaptor mr{limited,
                                                [](std::size_t, void* arg) {
                                                  ++*static_cast<int*>(arg);
                                                  return false;  // do not retry
                                                },
                                                &calls};
  rmm::cuda_stream stream;
  auto const r = refused(mr, stream, 2 * MiB);
  CHECK(calls == 1);
  CHECK(r.resource == "limiting_resource_adaptor");
  CHECK(r.requested_bytes == 2 * MiB);
  CHECK(r.maximum_bytes == MiB);
  check_stream(r, stream);
  check_device(r);
}
