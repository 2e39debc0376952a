// rmm::device_scalar: the value round trips through the device (initial value, set_value_async,
// set_value_to_zero_async, copies, moves), the storage is one aligned element from the resource
// given, and it is freed on the stream set last with nothing leaked.
#include "utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>

// The streams are passed as cuda_stream_view: with an rmm::cuda_stream argument, overload
// resolution of device_scalar(value, stream) also weighs device_scalar(cuda_stream_view, mr) (the
// value converts to cuda_stream_view through its deleted int constructor) and asks CCCL 3.5
// whether the non-copyable cuda_stream converts to the any_resource parameter, which CCCL answers
// with a hard error instead of "no". docs/containers.md describes this.

namespace {

using rmm::device_scalar;
using rmm::mr::cuda_memory_resource;
using rmm::test::counting_resource;
using rmm::test::verifying_resource;

struct point {
  double x;
  double y;
  std::int32_t tag;
};

}  // namespace

TEST_CASE("device_scalar: the value round trips", "[gpu][device_scalar]") {
  rmm::cuda_stream owner;
  rmm::cuda_stream_view const stream{owner};
  int const initial = 42;
  device_scalar<int> scalar(initial, stream);
  CHECK(scalar.value(stream) == 42);
  CHECK(scalar.size() == 1);
  CHECK(scalar.data() != nullptr);
  CHECK(scalar.stream() == stream);

  int const next = -17;
  scalar.set_value_async(next, stream);
  CHECK(scalar.value(stream) == -17);
  scalar.set_value_to_zero_async(stream);
  CHECK(scalar.value(stream) == 0);

  int host          = 0;
  int const written = 99;
  scalar.set_value_async(written, stream);
  RMM_CUDA_TRY(
      cudaMemcpyAsync(&host, scalar.data(), sizeof(int), cudaMemcpyDeviceToHost, stream.value()));
  stream.synchronize();
  CHECK(host == 99);

  device_scalar<point> pt(stream);
  point const p{1.5, -2.25, 7};
  pt.set_value_async(p, stream);
  auto const back = pt.value(stream);
  CHECK(back.x == 1.5);
  CHECK(back.y == -2.25);
  CHECK(back.tag == 7);
}

TEST_CASE("device_scalar: copies and moves", "[gpu][device_scalar]") {
  rmm::cuda_stream owner;
  rmm::cuda_stream_view const stream{owner};
  std::int64_t const initial = 123456789012345;
  device_scalar<std::int64_t> original(initial, stream);
  device_scalar<std::int64_t> copy(original, stream);
  CHECK(copy.data() != original.data());
  CHECK(copy.value(stream) == initial);
  std::int64_t const changed = 5;
  original.set_value_async(changed, stream);
  CHECK(copy.value(stream) == initial);  // a deep copy

  auto const* ptr = original.data();
  device_scalar<std::int64_t> moved(std::move(original));
  CHECK(moved.data() == ptr);
  CHECK(moved.value(stream) == 5);
  copy = std::move(moved);
  CHECK(copy.data() == ptr);
  CHECK(copy.value(stream) == 5);
}

TEST_CASE("device_scalar: storage, resource and deallocation stream", "[gpu][device_scalar]") {
  rmm::cuda_stream owner;
  rmm::cuda_stream other_owner;
  rmm::cuda_stream_view const stream{owner};
  rmm::cuda_stream_view const other{other_owner};
  verifying_resource verifier{cuda_memory_resource{}};
  counting_resource counter{verifier};
  {
    device_scalar<double> scalar(stream, counter);
    CHECK(counter.counts().allocations == 1);
    CHECK(counter.counts().bytes_outstanding == sizeof(double));
    CHECK(rmm::is_pointer_aligned(scalar.data()));
    CHECK(scalar.memory_resource() == rmm::device_async_resource_ref{counter});
    scalar.set_stream(other);
    CHECK(scalar.stream() == other);
  }
  CHECK(counter.counts().deallocations == 1);
  CHECK(counter.counts().bytes_outstanding == 0);
  CHECK(verifier.failures().empty());
  CHECK(verifier.live_allocations() == 0);

  device_scalar<int> by_default(stream);
  CHECK(by_default.memory_resource() == rmm::mr::get_current_device_resource_ref());
}

TEST_CASE("device_scalar: a pool passed by value is kept alive", "[gpu][device_scalar]") {
  rmm::cuda_stream owner;
  rmm::cuda_stream_view const stream{owner};
  counting_resource upstream{cuda_memory_resource{}};
  {
    float const initial = 2.5F;
    auto scalar         = [&] {
      rmm::mr::pool_memory_resource pool{upstream, 1U << 20U};
      return device_scalar<float>(initial, stream, pool);
    }();
    CHECK(scalar.value(stream) == 2.5F);
    CHECK(upstream.counts().bytes_outstanding > 0);
  }
  CHECK(upstream.counts().bytes_outstanding == 0);
}
