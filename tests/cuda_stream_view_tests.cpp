// Handle-level behaviour of cuda_stream_view; needs no GPU (no stream is used).
#include <rmm/cuda_stream_view.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <type_traits>

TEST_CASE("cuda_stream_view is a cheap value type", "[cuda_stream_view]") {
  STATIC_REQUIRE(std::is_trivially_copyable_v<rmm::cuda_stream_view>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<rmm::cuda_stream_view, int>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<rmm::cuda_stream_view, std::nullptr_t>);
  STATIC_REQUIRE(std::is_convertible_v<cudaStream_t, rmm::cuda_stream_view>);
  STATIC_REQUIRE(std::is_convertible_v<rmm::cuda_stream_view, cuda::stream_ref>);
  STATIC_REQUIRE(std::is_convertible_v<cuda::stream_ref, rmm::cuda_stream_view>);
}

TEST_CASE("default, legacy and per-thread streams are told apart", "[cuda_stream_view]") {
  CHECK(rmm::cuda_stream_default.value() == cudaStream_t{});
  CHECK(rmm::cuda_stream_legacy.is_default());
  CHECK_FALSE(rmm::cuda_stream_legacy.is_per_thread_default());
  CHECK(rmm::cuda_stream_per_thread.is_per_thread_default());
  CHECK_FALSE(rmm::cuda_stream_per_thread.is_default());
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  CHECK(rmm::cuda_stream_default.is_per_thread_default());
  CHECK_FALSE(rmm::cuda_stream_default.is_default());
#else
  CHECK(rmm::cuda_stream_default.is_default());
  CHECK_FALSE(rmm::cuda_stream_default.is_per_thread_default());
#endif
  // An arbitrary (non-default) handle is neither.
  auto const other = rmm::cuda_stream_view{reinterpret_cast<cudaStream_t>(0x1000)};
  CHECK_FALSE(other.is_default());
  CHECK_FALSE(other.is_per_thread_default());
}

TEST_CASE("conversions to and from cuda::stream_ref keep the handle", "[cuda_stream_view]") {
  auto const handle = reinterpret_cast<cudaStream_t>(0x1234);
  rmm::cuda_stream_view const view{handle};
  cuda::stream_ref const ref = view;
  CHECK(ref.get() == handle);
  rmm::cuda_stream_view const back = ref;
  CHECK(back == view);
  CHECK(back != rmm::cuda_stream_default);
  cudaStream_t const raw = view;
  CHECK(raw == handle);
  std::ostringstream out;
  out << view;
  CHECK(out.str() == "0x1234");
}
