#include "../utilities/test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using Catch::Matchers::Contains;
using rmm::test::counting_resource;

namespace {
// Every test leaves the registry as it found it: the initial cuda_memory_resource.
struct reset_registry_after {
  ~reset_registry_after() { static_cast<void>(rmm::mr::reset_current_device_resource()); }
};
cuda::stream_ref const default_stream{cudaStream_t{}};
}  // namespace

TEST_CASE("the initial resource is a cuda_memory_resource", "[gpu][per_device_resource]") {
  reset_registry_after guard;
  rmm::mr::cuda_memory_resource cuda_mr;
  auto ref = rmm::mr::get_current_device_resource_ref();
  CHECK(ref == rmm::device_async_resource_ref{cuda_mr});
  CHECK(rmm::mr::get_per_device_resource_ref(rmm::cuda_device_id{0}) == ref);
  void* ptr = ref.allocate(default_stream, 1024, 256);
  CHECK(ptr != nullptr);
  ref.deallocate(default_stream, ptr, 1024, 256);
}

TEST_CASE("set returns the previous resource and the registry owns the new one",
          "[gpu][per_device_resource]") {
  reset_registry_after guard;
  counting_resource counter{rmm::mr::cuda_memory_resource{}};
  {
    auto previous = rmm::mr::set_current_device_resource(counter);
    CHECK(previous ==
          cuda::mr::any_resource<cuda::mr::device_accessible>{rmm::mr::cuda_memory_resource{}});
  }
  // The registry holds its own copy (sharing the counters), independent of `counter`'s scope.
  auto ref  = rmm::mr::get_current_device_resource_ref();
  void* ptr = ref.allocate(default_stream, 4096, 256);
  CHECK(counter.counts().allocations == 1);
  ref.deallocate(default_stream, ptr, 4096, 256);
  CHECK(counter.counts().deallocations == 1);

  auto replaced =
      rmm::mr::set_per_device_resource(rmm::cuda_device_id{0}, rmm::mr::managed_memory_resource{});
  CHECK(replaced == cuda::mr::any_resource<cuda::mr::device_accessible>{counter});
  auto reset = rmm::mr::reset_per_device_resource(rmm::cuda_device_id{0});
  CHECK(reset ==
        cuda::mr::any_resource<cuda::mr::device_accessible>{rmm::mr::managed_memory_resource{}});
  rmm::mr::cuda_memory_resource cuda_mr;
  CHECK(rmm::mr::get_current_device_resource_ref() == rmm::device_async_resource_ref{cuda_mr});
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("deprecated _ref setters copy the reference", "[gpu][per_device_resource]") {
  reset_registry_after guard;
  counting_resource counter{rmm::mr::cuda_memory_resource{}};
  rmm::device_async_resource_ref counter_ref{counter};
  static_cast<void>(rmm::mr::set_current_device_resource_ref(counter_ref));
  CHECK(rmm::mr::get_current_device_resource_ref() == counter_ref);
  static_cast<void>(rmm::mr::set_per_device_resource_ref(rmm::cuda_device_id{0}, counter_ref));
  void* ptr = rmm::mr::get_current_device_resource_ref().allocate(default_stream, 256, 256);
  CHECK(counter.counts().allocations == 1);
  rmm::mr::get_current_device_resource_ref().deallocate(default_stream, ptr, 256, 256);
  auto previous = rmm::mr::reset_current_device_resource_ref();
  // A named value, not a temporary: GCC 12 at -O2 reports a false maybe-uninitialized inside
  // CCCL's __basic_any when it compares against an in-situ temporary.
  cuda::mr::any_resource<cuda::mr::device_accessible> const expected{counter_ref};
  CHECK(previous == expected);
  static_cast<void>(rmm::mr::reset_per_device_resource_ref(rmm::cuda_device_id{0}));
  rmm::mr::cuda_memory_resource cuda_mr;
  CHECK(rmm::mr::get_current_device_resource_ref() == rmm::device_async_resource_ref{cuda_mr});
}
#pragma GCC diagnostic pop

TEST_CASE("an out-of-range device id is an out_of_range naming it", "[gpu][per_device_resource]") {
  int const count = rmm::get_num_cuda_devices();
  for (int bad : {-1, count, count + 7}) {
    INFO("device id " << bad);
    rmm::cuda_device_id const id{bad};
    CHECK_THROWS_AS(rmm::mr::get_per_device_resource_ref(id), rmm::out_of_range);
    CHECK_THROWS_WITH(rmm::mr::get_per_device_resource_ref(id),
                      Contains("device id " + std::to_string(bad)) &&
                          Contains(std::to_string(count) + " CUDA device(s)"));
    CHECK_THROWS_AS(rmm::mr::set_per_device_resource(id, rmm::mr::cuda_memory_resource{}),
                    rmm::out_of_range);
    CHECK_THROWS_AS(rmm::mr::reset_per_device_resource(id), rmm::out_of_range);
  }
}

TEST_CASE("concurrent get, set and reset leave a valid registry", "[gpu][per_device_resource]") {
  reset_registry_after guard;
  counting_resource counter{rmm::mr::cuda_memory_resource{}};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      try {
        RMM_CUDA_TRY(cudaSetDevice(0));
        for (int i = 0; i < 200; ++i) {
          switch ((t + i) % 3) {
            case 0:
              static_cast<void>(rmm::mr::set_current_device_resource(counter));
              break;
            case 1:
              static_cast<void>(rmm::mr::reset_current_device_resource());
              break;
            default: {
              // The reference may be replaced concurrently; only its validity is checked, not use.
              auto ref = rmm::mr::get_current_device_resource_ref();
              static_cast<void>(ref);
            }
          }
        }
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  auto ref  = rmm::mr::get_current_device_resource_ref();
  void* ptr = ref.allocate(default_stream, 512, 256);
  CHECK(ptr != nullptr);
  ref.deallocate(default_stream, ptr, 512, 256);
}
