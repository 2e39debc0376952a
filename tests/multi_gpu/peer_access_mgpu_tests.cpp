// Peer access (issue 14, item 2): memory of one device, or pinned host memory, read by a kernel
// on another device, through each resource's documented option.
#include "../utilities/device_kernels.hpp"
#include "mgpu_utilities.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

using Catch::Matchers::Contains;
namespace mgpu = rmm::test::mgpu;

namespace {

constexpr std::size_t bytes = std::size_t{8} << 20;

/// Mismatches of @p seed's pattern in [ptr, ptr + bytes) as a kernel on @p device sees them.
std::size_t mismatches_seen_by(int device, void const* ptr, std::uint32_t seed) {
  rmm::cuda_set_device_raii const on{rmm::cuda_device_id{device}};
  rmm::cuda_stream stream;
  return rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value());
}

/// Writes @p seed's pattern with a kernel on @p device and waits for it.
void written_by(int device, void* ptr, std::uint32_t seed) {
  rmm::cuda_set_device_raii const on{rmm::cuda_device_id{device}};
  rmm::cuda_stream stream;
  rmm::test::fill_pattern(ptr, bytes, seed, stream.value());
  stream.synchronize();
}

}  // namespace

TEST_CASE("multi-GPU: cuda_async_memory_resource shared with another device",
          "[mgpu][peer_access]") {
  int const n = mgpu::device_count();
  rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
  rmm::mr::cuda_async_memory_resource mr;
  CHECK(mr.is_accessible_from(rmm::cuda_device_id{0}));
  CHECK_FALSE(mr.is_accessible_from(rmm::cuda_device_id{1}));
  for (int d = 1; d < n; ++d) {
    mr.enable_access_from(rmm::cuda_device_id{d});
    CHECK(mr.is_accessible_from(rmm::cuda_device_id{d}));
  }
  mr.enable_access_from(rmm::cuda_device_id{1});  // again: a no-op
  mr.enable_access_from(rmm::cuda_device_id{0});  // its own device: a no-op
  CHECK_THROWS_MATCHES(mr.enable_access_from(rmm::cuda_device_id{n}),
                       rmm::out_of_range,
                       Catch::Matchers::Predicate<rmm::out_of_range>([&](auto const& e) {
                         return std::string{e.what()}.find("device " + std::to_string(n) +
                                                           " does not exist") != std::string::npos;
                       }));
  // Memory allocated after access was given, and memory allocated before it (the access covers
  // the whole pool).
  void* p = mr.allocate_sync(bytes, 256);
  written_by(0, p, 7);
  for (int d = 1; d < n; ++d) {
    CHECK(mismatches_seen_by(d, p, 7) == 0);
  }
  written_by(n - 1, p, 8);  // and a peer writes, device 0 reads
  CHECK(mismatches_seen_by(0, p, 8) == 0);
  mr.deallocate_sync(p, bytes, 256);
}

TEST_CASE("multi-GPU: virtual_memory_resource maps for named peers", "[mgpu][peer_access]") {
  rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
  rmm::mr::virtual_memory_resource mr{rmm::cuda_device_id{0}, 0, {1}};
  void* p = mr.allocate_sync(bytes, 256);
  CHECK(mgpu::pointer_device(p) == 0);
  written_by(0, p, 11);
  CHECK(mismatches_seen_by(1, p, 11) == 0);
  written_by(1, p, 12);
  CHECK(mismatches_seen_by(0, p, 12) == 0);
  mr.deallocate_sync(p, bytes, 256);
  CHECK_THROWS_WITH((rmm::mr::virtual_memory_resource{rmm::cuda_device_id{0}, 0, {0}}),
                    Contains("peer device 0"));
}

TEST_CASE("multi-GPU: a pinned host pool accessible from every device", "[mgpu][peer_access]") {
  int const n = mgpu::device_count();
  rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
  SECTION("accessible_from_all_devices") {
    rmm::mr::pinned_pool_options options;
    options.accessible_from_all_devices = true;
    rmm::mr::cuda_async_pinned_memory_resource mr{options};
    void* p = mr.allocate_sync(bytes, 256);
    rmm::test::fill_pattern_host(p, bytes, 21);
    for (int d = 0; d < n; ++d) {
      CHECK(mr.is_accessible_from(rmm::cuda_device_id{d}));
      CHECK(mismatches_seen_by(d, p, 21) == 0);
    }
    written_by(n - 1, p, 22);
    CHECK(rmm::test::count_pattern_mismatches_host(p, bytes, 22) == 0);
    mr.deallocate_sync(p, bytes, 256);
  }
  SECTION("by default only the constructing device; enable_access_from adds one") {
    rmm::mr::cuda_async_pinned_memory_resource mr{rmm::mr::pinned_pool_options{}};
    CHECK(mr.is_accessible_from(rmm::cuda_device_id{0}));
    CHECK_FALSE(mr.is_accessible_from(rmm::cuda_device_id{1}));
    mr.enable_access_from(rmm::cuda_device_id{1});
    CHECK(mr.is_accessible_from(rmm::cuda_device_id{1}));
    void* p = mr.allocate_sync(bytes, 256);
    rmm::test::fill_pattern_host(p, bytes, 23);
    CHECK(mismatches_seen_by(1, p, 23) == 0);
    mr.deallocate_sync(p, bytes, 256);
  }
}

TEST_CASE("multi-GPU: pinned_host_memory_resource memory is read by every device",
          "[mgpu][peer_access]") {
  int const n = mgpu::device_count();
  rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
  rmm::mr::pinned_host_memory_resource mr;
  void* p = mr.allocate_sync(bytes, 256);
  rmm::test::fill_pattern_host(p, bytes, 31);
  for (int d = 0; d < n; ++d) {
    CHECK(mismatches_seen_by(d, p, 31) == 0);
  }
  mr.deallocate_sync(p, bytes, 256);
}
