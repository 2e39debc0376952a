// rmm::mr::thrust_allocator: construction defaults, allocation through the given resource on the
// given stream, rebinding, copies and moves, equality, errors, and use by a Thrust container.
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <catch2/catch.hpp>
#include <cuda/memory_resource>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace {

using rmm::mr::thrust_allocator;
using rmm::test::counting_resource;

/// The test doubles go in by reference (each outlives its users here): copying one into a
/// cuda::mr::any_resource in a C++20 CUDA translation unit draws nvcc warning #20011 (the copy of
/// its std::shared_ptr member is host code called from CCCL's host-device code), an error here.
template <typename Resource>
rmm::device_async_resource_ref by_ref(Resource& resource) {
  return rmm::device_async_resource_ref{resource};
}

static_assert(std::is_base_of_v<thrust::device_malloc_allocator<int>, thrust_allocator<int>>);
static_assert(std::is_same_v<thrust_allocator<int>::pointer, thrust::device_ptr<int>>);
static_assert(std::is_same_v<thrust_allocator<int>::size_type, std::size_t>);
static_assert(
    std::is_same_v<thrust_allocator<int>::rebind<double>::other, thrust_allocator<double>>);
static_assert(std::is_same_v<thrust_allocator<int>::Base, thrust::device_malloc_allocator<int>>);
static_assert(cuda::has_property<thrust_allocator<int>, cuda::mr::device_accessible>);
static_assert(std::is_nothrow_move_constructible_v<thrust_allocator<int>>);
static_assert(std::is_nothrow_move_assignable_v<thrust_allocator<int>>);
// The stream-taking constructor is explicit, as in RMM.
static_assert(!std::is_convertible_v<rmm::cuda_stream_view, thrust_allocator<int>>);

}  // namespace

TEST_CASE("default thrust_allocator: current device resource, default stream",
          "[gpu][thrust_allocator]") {
  thrust_allocator<int> const alloc;
  CHECK(alloc.stream() == rmm::cuda_stream_default);
  CHECK(alloc.get_upstream_resource() == rmm::mr::get_current_device_resource_ref());

  rmm::cuda_stream stream;
  thrust_allocator<int> const on_stream{stream.view()};
  CHECK(on_stream.stream() == stream.view());
  CHECK(on_stream.get_upstream_resource() == rmm::mr::get_current_device_resource_ref());
}

