// Containers remember their device and free on it (issue 14, item 1): each holds memory of a
// checked pool of device 0 (this suite is built with RMM_CHECK_DEVICE=1, so a free with device 1
// current would abort) and is destroyed, resized, moved or assigned while device 1 is current.
#include "../utilities/device_kernels.hpp"
#include "mgpu_utilities.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <utility>

namespace mgpu = rmm::test::mgpu;

TEST_CASE("multi-GPU: containers free on the device they were made on", "[mgpu][containers]") {
  std::optional<rmm::mr::cuda_async_memory_resource> upstream;
  std::optional<rmm::mr::pool_memory_resource> pool0;
  std::optional<rmm::cuda_stream> stream0;
  {
    rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
    upstream.emplace();
    pool0.emplace(*upstream, 0);
    stream0.emplace();
  }
  rmm::cuda_set_device_raii const on1{rmm::cuda_device_id{1}};
  rmm::cuda_stream stream1;

  SECTION("device_buffer destroyed, resized and move-assigned with device 1 current") {
    std::optional<rmm::device_buffer> made_on_0;
    {
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      made_on_0.emplace(1 << 20, stream0->view(), *pool0);
      rmm::test::fill_pattern(made_on_0->data(), 1 << 20, 61, stream0->value());
    }
    made_on_0->resize(4 << 20, stream0->view());  // reallocates on device 0, copies
    CHECK(mgpu::pointer_device(made_on_0->data()) == 0);
    CHECK(rmm::get_current_cuda_device().value() == 1);
    {
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      CHECK(rmm::test::count_pattern_mismatches(made_on_0->data(), 1 << 20, 61, stream0->value()) ==
            0);
    }
    rmm::device_buffer on_1(1 << 20, stream1.view());  // the registry's resource of device 1
    CHECK(mgpu::pointer_device(on_1.data()) == 1);
    on_1 = std::move(*made_on_0);  // frees device 1's memory on device 1, takes device 0's
    CHECK(mgpu::pointer_device(on_1.data()) == 0);
    made_on_0.reset();
    on_1.shrink_to_fit(stream0->view());
    on_1 = rmm::device_buffer{};  // frees device 0's memory with device 1 current
    CHECK(rmm::get_current_cuda_device().value() == 1);
  }
  SECTION("device_uvector and device_scalar") {
    std::optional<rmm::device_uvector<int>> vector;
    std::optional<rmm::device_scalar<int>> scalar;
    {
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      vector.emplace(1000, stream0->view(), *pool0);
      scalar.emplace(7, stream0->view(), *pool0);
    }
    vector->resize(100000, stream0->view());  // reallocates on device 0
    CHECK(mgpu::pointer_device(vector->data()) == 0);
    {
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      CHECK(scalar->value(stream0->view()) == 7);
    }
    vector.reset();
    scalar.reset();
    CHECK(rmm::get_current_cuda_device().value() == 1);
  }
  {
    rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
    stream0->synchronize();
    pool0.reset();
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    CHECK(upstream->used_bytes() == 0);  // every container gave its memory back to device 0
    stream0.reset();
    upstream.reset();
  }
}
