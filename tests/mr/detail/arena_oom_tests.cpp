/**
 * @file arena_oom_tests.cpp
 * @brief The out-of-memory reports of arena_memory_resource (detail/mechanics/arena_oom.hpp),
 * without a GPU: the figures, the stream (as passed) and its name in the reason, and the report of
 * an arena whose upstream failed. The device fields are the current device's (none without a GPU).
 */
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/arena_oom.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("arena report: the figures, the stream and the reason", "[arena][oom]") {
  rmm::mr::detail::arena_figures const figures{64 << 20, 16 << 20, 8 << 20};
  auto const r = rmm::mr::detail::arena_oom_report(
      48 << 20, cudaStreamLegacy, figures, "no free block fits in the arena size", -1);
  CHECK(r.resource == "arena_memory_resource");
  CHECK(r.requested_bytes == std::size_t{48} << 20U);
  CHECK(r.reason == "no free block fits in the arena size 67108864 bytes (stream legacy default)");
  CHECK(r.reserved_bytes == std::size_t{64} << 20U);
  CHECK(r.used_bytes == std::size_t{48} << 20U);
  CHECK(r.free_bytes == std::size_t{16} << 20U);
  CHECK(r.largest_free_block == std::size_t{8} << 20U);
  CHECK(r.maximum_bytes == std::size_t{64} << 20U);
  CHECK(r.stream == reinterpret_cast<std::uintptr_t>(cudaStreamLegacy));
  rmm::out_of_memory_report current;
  rmm::detail::add_device_memory(current);
  CHECK(r.device == current.device);
  CHECK_THAT(to_string(r),
             Contains("arena size 67108864") && Contains("free 16777216 bytes") &&
                 Contains("largest free block 8388608 bytes"));
  // A created stream is named by its handle.
  auto const other = rmm::mr::detail::arena_oom_report(
      1, reinterpret_cast<cudaStream_t>(std::uintptr_t{0xabc}), figures, "why", -1);
  CHECK(other.reason == "why 67108864 bytes (stream 0xabc)");
}

TEST_CASE("arena report: the upstream could not provide the arena", "[arena][oom]") {
  rmm::out_of_memory_report inner;
  inner.resource        = "cuda_memory_resource";
  inner.requested_bytes = 1 << 30;
  inner.reason          = "cudaMalloc returned cudaErrorMemoryAllocation (out of memory)";
  inner.device          = 0;
  auto const r =
      rmm::mr::detail::arena_upstream_report(std::size_t{1} << 30U, rmm::out_of_memory{inner}, -1);
  CHECK(r.resource == "arena_memory_resource");
  CHECK(r.requested_bytes == std::size_t{1} << 30U);
  CHECK(r.reserved_bytes == std::size_t{0});
  CHECK_THAT(r.reason,
             StartsWith("the global arena of 1073741824 bytes could not be had from the "
                        "upstream: cuda_memory_resource: cannot allocate 1073741824 "
                        "bytes: cudaMalloc returned"));
}
