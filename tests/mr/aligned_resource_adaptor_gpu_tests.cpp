// aligned_resource_adaptor over device memory: pointers at or above the threshold aligned to
// 4 KiB, 64 KiB and 2 MiB over cudaMalloc and over a pool, the whole aligned span written and
// read back by kernels, requests below the threshold passed through, frees of both kinds
// reaching the upstream as allocated (verifying_resource), many live allocations on several
// streams keeping their data.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using rmm::mr::aligned_resource_adaptor;
using rmm::mr::cuda_memory_resource;
using rmm::test::counting_resource;
using rmm::test::verifying_resource;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

}  // namespace

TEST_CASE(
    "aligned_resource_adaptor: device pointers at or above the threshold are aligned and "
    "their aligned span keeps its data",
    "[gpu][aligned_resource_adaptor]") {
  auto const alignment = GENERATE(4 * KiB, 64 * KiB, 2 * MiB);
  auto const threshold = GENERATE(std::size_t{0}, 64 * KiB);
  auto const over_pool = GENERATE(false, true);
  INFO("alignment " << alignment << ", threshold " << threshold << ", over a pool " << over_pool);
  verifying_resource verifying =
      over_pool ? verifying_resource{rmm::mr::pool_memory_resource{cuda_memory_resource{}, 0}}
                : verifying_resource{cuda_memory_resource{}};
  counting_resource counting{verifying};
  aligned_resource_adaptor mr{counting, alignment, threshold};
  rmm::cuda_stream stream;
  std::uint32_t seed = 0;
  for (std::size_t bytes :
       {std::size_t{1}, std::size_t{1000}, 64 * KiB - 1, 64 * KiB, MiB + 3, 16 * MiB}) {
    INFO(bytes << " bytes");
    for (bool sync : {false, true}) {
      void* ptr = sync ? mr.allocate_sync(bytes, 256) : mr.allocate(stream, bytes, 256);
      REQUIRE(ptr != nullptr);
      if (bytes >= threshold) {
        CHECK(rmm::is_pointer_aligned(ptr, alignment));
        std::size_t const span = rmm::align_up(bytes, alignment);
        rmm::test::fill_pattern(ptr, span, ++seed, stream.value());
        CHECK(rmm::test::count_pattern_mismatches(ptr, span, seed, stream.value()) == 0);
      } else {
        CHECK(rmm::is_pointer_aligned(ptr, 256));
        CHECK(counting.counts().bytes_outstanding.load() == bytes);  // passed through
        rmm::test::fill_pattern(ptr, bytes, ++seed, stream.value());
        CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value()) == 0);
      }
      if (sync) {
        mr.deallocate_sync(ptr, bytes, 256);
      } else {
        mr.deallocate(stream, ptr, bytes, 256);
      }
    }
  }
  stream.synchronize();
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
  CHECK(counting.counts().bytes_outstanding.load() == 0);
}

TEST_CASE("aligned_resource_adaptor: many live allocations on several streams keep their data",
          "[gpu][aligned_resource_adaptor]") {
  verifying_resource verifying{rmm::mr::pool_memory_resource{cuda_memory_resource{}, 0}};
  aligned_resource_adaptor mr{verifying, 64 * KiB, 16 * KiB};
  std::vector<rmm::cuda_stream> streams(4);
  std::mt19937_64 rng{11};
  std::uniform_int_distribution<std::size_t> size_dist{1, 512 * KiB};
  struct block {
    void* ptr;
    std::size_t bytes;
    std::uint32_t seed;
    std::size_t stream;
  };
  std::vector<block> blocks;
  std::size_t misaligned = 0;
  for (std::uint32_t i = 0; i < 200; ++i) {
    auto const bytes = size_dist(rng);
    auto const s     = i % streams.size();
    void* ptr        = mr.allocate(streams[s], bytes, 256);
    misaligned += rmm::is_pointer_aligned(ptr, bytes >= 16 * KiB ? 64 * KiB : 256) ? 0U : 1U;
    rmm::test::fill_pattern(ptr, bytes, i, streams[s].value());
    blocks.push_back({ptr, bytes, i, s});
    if (i % 4 == 3) {  // free one on another stream than its own
      auto const victim = blocks[blocks.size() / 2];
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(blocks.size() / 2));
      streams[victim.stream].synchronize();
      mr.deallocate(streams[(victim.stream + 1) % streams.size()], victim.ptr, victim.bytes, 256);
    }
  }
  CHECK(misaligned == 0);
  std::size_t mismatches = 0;
  for (auto const& b : blocks) {
    mismatches +=
        rmm::test::count_pattern_mismatches(b.ptr, b.bytes, b.seed, streams[b.stream].value());
  }
  CHECK(mismatches == 0);
  for (auto const& b : blocks) {
    mr.deallocate(streams[b.stream], b.ptr, b.bytes, 256);
  }
  for (auto& stream : streams) {
    stream.synchronize();
  }
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
}

TEST_CASE("aligned_resource_adaptor: device out of memory names the request",
          "[gpu][aligned_resource_adaptor][expected_api_errors]") {
  aligned_resource_adaptor mr{cuda_memory_resource{}, 64 * KiB};
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_WITH(mr.allocate_sync(too_much, 256),
                    Catch::Matchers::Contains("aligned_resource_adaptor: cannot allocate " +
                                              std::to_string(too_much) + " bytes") &&
                        Catch::Matchers::Contains("device 0"));
  CHECK(cudaGetLastError() == cudaSuccess);
}
