// rmm::device_vector: storage from the current device resource by default or from the resource of
// the given allocator, element operations, copies, moves and swaps.
#include "utilities/test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/equal.h>
#include <thrust/host_vector.h>
#include <thrust/sequence.h>
#include <catch2/catch.hpp>

#include <cstddef>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using rmm::test::counting_resource;

/// The test doubles go in by reference (each outlives its users here): copying one into a
/// cuda::mr::any_resource in a C++20 CUDA translation unit draws nvcc warning #20011 (the copy of
/// its std::shared_ptr member is host code called from CCCL's host-device code), an error here.
template <typename Resource>
rmm::device_async_resource_ref by_ref(Resource& resource) {
  return rmm::device_async_resource_ref{resource};
}

static_assert(std::is_same_v<rmm::device_vector<int>,
                             thrust::device_vector<int, rmm::mr::thrust_allocator<int>>>);
static_assert(
    std::is_same_v<rmm::device_vector<double>::allocator_type, rmm::mr::thrust_allocator<double>>);

}  // namespace

TEST_CASE("device_vector defaults to the current device resource", "[gpu][device_vector]") {
  rmm::device_vector<int> vec(1000, 7);
  CHECK(vec.size() == 1000);
  CHECK(thrust::count(vec.begin(), vec.end(), 7) == 1000);
  CHECK(vec.get_allocator().get_upstream_resource() == rmm::mr::get_current_device_resource_ref());
  CHECK(vec.get_allocator().stream() == rmm::cuda_stream_default);
}

TEST_CASE("device_vector storage comes from the allocator's resource", "[gpu][device_vector]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  {
    rmm::device_vector<int> vec(
        1 << 16, 0, rmm::mr::thrust_allocator<int>{stream.view(), by_ref(counting)});
    CHECK(counting.counts().allocations == 1);
    CHECK(counting.counts().bytes_outstanding == (1 << 16) * sizeof(int));
    CHECK(vec.get_allocator().stream() == stream.view());
    CHECK(vec.get_allocator().get_upstream_resource() == rmm::device_async_resource_ref{counting});

    // Growth reallocates through the same resource and frees the old storage there.
    vec.resize(1 << 18, 1);
    CHECK(counting.counts().allocations >= 2);
    CHECK(counting.counts().bytes_outstanding >= (1 << 18) * sizeof(int));
    CHECK(thrust::count(vec.begin(), vec.end(), 1) == (1 << 18) - (1 << 16));
    vec.clear();
    vec.shrink_to_fit();
    CHECK(counting.counts().bytes_outstanding == 0);
  }
  stream.synchronize();
  CHECK(counting.counts().allocations == counting.counts().deallocations);
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("device_vector element operations", "[gpu][device_vector]") {
  std::vector<int> host(5000);
  std::iota(host.begin(), host.end(), -100);
  rmm::device_vector<int> vec(host.begin(), host.end());
  REQUIRE(vec.size() == host.size());
  CHECK(vec[0] == -100);
  CHECK(vec[4999] == 4899);
  vec[17] = 12345;
  CHECK(vec[17] == 12345);
  vec.push_back(99);
  CHECK(vec.back() == 99);
  CHECK(vec.size() == 5001);

  thrust::host_vector<int> const back = vec;
  CHECK(back[17] == 12345);
  CHECK(back[100] == 0);

  rmm::device_vector<int> empty;
  CHECK(empty.empty());
  empty.assign(3, 8);
  CHECK(thrust::count(empty.begin(), empty.end(), 8) == 3);
}

TEST_CASE("device_vector copies, moves and swaps", "[gpu][device_vector]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  rmm::mr::thrust_allocator<int> const alloc{stream.view(), by_ref(counting)};
  {
    rmm::device_vector<int> original(1000, 0, alloc);
    thrust::sequence(original.begin(), original.end());

    // A copy allocates from the same resource on the same stream (the allocator is copied).
    rmm::device_vector<int> copy{original};
    CHECK(copy.get_allocator().get_upstream_resource() == alloc.get_upstream_resource());
    CHECK(copy.get_allocator().stream() == stream.view());
    CHECK(counting.counts().allocations == 2);
    CHECK(thrust::equal(copy.begin(), copy.end(), original.begin()));

    // A move takes the storage: no allocation.
    rmm::device_vector<int> moved{std::move(copy)};
    CHECK(counting.counts().allocations == 2);
    CHECK(moved.size() == 1000);
    CHECK(moved.get_allocator().get_upstream_resource() == alloc.get_upstream_resource());
    CHECK(thrust::equal(moved.begin(), moved.end(), original.begin()));

    // Swapping vectors of one resource exchanges the storage.
    rmm::device_vector<int> other(10, -1, alloc);
    moved.swap(other);
    CHECK(moved.size() == 10);
    CHECK(other.size() == 1000);
    CHECK(thrust::count(moved.begin(), moved.end(), -1) == 10);

    // Copy assignment keeps the target's allocator and copies the elements.
    rmm::device_vector<int> assigned;
    assigned = original;
    CHECK(assigned.get_allocator().get_upstream_resource() ==
          rmm::mr::get_current_device_resource_ref());
    CHECK(thrust::equal(assigned.begin(), assigned.end(), original.begin()));
  }
  stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("a move-assigned device_vector keeps its own allocator", "[gpu][device_vector]") {
  // As in RMM: thrust_allocator does not propagate on move assignment, so the target keeps its
  // stream and frees the storage it took over on that stream (through the same resource).
  rmm::cuda_stream first_stream;
  rmm::cuda_stream second_stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  {
    rmm::device_vector<int> target(
        10, 1, rmm::mr::thrust_allocator<int>{first_stream.view(), by_ref(counting)});
    rmm::device_vector<int> source(
        100, 2, rmm::mr::thrust_allocator<int>{second_stream.view(), by_ref(counting)});
    target = std::move(source);
    CHECK(target.size() == 100);
    CHECK(thrust::count(target.begin(), target.end(), 2) == 100);
    CHECK(target.get_allocator().stream() == first_stream.view());
    CHECK(counting.counts().allocations == 2);
  }
  first_stream.synchronize();
  second_stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
}