TEST_CASE("thrust_allocator allocates from its resource on its stream", "[gpu][thrust_allocator]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  thrust_allocator<std::int32_t> alloc{stream.view(), by_ref(counting)};
  CHECK(alloc.stream() == stream.view());
  CHECK(alloc.get_upstream_resource() == rmm::device_async_resource_ref{counting});

  constexpr std::size_t count          = 1000;
  thrust::device_ptr<std::int32_t> ptr = alloc.allocate(count);
  REQUIRE(ptr.get() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(ptr.get()) % rmm::CUDA_ALLOCATION_ALIGNMENT == 0);
  CHECK(counting.counts().allocations == 1);
  CHECK(counting.counts().bytes_outstanding == count * sizeof(std::int32_t));

  // The memory is device memory: a Thrust algorithm on the allocator's stream can use it.
  thrust::fill(thrust::cuda::par.on(stream.value()), ptr, ptr + count, 42);
  CHECK(thrust::count(thrust::cuda::par.on(stream.value()), ptr, ptr + count, 42) ==
        static_cast<std::ptrdiff_t>(count));

  alloc.deallocate(ptr, count);
  stream.synchronize();
  CHECK(counting.counts().deallocations == 1);
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("thrust_allocator frees with the size and alignment it allocated with",
          "[gpu][thrust_allocator]") {
  rmm::test::verifying_resource verifying{rmm::mr::cuda_memory_resource{}};
  {
    thrust_allocator<double> alloc{rmm::cuda_stream_view{}, by_ref(verifying)};
    auto const first  = alloc.allocate(3);
    auto const second = alloc.allocate(1 << 20);
    alloc.deallocate(first, 3);
    alloc.deallocate(second, 1 << 20);
  }
  CHECK(verifying.failures().empty());
  CHECK(verifying.live_allocations() == 0);
}

TEST_CASE("rebound copies share the resource and the stream", "[gpu][thrust_allocator]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  thrust_allocator<char> const bytes{stream.view(), by_ref(counting)};

  thrust_allocator<double> const doubles{bytes};
  CHECK(doubles.stream() == stream.view());
  CHECK(doubles.get_upstream_resource() == bytes.get_upstream_resource());

  auto ptr = thrust_allocator<double>{doubles}.allocate(10);
  CHECK(counting.counts().allocations == 1);
  CHECK(counting.counts().bytes_outstanding == 10 * sizeof(double));
  // Deallocated through another, equal allocator of another type's rebind.
  thrust_allocator<double>{thrust_allocator<int>{bytes}}.deallocate(ptr, 10);
  stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("thrust_allocator copies, moves and assignments", "[gpu][thrust_allocator]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  thrust_allocator<int> original{stream.view(), by_ref(counting)};

  thrust_allocator<int> copy{original};
  CHECK(copy.get_upstream_resource() == original.get_upstream_resource());
  CHECK(copy.stream() == original.stream());

  thrust_allocator<int> moved{std::move(copy)};
  CHECK(moved.get_upstream_resource() == original.get_upstream_resource());
  CHECK(moved.stream() == stream.view());
  // The moved-from allocator has no resource: allocating through it is a clear error.
  CHECK_THROWS_AS(copy.allocate(1), rmm::logic_error);  // NOLINT(bugprone-use-after-move)

  thrust_allocator<int> assigned;
  CHECK(assigned.stream() == rmm::cuda_stream_default);
  assigned = original;
  CHECK(assigned.get_upstream_resource() == original.get_upstream_resource());
  CHECK(assigned.stream() == stream.view());

  thrust_allocator<int> move_assigned;
  move_assigned = std::move(moved);
  CHECK(move_assigned.get_upstream_resource() == original.get_upstream_resource());
  CHECK(move_assigned.stream() == stream.view());
  // A moved-from allocator can be assigned to again.
  moved    = original;
  auto ptr = moved.allocate(4);
  moved.deallocate(ptr, 4);
  stream.synchronize();
  CHECK(counting.counts().allocations == 1);
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("thrust_allocators all compare equal, as device_malloc_allocators do",
          "[gpu][thrust_allocator]") {
  rmm::cuda_stream first_stream;
  rmm::cuda_stream second_stream;
  counting_resource first{rmm::mr::cuda_memory_resource{}};
  counting_resource second{rmm::mr::cuda_memory_resource{}};

  thrust_allocator<int> const a{first_stream.view(), by_ref(first)};
  thrust_allocator<int> const other_stream{second_stream.view(), by_ref(first)};
  thrust_allocator<int> const other_resource{first_stream.view(), by_ref(second)};

  // RMM's equality: inherited from thrust::device_malloc_allocator, always true.
  CHECK(a == other_stream);
  CHECK(a == other_resource);
  CHECK_FALSE(a != other_resource);
  // What tells them apart is the resource.
  CHECK(a.get_upstream_resource() == other_stream.get_upstream_resource());
  CHECK(a.get_upstream_resource() != other_resource.get_upstream_resource());
}

TEST_CASE("thrust_allocator rejects a count whose size overflows", "[gpu][thrust_allocator]") {
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  thrust_allocator<std::uint64_t> alloc{rmm::cuda_stream_view{}, by_ref(counting)};
  auto const too_many = std::numeric_limits<std::size_t>::max() / sizeof(std::uint64_t) + 1;
  CHECK_THROWS_AS(alloc.allocate(too_many), rmm::bad_alloc);
  CHECK(counting.counts().allocations == 0);
}

TEST_CASE("thrust_allocator as a thrust::device_vector allocator", "[gpu][thrust_allocator]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  {
    thrust::device_vector<int, thrust_allocator<int>> vec(
        4096, 3, thrust_allocator<int>{stream.view(), by_ref(counting)});
    CHECK(counting.counts().bytes_outstanding >= 4096 * sizeof(int));
    CHECK(vec.get_allocator().stream() == stream.view());
    CHECK(thrust::count(vec.begin(), vec.end(), 3) == 4096);
    vec.resize(10000, 5);
    CHECK(thrust::count(vec.begin(), vec.end(), 5) == 10000 - 4096);
  }
  stream.synchronize();
  CHECK(counting.counts().allocations >= 1);
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("thrust_allocator allocates on the device current at its construction",
          "[gpu][thrust_allocator]") {
  if (rmm::get_num_cuda_devices() < 2) {
    WARN("SKIPPED: needs two CUDA devices");
    return;
  }
  rmm::cuda_set_device_raii const on_first{rmm::cuda_device_id{0}};
  // The default resource of device 0, referred to while device 0 is current.
  thrust_allocator<int> alloc{rmm::cuda_stream_view{}, rmm::mr::cuda_memory_resource{}};
  thrust::device_ptr<int> ptr;
  {
    rmm::cuda_set_device_raii const on_second{rmm::cuda_device_id{1}};
    ptr = alloc.allocate(256);
    CHECK(rmm::get_current_cuda_device() == rmm::cuda_device_id{1});
  }
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr.get()));
  CHECK(attributes.device == 0);
  {
    rmm::cuda_set_device_raii const on_second{rmm::cuda_device_id{1}};
    alloc.deallocate(ptr, 256);
  }
  RMM_CUDA_TRY(cudaDeviceSynchronize());
}
