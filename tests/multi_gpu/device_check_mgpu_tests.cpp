// Per-device correctness (issue 14, item 1): a resource serves the device current at its
// construction. This suite is built with RMM_CHECK_DEVICE=1, so a call while another device is
// current, or on another device's stream, throws rmm::logic_error naming both devices (allocate)
// or aborts with that message (deallocate, in a child process); destruction switches to the
// resource's device by itself.
#include "mgpu_resources.hpp"
#include "mgpu_utilities.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <optional>
#include <string>

using Catch::Matchers::Contains;
namespace mgpu = rmm::test::mgpu;

static_assert(RMM_CHECK_DEVICE == 1, "the multi-GPU suite is built with the device checks");

TEST_CASE("multi-GPU: allocate on another device throws logic_error naming both devices",
          "[mgpu][device_check]") {
  for (auto const& f : mgpu::device_resources()) {
    DYNAMIC_SECTION(f.name) {
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      auto mr = f.make();
      rmm::cuda_stream stream0;
      std::optional<rmm::cuda_stream> stream1;
      {
        rmm::cuda_set_device_raii const on1{rmm::cuda_device_id{1}};
        stream1.emplace();
        // Device 1 current, the legacy default stream (which follows the current device).
        CHECK_THROWS_MATCHES(mr.allocate(rmm::cuda_stream_default, 4096, 256),
                             rmm::logic_error,
                             Catch::Matchers::Predicate<rmm::logic_error>([&](auto const& e) {
                               std::string const what = e.what();
                               return what.find(f.name + "::allocate") != std::string::npos &&
                                      what.find("made on device 0") != std::string::npos &&
                                      what.find("device 1 is current") != std::string::npos;
                             }));
        // Device 1 current, a stream of device 0.
        CHECK_THROWS_AS(mr.allocate(stream0.view(), 4096, 256), rmm::logic_error);
        CHECK(rmm::get_current_cuda_device().value() == 1);  // the check switches nothing
      }
      // Device 0 current, a stream of device 1.
      CHECK_THROWS_WITH(mr.allocate(stream1->view(), 4096, 256),
                        Contains("belongs to device 1") && Contains("made on device 0"));
      // The right device and stream: served, and the memory is device 0's.
      void* p = mr.allocate(stream0.view(), 4096, 256);
      CHECK(mgpu::pointer_device(p) == 0);
      mr.deallocate(stream0.view(), p, 4096, 256);
      stream0.synchronize();
    }
  }
}

TEST_CASE("multi-GPU: deallocate on another device aborts with the message",
          "[mgpu][device_check]") {
  for (auto const& f : mgpu::device_resources()) {
    DYNAMIC_SECTION(f.name) {
      auto const r = mgpu::run_child({"free-on-other-device", f.name});
      INFO("child stderr: " << r.err);
      REQUIRE(r.spawned);
      CHECK_FALSE(r.exited);
      CHECK(r.signal == SIGABRT);
      CHECK_THAT(r.err,
                 Contains("rmm: fatal: rmm::mr::" + f.name + "::deallocate") &&
                     Contains("made on device 0, but device 1 is current"));
    }
  }
}

TEST_CASE("multi-GPU: a resource is destroyed on its own device whichever is current",
          "[mgpu][device_check]") {
  // Each suballocator over a checked upstream of device 1 (cuda_async_memory_resource): its
  // teardown gives its memory back through that upstream, which would abort were the teardown
  // made on device 0. The caller's device is restored.
  for (auto const& f : mgpu::device_resources()) {
    if (f.name == "cuda_async_memory_resource" || f.name == "virtual_memory_resource" ||
        f.name == "block_memory_pool_resource") {
      continue;  // no upstream
    }
    DYNAMIC_SECTION(f.name) {
      std::optional<rmm::mr::cuda_async_memory_resource> upstream;
      std::optional<mgpu::any_device_resource> mr;
      {
        rmm::cuda_set_device_raii const on1{rmm::cuda_device_id{1}};
        upstream.emplace();
        if (f.name == "pool_memory_resource") {
          mr.emplace(rmm::mr::pool_memory_resource{*upstream, 0});
        } else if (f.name == "arena_memory_resource") {
          mr.emplace(rmm::mr::arena_memory_resource{*upstream, 256 * mgpu::MiB});
        } else if (f.name == "binning_memory_resource") {
          mr.emplace(rmm::mr::binning_memory_resource{
              rmm::mr::pool_memory_resource{*upstream, 0}, std::int8_t{10}, std::int8_t{20}});
        } else {
          mr.emplace(rmm::mr::fixed_size_memory_resource{*upstream, 1 * mgpu::MiB, 16});
        }
        rmm::cuda_stream stream;
        void* p = mr->allocate(stream.view(), 1024, 256);
        mr->deallocate(stream.view(), p, 1024, 256);
        stream.synchronize();
        CHECK(upstream->used_bytes() > 0);
      }
      rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
      mr.reset();  // device 0 current: the teardown runs on device 1
      CHECK(rmm::get_current_cuda_device().value() == 0);
      {
        rmm::cuda_set_device_raii const on1{rmm::cuda_device_id{1}};
        RMM_CUDA_TRY(cudaDeviceSynchronize());
        CHECK(upstream->used_bytes() == 0);  // everything given back
        upstream.reset();
      }
    }
  }
}
