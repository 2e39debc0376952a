// binning_memory_resource over host-backed bins, no GPU needed: where a 0-byte request goes (to
// the bin that would serve it, like any size), routing to the smallest bin that holds a size, and
// bin sizes rounded up to the 256-byte allocation alignment (as RMM's add_bin does).
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>

namespace {
using rmm::mr::binning_memory_resource;
using rmm::test::counting_resource;
using rmm::test::host_backed_resource;
constexpr std::size_t KiB = 1024;
cuda::stream_ref const stream{cudaStream_t{}};
}  // namespace

TEST_CASE("binning (host): a 0-byte request goes to the bin that would serve it", "[binning]") {
  counting_resource upstream{host_backed_resource{}};
  counting_resource small_bin{host_backed_resource{}};
  counting_resource large_bin{host_backed_resource{}};
  binning_memory_resource mr{upstream};
  mr.add_bin(4 * KiB, rmm::device_async_resource_ref{large_bin});
  mr.add_bin(1 * KiB, rmm::device_async_resource_ref{small_bin});
  REQUIRE(mr.get_resource_for(0) == rmm::device_async_resource_ref{small_bin});
  void* p = mr.allocate(stream, 0, 256);
  CHECK(small_bin.counts().allocations == 1);
  CHECK(large_bin.counts().allocations == 0);
  CHECK(upstream.counts().allocations == 0);
  mr.deallocate(stream, p, 0, 256);
  CHECK(small_bin.counts().deallocations == 1);
  CHECK(large_bin.counts().deallocations == 0);
  CHECK(upstream.counts().deallocations == 0);
  CHECK(small_bin.counts().bytes_outstanding == 0);
}

TEST_CASE("binning (host): without bins a 0-byte request goes to the upstream", "[binning]") {
  counting_resource upstream{host_backed_resource{}};
  binning_memory_resource mr{upstream};
  void* p = mr.allocate(stream, 0, 256);
  CHECK(upstream.counts().allocations == 1);
  mr.deallocate(stream, p, 0, 256);
  CHECK(upstream.counts().deallocations == 1);
}

TEST_CASE("binning (host): a request goes to the smallest bin that holds it", "[binning]") {
  counting_resource upstream{host_backed_resource{}};
  counting_resource small_bin{host_backed_resource{}};
  counting_resource large_bin{host_backed_resource{}};
  binning_memory_resource mr{upstream};
  mr.add_bin(4 * KiB, rmm::device_async_resource_ref{large_bin});
  mr.add_bin(1 * KiB, rmm::device_async_resource_ref{small_bin});
  void* a = mr.allocate(stream, 1, 256);
  void* b = mr.allocate(stream, 1 * KiB, 256);
  void* c = mr.allocate(stream, 1 * KiB + 1, 256);
  void* d = mr.allocate(stream, 4 * KiB + 1, 256);
  CHECK(small_bin.counts().allocations == 2);
  CHECK(large_bin.counts().allocations == 1);
  CHECK(upstream.counts().allocations == 1);
  mr.deallocate(stream, a, 1, 256);
  mr.deallocate(stream, b, 1 * KiB, 256);
  mr.deallocate(stream, c, 1 * KiB + 1, 256);
  mr.deallocate(stream, d, 4 * KiB + 1, 256);
  CHECK(small_bin.counts().bytes_outstanding == 0);
  CHECK(large_bin.counts().bytes_outstanding == 0);
  CHECK(upstream.counts().bytes_outstanding == 0);
}

TEST_CASE("binning (host): bin sizes are rounded up to the allocation alignment", "[binning]") {
  counting_resource upstream{host_backed_resource{}};
  counting_resource bin_100{host_backed_resource{}};
  counting_resource bin_200{host_backed_resource{}};
  binning_memory_resource mr{upstream};
  mr.add_bin(100, rmm::device_async_resource_ref{bin_100});  // becomes the 256-byte bin
  CHECK(mr.get_resource_for(200) == rmm::device_async_resource_ref{bin_100});
  CHECK(mr.get_resource_for(rmm::CUDA_ALLOCATION_ALIGNMENT) ==
        rmm::device_async_resource_ref{bin_100});
  CHECK(mr.get_resource_for(rmm::CUDA_ALLOCATION_ALIGNMENT + 1) == mr.get_upstream_resource());
  mr.add_bin(200, rmm::device_async_resource_ref{bin_200});  // also 256 bytes: nothing changes
  CHECK(mr.get_resource_for(200) == rmm::device_async_resource_ref{bin_100});
  void* p = mr.allocate(stream, 200, 256);
  CHECK(bin_100.counts().allocations == 1);
  mr.deallocate(stream, p, 200, 256);
  CHECK(bin_100.counts().deallocations == 1);
  CHECK_THROWS_AS(mr.add_bin(0), rmm::logic_error);
  CHECK_THROWS_AS(
      mr.add_bin(std::numeric_limits<std::size_t>::max(), rmm::device_async_resource_ref{bin_200}),
      rmm::logic_error);
}
