// rmm::device_uvector: sizes, element access and its bounds, contents through the host after
// copies and reallocations, capacity rules, release(), moves, spans and reverse iterators, the
// resource it reports and the stream it frees on, and exact allocation accounting.
#include "utilities/messages.hpp"
#include "utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>
#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::device_uvector;
using rmm::mr::cuda_memory_resource;
using rmm::test::counting_resource;
using rmm::test::verifying_resource;

/// Element counts: empty, one, odd and large (12 MiB of int).
std::vector<std::size_t> const sizes{0, 1, 7, 1001, 3U << 20U};

/// 0, 1, 2, ... as int, @p n of them.
std::vector<int> iota(std::size_t n, int first = 0) {
  std::vector<int> host(n);
  std::iota(host.begin(), host.end(), first);
  return host;
}

/// Uploads @p host into a new vector on @p stream.
device_uvector<int> upload(std::vector<int> const& host,
                           rmm::cuda_stream_view stream,
                           cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                               rmm::mr::get_current_device_resource_ref()) {
  device_uvector<int> vec(host.size(), stream, std::move(mr));
  if (!host.empty()) {
    RMM_CUDA_TRY(cudaMemcpyAsync(vec.data(),
                                 host.data(),
                                 host.size() * sizeof(int),
                                 cudaMemcpyHostToDevice,
                                 stream.value()));
  }
  stream.synchronize();
  return vec;
}

/// The first @p n elements of @p vec, after @p stream has finished.
std::vector<int> download(device_uvector<int> const& vec,
                          std::size_t n,
                          rmm::cuda_stream_view stream) {
  stream.synchronize();
  std::vector<int> host(n);
  if (n > 0) {
    RMM_CUDA_TRY(cudaMemcpy(host.data(), vec.data(), n * sizeof(int), cudaMemcpyDeviceToHost));
  }
  return host;
}

struct alignas(16) triple {
  std::int32_t a;
  std::int64_t b;
  char c;
};

}  // namespace

TEST_CASE("device_uvector: sizes 0, 1, odd and large", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  for (auto const size : sizes) {
    INFO("size " << size);
    {
      device_uvector<int> vec(size, stream, counter);
      CHECK(vec.size() == size);
      CHECK(vec.ssize() == static_cast<std::int64_t>(size));
      CHECK(vec.capacity() == size);
      CHECK(vec.is_empty() == (size == 0));
      CHECK(static_cast<std::size_t>(vec.end() - vec.begin()) == size);
      CHECK(vec.cbegin() == vec.begin());
      CHECK(vec.stream() == stream.view());
      CHECK(counter.counts().bytes_outstanding == size * sizeof(int));
      if (size > 0) {
        CHECK(rmm::is_pointer_aligned(vec.data()));
        auto const host = iota(size, 3);
        auto const vec2 = upload(host, stream, counter);
        CHECK(download(vec2, size, stream) == host);
      } else {
        CHECK(vec.data() == nullptr);
      }
    }
    CHECK(counter.counts().bytes_outstanding == 0);
  }
}

TEST_CASE("device_uvector: element access", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  auto vec = upload(iota(100), stream);
  CHECK(vec.element(0, stream) == 0);
  CHECK(vec.element(42, stream) == 42);
  CHECK(vec.front_element(stream) == 0);
  CHECK(vec.back_element(stream) == 99);

  int const value = -7;
  vec.set_element(5, value, stream);
  CHECK(vec.element(5, stream) == -7);
  int const async_value = 1234;
  vec.set_element_async(99, async_value, stream);
  CHECK(vec.back_element(stream) == 1234);  // synchronises before async_value goes away
  vec.set_element_to_zero_async(0, stream);
  CHECK(vec.front_element(stream) == 0);
  vec.set_element_to_zero_async(42, stream);
  CHECK(vec.element(42, stream) == 0);
  CHECK(vec.element_ptr(10) == vec.data() + 10);

  device_uvector<triple> structs(3, stream);
  triple const t{1, -2, 'x'};
  structs.set_element(2, t, stream);
  auto const back = structs.back_element(stream);
  CHECK(back.a == 1);
  CHECK(back.b == -2);
  CHECK(back.c == 'x');
  CHECK(rmm::is_pointer_aligned(structs.data(), alignof(triple)));
}

TEST_CASE("device_uvector: out-of-range access is an out_of_range naming index and size",
          "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  device_uvector<int> vec(10, stream);
  int const value = 1;
  CHECK_THROWS_AS(vec.element(10, stream), rmm::out_of_range);
  CHECK_THROWS_WITH(vec.element(10, stream), Contains("index 10") && Contains("size 10"));
  CHECK_THROWS_AS(vec.set_element(11, value, stream), rmm::out_of_range);
  CHECK_THROWS_AS(vec.set_element_async(10, value, stream), rmm::out_of_range);
  CHECK_THROWS_AS(vec.set_element_to_zero_async(10, stream), rmm::out_of_range);
  device_uvector<int> empty(0, stream);
  CHECK_THROWS_AS(empty.front_element(stream), rmm::out_of_range);
  CHECK_THROWS_AS(empty.back_element(stream), rmm::out_of_range);
  CHECK_THROWS_AS(empty.element(0, stream), rmm::out_of_range);
}

