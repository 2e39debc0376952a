// cuda_async_view_memory_resource: a view of a caller's pool and of the device's default pool,
// null and default-constructed views, equality by pool handle, and statistics through a view.
#include "../utilities/device_kernels.hpp"
#include "../utilities/messages.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using rmm::test::logic_error_message;

using Catch::Matchers::Contains;
using rmm::mr::cuda_async_view_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20;

// A device pool made by the test, destroyed at scope exit.
struct caller_pool {
  caller_pool() {
    cudaMemPoolProps props{};
    props.allocType     = cudaMemAllocationTypePinned;
    props.handleTypes   = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = rmm::get_current_cuda_device().value();
    RMM_CUDA_TRY(cudaMemPoolCreate(&handle, &props));
  }
  caller_pool(caller_pool const&)            = delete;
  caller_pool& operator=(caller_pool const&) = delete;
  ~caller_pool() { RMM_ASSERT_CUDA_SUCCESS(cudaMemPoolDestroy(handle)); }
  cudaMemPool_t handle{};
};

cudaMemPool_t default_pool() {
  cudaMemPool_t pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, rmm::get_current_cuda_device().value()));
  return pool;
}

}  // namespace

TEST_CASE("cuda_async_view: null and default-constructed views", "[gpu][cuda_async_view]") {
  CHECK_THAT(logic_error_message([] { cuda_async_view_memory_resource{cudaMemPool_t{}}; }),
             Contains("cuda_async_view_memory_resource") && Contains("null"));
  cuda_async_view_memory_resource empty;
  CHECK(empty.pool_handle() == nullptr);
  rmm::cuda_stream stream;
  CHECK(empty.allocate(stream, 0, 256) == nullptr);  // size 0 needs no pool
  CHECK_THAT(logic_error_message([&] { static_cast<void>(empty.allocate(stream, 1, 256)); }),
             Contains("has no memory pool"));
  CHECK_THROWS_AS(empty.used_bytes(), rmm::logic_error);
  CHECK_THROWS_AS(empty.set_limit(1), rmm::logic_error);
  empty.deallocate(stream, nullptr, 0, 256);  // nothing to do
  CHECK(empty == cuda_async_view_memory_resource{});
}

TEST_CASE("cuda_async_view: a view of the caller's pool", "[gpu][cuda_async_view]") {
  caller_pool pool;
  {
    cuda_async_view_memory_resource view{pool.handle};
    CHECK(view.pool_handle() == pool.handle);
    auto copy = view;
    CHECK(copy == view);
    cuda_async_view_memory_resource again{pool.handle};
    CHECK(again == view);  // equal: the same pool
    cuda_async_view_memory_resource other{default_pool()};
    CHECK(other != view);

    rmm::cuda_stream stream;
    void* ptr = view.allocate(stream, 8 * MiB, 256);
    REQUIRE(ptr != nullptr);
    stream.synchronize();
    // The memory comes from the caller's pool.
    std::uint64_t used{0};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool.handle, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK(used >= 8 * MiB);
    rmm::test::fill_pattern(ptr, 8 * MiB, 4, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(ptr, 8 * MiB, 4, stream.value()) == 0);
    CHECK(view.used_bytes() >= 8 * MiB);
    // Freed through a copy: copies are interchangeable.
    copy.deallocate(stream, ptr, 8 * MiB, 256);
    stream.synchronize();
    CHECK(view.used_bytes() == 0);

    // Type erasure keeps equality.
    rmm::device_async_resource_ref ref{view};
    CHECK(ref == rmm::device_async_resource_ref{copy});
  }
  // The pool is the caller's: the views are gone and it is still usable.
  void* ptr{nullptr};
  RMM_CUDA_TRY(cudaMallocFromPoolAsync(&ptr, MiB, pool.handle, cudaStream_t{}));
  RMM_CUDA_TRY(cudaFreeAsync(ptr, cudaStream_t{}));
  RMM_CUDA_TRY(cudaStreamSynchronize(cudaStream_t{}));
}

TEST_CASE("cuda_async_view: the device's default pool keeps its attributes",
          "[gpu][cuda_async_view]") {
  cudaMemPool_t const pool = default_pool();
  std::uint64_t before{0};
  RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
  cuda_async_view_memory_resource view{pool};
  std::uint64_t after{0};
  RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &after));
  CHECK(before == after);
  rmm::cuda_stream stream;
  void* ptr = view.allocate(stream, 3 * MiB + 5, 256);
  CHECK(rmm::is_pointer_aligned(ptr, 256));
  rmm::test::fill_pattern(ptr, 3 * MiB + 5, 8, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 3 * MiB + 5, 8, stream.value()) == 0);
  view.deallocate(stream, ptr, 3 * MiB + 5, 256);
  stream.synchronize();
  // A limit set through one view applies to every view of the pool while one holds it.
  view.set_limit(2 * MiB);
  cuda_async_view_memory_resource second{pool};
  CHECK(second.get_limit() == 2 * MiB);
  CHECK_THROWS_AS(second.allocate(stream, 3 * MiB, 256), rmm::out_of_memory);
  view.set_limit(0);
}
