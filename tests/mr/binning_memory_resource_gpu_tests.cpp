// binning_memory_resource: bin construction, routing by size, add_bin with and without a
// resource, and the upstream path for large requests.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

namespace {
using Catch::Matchers::Contains;
using rmm::mr::binning_memory_resource;
using rmm::mr::cuda_memory_resource;
constexpr std::size_t KiB = 1024;
}  // namespace

TEST_CASE("binning: bad exponents are refused with their values", "[gpu][binning]") {
  CHECK_THROWS_AS(binning_memory_resource(cuda_memory_resource{}, 12, 10), rmm::logic_error);
  CHECK_THROWS_WITH(binning_memory_resource(cuda_memory_resource{}, 12, 10),
                    Contains("min_size_exponent 12 exceeds max_size_exponent 10"));
  CHECK_THROWS_WITH(binning_memory_resource(cuda_memory_resource{}, -1, 10), Contains("[-1, 10]"));
  binning_memory_resource mr{cuda_memory_resource{}};
  CHECK_THROWS_AS(mr.add_bin(0), rmm::logic_error);
}

TEST_CASE("binning: routes by size, large requests go upstream", "[gpu][binning]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  binning_memory_resource mr{counting, 10, 12};  // bins 1, 2 and 4 KiB
  auto const upstream = mr.get_upstream_resource();
  CHECK(mr.get_resource_for(100) != upstream);
  CHECK(mr.get_resource_for(1024) == mr.get_resource_for(1));
  CHECK(mr.get_resource_for(1025) != mr.get_resource_for(1024));
  CHECK(mr.get_resource_for(4 * KiB) != upstream);
  CHECK(mr.get_resource_for(4 * KiB + 1) == upstream);
  rmm::cuda_stream stream;
  auto const before = counting.counts().allocations.load();
  void* small       = mr.allocate(stream, 3000, 256);
  CHECK(counting.counts().allocations == before);  // served by the 4 KiB bin's preallocation
  void* large = mr.allocate(stream, 64 * KiB, 256);
  CHECK(counting.counts().allocations == before + 1);
  rmm::test::fill_pattern(small, 3000, 1, stream.value());
  rmm::test::fill_pattern(large, 64 * KiB, 2, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(small, 3000, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(large, 64 * KiB, 2, stream.value()) == 0);
  mr.deallocate(stream, small, 3000, 256);
  mr.deallocate(stream, large, 64 * KiB, 256);
}

TEST_CASE("binning: add_bin with a given resource, and duplicates change nothing",
          "[gpu][binning]") {
  rmm::mr::pool_memory_resource pool{cuda_memory_resource{}, 0};
  rmm::mr::fixed_size_memory_resource mine{pool, 128 * KiB, 2};
  binning_memory_resource mr{pool};
  CHECK(mr.get_resource_for(100 * KiB) == mr.get_upstream_resource());
  mr.add_bin(128 * KiB, rmm::device_async_resource_ref{mine});
  CHECK(mr.get_resource_for(100 * KiB) == rmm::device_async_resource_ref{mine});
  mr.add_bin(128 * KiB);  // already there: kept
  CHECK(mr.get_resource_for(100 * KiB) == rmm::device_async_resource_ref{mine});
  mr.add_bin(16 * KiB);
  CHECK(mr.get_resource_for(10 * KiB) != rmm::device_async_resource_ref{mine});
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 100 * KiB, 256);
  CHECK(mine.free_blocks() == 1);
  mr.deallocate(stream, p, 100 * KiB, 256);
  CHECK(mine.free_blocks() == 2);
}
