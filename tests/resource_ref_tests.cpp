#include "utilities/test_resources.hpp"

#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <type_traits>

using Catch::Matchers::Contains;

TEST_CASE("the six resource_ref aliases name the CCCL types", "[resource_ref]") {
  namespace mr = cuda::mr;
  STATIC_REQUIRE(std::is_same_v<rmm::device_resource_ref,
                                mr::synchronous_resource_ref<mr::device_accessible>>);
  STATIC_REQUIRE(
      std::is_same_v<rmm::device_async_resource_ref, mr::resource_ref<mr::device_accessible>>);
  STATIC_REQUIRE(
      std::is_same_v<rmm::host_resource_ref, mr::synchronous_resource_ref<mr::host_accessible>>);
  STATIC_REQUIRE(
      std::is_same_v<rmm::host_async_resource_ref, mr::resource_ref<mr::host_accessible>>);
  STATIC_REQUIRE(
      std::is_same_v<rmm::host_device_resource_ref,
                     mr::synchronous_resource_ref<mr::host_accessible, mr::device_accessible>>);
  STATIC_REQUIRE(std::is_same_v<rmm::host_device_async_resource_ref,
                                mr::resource_ref<mr::host_accessible, mr::device_accessible>>);
}

TEST_CASE("to_device_async_resource_ref_checked", "[resource_ref]") {
  rmm::test::host_backed_resource resource;
  auto ref  = rmm::to_device_async_resource_ref_checked(&resource);
  void* ptr = ref.allocate(cuda::stream_ref{cudaStream_t{}}, 512, 256);
  CHECK(ptr != nullptr);
  ref.deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, 512, 256);
  CHECK(ref == rmm::device_async_resource_ref{resource});

  rmm::test::host_backed_resource* null_resource = nullptr;
  CHECK_THROWS_AS(rmm::to_device_async_resource_ref_checked(null_resource), rmm::logic_error);
  CHECK_THROWS_AS(rmm::to_device_async_resource_ref_checked(null_resource), std::logic_error);
  CHECK_THROWS_WITH(rmm::to_device_async_resource_ref_checked(null_resource), Contains("null"));
}

namespace {
struct not_an_adaptor : rmm::test::host_backed_resource {};
struct an_adaptor : rmm::test::host_backed_resource {
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept {
    return rmm::device_async_resource_ref{upstream};
  }
  mutable rmm::test::host_backed_resource upstream;
};
}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("is_resource_adaptor detects get_upstream_resource", "[resource_ref]") {
  STATIC_REQUIRE(rmm::is_resource_adaptor<an_adaptor>);
  STATIC_REQUIRE_FALSE(rmm::is_resource_adaptor<not_an_adaptor>);
  STATIC_REQUIRE_FALSE(rmm::is_resource_adaptor<int>);
}
#pragma GCC diagnostic pop