TEST_CASE("device_uvector: copies and reallocations keep the contents", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  auto const host = iota(1001, 5);
  auto vec        = upload(host, stream, counter);

  SECTION("copy constructor") {
    vec.reserve(2000, stream);
    device_uvector<int> copy(vec, stream, counter);
    CHECK(copy.size() == 1001);
    CHECK(copy.capacity() == 1001);
    CHECK(copy.data() != vec.data());
    CHECK(download(copy, 1001, stream) == host);
  }
  SECTION("resize growth reallocates exactly") {
    vec.resize(5000, stream);
    CHECK(vec.size() == 5000);
    CHECK(vec.capacity() == 5000);
    CHECK(counter.counts().bytes_outstanding == 5000 * sizeof(int));
    CHECK(download(vec, 1001, stream) == host);
  }
  SECTION("resize within the capacity, then shrink_to_fit") {
    vec.resize(10, stream);
    CHECK(vec.size() == 10);
    CHECK(vec.capacity() == 1001);
    vec.shrink_to_fit(stream);
    CHECK(vec.capacity() == 10);
    CHECK(counter.counts().bytes_outstanding == 10 * sizeof(int));
    CHECK(download(vec, 10, stream) == iota(10, 5));
  }
  SECTION("reserve changes the capacity only") {
    vec.reserve(10, stream);
    CHECK(vec.capacity() == 1001);
    vec.reserve(3000, stream);
    CHECK(vec.size() == 1001);
    CHECK(vec.capacity() == 3000);
    CHECK(download(vec, 1001, stream) == host);
  }
}

TEST_CASE("device_uvector: release() hands over the storage", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  auto const host       = iota(77);
  auto vec              = upload(host, stream, counter);
  void const* const ptr = vec.data();
  {
    rmm::device_buffer buf = vec.release();
    CHECK(buf.data() == ptr);
    CHECK(buf.size() == 77 * sizeof(int));
    CHECK(buf.memory_resource() == rmm::device_async_resource_ref{counter});
    CHECK(vec.is_empty());
    CHECK(vec.data() == nullptr);
    CHECK(vec.capacity() == 0);
    CHECK(counter.counts().deallocations == 0);
  }
  CHECK(counter.counts().deallocations == 1);
  CHECK(counter.counts().bytes_outstanding == 0);
}

TEST_CASE("device_uvector: moves leave the source empty", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  auto const host = iota(33);
  auto source     = upload(host, stream);
  int const* ptr  = source.data();
  device_uvector<int> moved(std::move(source));
  CHECK(moved.data() == ptr);
  CHECK(source.is_empty());  // NOLINT(bugprone-use-after-move): the documented state
  CHECK(source.data() == nullptr);
  device_uvector<int> target(5, stream);
  target = std::move(moved);
  CHECK(target.data() == ptr);
  CHECK(download(target, 33, stream) == host);
}

TEST_CASE("device_uvector: spans and iterators", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  device_uvector<int> vec(12, stream);
  cuda::std::span<int> span = vec;
  CHECK(span.data() == vec.data());
  CHECK(span.size() == 12);
  auto const& cvec                 = vec;
  cuda::std::span<int const> cspan = cvec;
  CHECK(cspan.data() == vec.data());
  CHECK(cspan.size() == 12);
  CHECK(vec.rbegin().base() == vec.end());
  CHECK(vec.rend().base() == vec.begin());
  CHECK(cvec.crbegin().base() == cvec.cend());
  CHECK(cvec.crend().base() == cvec.cbegin());
  CHECK(static_cast<std::size_t>(vec.rend() - vec.rbegin()) == vec.size());
}

TEST_CASE("device_uvector: the resource and the deallocation stream", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  rmm::cuda_stream other;
  verifying_resource verifier{cuda_memory_resource{}};
  device_uvector<int> by_default(3, stream);
  CHECK(by_default.memory_resource() == rmm::mr::get_current_device_resource_ref());
  {
    device_uvector<double> vec(1000, stream, verifier);
    CHECK(vec.memory_resource() == rmm::device_async_resource_ref{verifier});
    vec.set_stream(other);
    CHECK(vec.stream() == other.view());
    vec.resize(3000, stream);  // a reallocation takes the stream it is given
    CHECK(vec.stream() == stream.view());
    vec.set_stream(other);
  }
  CHECK(verifier.failures().empty());
  CHECK(verifier.live_allocations() == 0);
}

TEST_CASE("device_uvector: a pool passed by value is kept alive", "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  counting_resource upstream{cuda_memory_resource{}};
  auto const host = iota(1000);
  std::vector<int> read_back;
  {
    device_uvector<int> vec(0, stream);
    {
      rmm::mr::pool_memory_resource pool{upstream, 1U << 20U};
      vec = upload(host, stream, pool);
    }
    read_back = download(vec, host.size(), stream);
    CHECK(upstream.counts().bytes_outstanding > 0);
  }
  CHECK(read_back == host);
  CHECK(upstream.counts().bytes_outstanding == 0);
}

TEST_CASE("device_uvector: size overflow is a bad_alloc naming the count",
          "[gpu][device_uvector]") {
  rmm::cuda_stream stream;
  auto const too_many = std::numeric_limits<std::size_t>::max() / sizeof(int) + 1;
  CHECK_THROWS_AS(device_uvector<int>(too_many, stream), rmm::bad_alloc);
  CHECK_THROWS_WITH(device_uvector<int>(too_many, stream), Contains(std::to_string(too_many)));
}
