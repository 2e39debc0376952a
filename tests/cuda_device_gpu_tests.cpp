#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <type_traits>
#include <utility>

TEST_CASE("device queries", "[gpu][cuda_device]") {
  CHECK(rmm::get_num_cuda_devices() >= 1);
  CHECK(rmm::get_current_cuda_device() == rmm::cuda_device_id{0});
  auto const [free, total] = rmm::available_device_memory();
  CHECK(free > 0);
  CHECK(free <= total);
  auto const half = rmm::percent_of_free_device_memory(50);
  CHECK(rmm::is_aligned(half, rmm::CUDA_ALLOCATION_ALIGNMENT));
  CHECK(half <= free / 2 + rmm::CUDA_ALLOCATION_ALIGNMENT);
  CHECK(half >= free / 2 - (free / 100) - rmm::CUDA_ALLOCATION_ALIGNMENT);  // free moves a little
  CHECK(rmm::percent_of_free_device_memory(0) == 0);
  CHECK_THROWS_AS(rmm::percent_of_free_device_memory(101), rmm::out_of_range);
  CHECK_THROWS_WITH(rmm::percent_of_free_device_memory(-3), Catch::Matchers::Contains("-3"));
}

TEST_CASE("cuda_set_device_raii restores the device", "[gpu][cuda_device][expected_api_errors]") {
  auto const before = rmm::get_current_cuda_device();
  {
    rmm::cuda_set_device_raii raii{rmm::cuda_device_id{rmm::get_num_cuda_devices() - 1}};
    CHECK(rmm::get_current_cuda_device().value() == rmm::get_num_cuda_devices() - 1);
  }
  CHECK(rmm::get_current_cuda_device() == before);
  CHECK_THROWS_AS(rmm::cuda_set_device_raii{rmm::cuda_device_id{rmm::get_num_cuda_devices()}},
                  rmm::cuda_error);
  CHECK(rmm::get_current_cuda_device() == before);
}

TEST_CASE("cuda_stream owns, moves and synchronises a stream", "[gpu][cuda_stream]") {
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<rmm::cuda_stream>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<rmm::cuda_stream>);
  rmm::cuda_stream a;
  REQUIRE(a.is_valid());
  CHECK_FALSE(a.view().is_default());
  CHECK_FALSE(a.view().is_per_thread_default());
  cudaStream_t const handle = a.value();
  rmm::cuda_stream b{std::move(a)};
  CHECK_FALSE(a.is_valid());  // NOLINT(bugprone-use-after-move): documented moved-from state
  CHECK_THROWS_AS(a.value(), rmm::logic_error);
  CHECK(b.value() == handle);
  CHECK_NOTHROW(b.synchronize());
  unsigned int flags = 0;
  RMM_CUDA_TRY(cudaStreamGetFlags(b.value(), &flags));
  CHECK(flags == cudaStreamDefault);
  rmm::cuda_stream nb{rmm::cuda_stream::flags::non_blocking};
  RMM_CUDA_TRY(cudaStreamGetFlags(nb.value(), &flags));
  CHECK(flags == cudaStreamNonBlocking);
  b = std::move(nb);
  CHECK(b.is_valid());
  cuda::stream_ref ref = b;
  CHECK(ref.get() == b.value());
  CHECK_NOTHROW(rmm::cuda_stream_view{b}.synchronize());
  CHECK_NOTHROW(rmm::cuda_stream_default.synchronize());
  CHECK_NOTHROW(rmm::cuda_stream_per_thread.synchronize());
}

TEST_CASE("real CUDA failures map to typed errors and clear the error slot",
          "[gpu][error][expected_api_errors]") {
  void* ptr{nullptr};
  auto const total = rmm::available_device_memory().second;
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY_ALLOC(cudaMalloc(&ptr, total * 2), total * 2); }(),
                  rmm::out_of_memory);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK_THROWS_WITH([&] { RMM_CUDA_TRY_ALLOC(cudaMalloc(&ptr, total * 2), total * 2); }(),
                    Catch::Matchers::Contains("device 0") &&
                        Catch::Matchers::Contains(std::to_string(total * 2)) &&
                        Catch::Matchers::Contains("device free"));
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY(cudaSetDevice(-5)); }(), rmm::cuda_error);
  CHECK(cudaGetLastError() == cudaSuccess);
}
