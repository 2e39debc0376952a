// rmm::exec_policy and rmm::exec_policy_nosync: algorithms run on the given stream, their
// temporary storage comes from the given resource (or the current device's), results are right.
#include "utilities/test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/count.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <catch2/catch.hpp>
#include <cuda/memory_resource>

#include <cstddef>
#include <cstdint>
#include <random>
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

static_assert(std::is_base_of_v<rmm::thrust_exec_policy_t, rmm::exec_policy>);
static_assert(std::is_base_of_v<rmm::thrust_exec_policy_nosync_t, rmm::exec_policy_nosync>);
static_assert(std::is_base_of_v<thrust::cuda_cub::execute_on_stream_base<rmm::thrust_exec_policy_t>,
                                rmm::exec_policy>);
// Both constructors are explicit, as in RMM.
static_assert(!std::is_convertible_v<rmm::cuda_stream_view, rmm::exec_policy>);
static_assert(!std::is_convertible_v<rmm::cuda_stream_view, rmm::exec_policy_nosync>);

/// n pseudo-random keys (fixed seed), in a vector from the current device resource.
rmm::device_vector<std::int32_t> random_keys(std::size_t n) {
  std::mt19937 engine{20240611U};
  std::uniform_int_distribution<std::int32_t> dist{-1000000, 1000000};
  std::vector<std::int32_t> host(n);
  for (auto& key : host) {
    key = dist(engine);
  }
  return rmm::device_vector<std::int32_t>(host.begin(), host.end());
}

struct times_three {
  __host__ __device__ std::int64_t operator()(std::int64_t x) const { return 3 * x; }
};

/// Restores the current device resource at scope exit.
class current_resource_guard {
 public:
  explicit current_resource_guard(cuda::mr::any_resource<cuda::mr::device_accessible> resource)
      : previous_{rmm::mr::set_current_device_resource(std::move(resource))} {}
  ~current_resource_guard() { rmm::mr::set_current_device_resource(std::move(previous_)); }
  current_resource_guard(current_resource_guard const&)            = delete;
  current_resource_guard& operator=(current_resource_guard const&) = delete;
  current_resource_guard(current_resource_guard&&)                 = delete;
  current_resource_guard& operator=(current_resource_guard&&)      = delete;

 private:
  cuda::mr::any_resource<cuda::mr::device_accessible> previous_;
};

}  // namespace

TEST_CASE("exec_policy runs on its stream", "[gpu][exec_policy]") {
  rmm::cuda_stream stream;
  rmm::exec_policy const policy{stream.view()};
  CHECK(get_stream(policy) == stream.value());
  rmm::exec_policy_nosync const nosync{stream.view()};
  CHECK(get_stream(nosync) == stream.value());
  rmm::exec_policy const defaulted{};
  CHECK(get_stream(defaulted) == rmm::cuda_stream_default.value());
}

TEST_CASE("sort with exec_policy takes temporary storage from the given resource",
          "[gpu][exec_policy]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  auto keys = random_keys(1 << 20);

  thrust::sort(rmm::exec_policy{stream.view(), by_ref(counting)}, keys.begin(), keys.end());
  // The keys' own storage is from the default resource: every counted allocation is temporary.
  CHECK(counting.counts().allocations > 0);
  CHECK(counting.counts().deallocations == counting.counts().allocations);
  stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(thrust::is_sorted(rmm::exec_policy{stream.view()}, keys.begin(), keys.end()));

  auto const after_ascending = counting.counts().allocations.load();
  thrust::sort(rmm::exec_policy{stream.view(), by_ref(counting)},
               keys.begin(),
               keys.end(),
               thrust::greater<>{});
  CHECK(counting.counts().allocations > after_ascending);
  CHECK(thrust::is_sorted(
      rmm::exec_policy{stream.view()}, keys.begin(), keys.end(), thrust::greater<>{}));
}

TEST_CASE("reduce and transform with exec_policy give the right results", "[gpu][exec_policy]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  constexpr std::int64_t n = 1 << 20;
  rmm::device_vector<std::int64_t> values(
      static_cast<std::size_t>(n), 0, rmm::mr::thrust_allocator<std::int64_t>{stream.view()});
  thrust::sequence(rmm::exec_policy{stream.view(), by_ref(counting)}, values.begin(), values.end());

  auto const sum = thrust::reduce(rmm::exec_policy{stream.view(), by_ref(counting)},
                                  values.begin(),
                                  values.end(),
                                  std::int64_t{0});
  CHECK(sum == n * (n - 1) / 2);
  CHECK(counting.counts().allocations > 0);  // the reduction's temporary storage

  thrust::transform(rmm::exec_policy{stream.view(), by_ref(counting)},
                    values.begin(),
                    values.end(),
                    values.begin(),
                    times_three{});
  CHECK(thrust::reduce(rmm::exec_policy{stream.view(), by_ref(counting)},
                       values.begin(),
                       values.end(),
                       std::int64_t{0}) == 3 * (n * (n - 1) / 2));
  stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
}

TEST_CASE("default exec_policy uses the current device resource", "[gpu][exec_policy]") {
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  auto keys = random_keys(1 << 18);
  {
    current_resource_guard const guard{by_ref(counting)};
    thrust::sort(rmm::exec_policy{}, keys.begin(), keys.end());
    CHECK(counting.counts().allocations > 0);
    // Only the stream given, the resource defaulted.
    rmm::cuda_stream stream;
    auto const before = counting.counts().allocations.load();
    thrust::sort(rmm::exec_policy{stream.view()}, keys.begin(), keys.end(), thrust::greater<>{});
    stream.synchronize();
    CHECK(counting.counts().allocations > before);
  }
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(thrust::is_sorted(keys.begin(), keys.end(), thrust::greater<>{}));
}

TEST_CASE("exec_policy_nosync sorts and reduces on its stream with the given resource",
          "[gpu][exec_policy]") {
  rmm::cuda_stream stream;
  counting_resource counting{rmm::mr::cuda_memory_resource{}};
  auto keys = random_keys(1 << 20);

  thrust::sort(rmm::exec_policy_nosync{stream.view(), by_ref(counting)}, keys.begin(), keys.end());
  // The sort may still be running: synchronise before looking at the keys or the counters.
  stream.synchronize();
  CHECK(counting.counts().allocations > 0);
  CHECK(counting.counts().bytes_outstanding == 0);
  CHECK(thrust::is_sorted(rmm::exec_policy{stream.view()}, keys.begin(), keys.end()));

  rmm::device_vector<std::int64_t> ones(1000, 1);
  thrust::transform(rmm::exec_policy_nosync{stream.view(), by_ref(counting)},
                    ones.begin(),
                    ones.end(),
                    ones.begin(),
                    times_three{});
  // A reduction returns its value to the host, so it waits for it even without the syncs.
  CHECK(thrust::reduce(rmm::exec_policy_nosync{stream.view(), by_ref(counting)},
                       ones.begin(),
                       ones.end(),
                       std::int64_t{0}) == 3000);
  CHECK(thrust::count(rmm::exec_policy_nosync{stream.view()}, ones.begin(), ones.end(), 3) == 1000);
  stream.synchronize();
  CHECK(counting.counts().bytes_outstanding == 0);
}
