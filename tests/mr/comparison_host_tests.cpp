// What compares equal, checked where no GPU is needed: every comparison is a hidden friend taking
// the same type on both sides (unambiguous under C++20's rewritten candidates), and the answers
// are those documented. The Debug preset builds this file as C++20 with clang++, whose
// -Wambiguous-reversed-operator (an error under -Werror) caught the old member operators.
#include "../utilities/test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/detail/mechanics/on_device_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/unbounded_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <type_traits>

#if __cplusplus >= 202002L
#include <concepts>
#endif

namespace {

// Both orders, both operators, through const references (what cuda::mr's concepts use).
template <typename A, typename B>
void check_equal(A const& a, B const& b, bool expected) {
  CHECK((a == b) == expected);
  CHECK((b == a) == expected);
  CHECK((a != b) == !expected);
  CHECK((b != a) == !expected);
}

template <typename T>
constexpr bool comparable_in_cxx20() {
#if __cplusplus >= 202002L
  return std::equality_comparable<T>;
#else
  return true;
#endif
}

}  // namespace

TEST_CASE("stateless CUDA resources: all instances are equal", "[comparison]") {
  check_equal(rmm::mr::cuda_memory_resource{}, rmm::mr::cuda_memory_resource{}, true);
  check_equal(rmm::mr::managed_memory_resource{}, rmm::mr::managed_memory_resource{}, true);
  check_equal(rmm::mr::pinned_host_memory_resource{}, rmm::mr::pinned_host_memory_resource{}, true);
  STATIC_REQUIRE(comparable_in_cxx20<rmm::mr::cuda_memory_resource>());
  STATIC_REQUIRE(comparable_in_cxx20<rmm::mr::managed_memory_resource>());
  STATIC_REQUIRE(comparable_in_cxx20<rmm::mr::pinned_host_memory_resource>());
}

TEST_CASE("unbounded_memory_resource: equal when the storage is", "[comparison]") {
  using rmm::mr::storage_type;
  using rmm::mr::unbounded_memory_resource;
  unbounded_memory_resource const device{storage_type::device};
  check_equal(device, unbounded_memory_resource{storage_type::device}, true);
  check_equal(device, unbounded_memory_resource{storage_type::pinned_host}, false);
  STATIC_REQUIRE(comparable_in_cxx20<unbounded_memory_resource>());
}

TEST_CASE("cuda_async_view_memory_resource: views of no pool are equal", "[comparison]") {
  rmm::mr::cuda_async_view_memory_resource const none;
  check_equal(none, rmm::mr::cuda_async_view_memory_resource{}, true);
  STATIC_REQUIRE(comparable_in_cxx20<rmm::mr::cuda_async_view_memory_resource>());
}

TEST_CASE("on_device_resource: equal when the device and the upstream are", "[comparison]") {
  using on_device = rmm::mr::detail::on_device_resource<rmm::mr::cuda_memory_resource>;
  on_device const zero{rmm::mr::cuda_memory_resource{}, rmm::cuda_device_id{0}};
  check_equal(zero, on_device{rmm::mr::cuda_memory_resource{}, rmm::cuda_device_id{0}}, true);
  check_equal(zero, on_device{rmm::mr::cuda_memory_resource{}, rmm::cuda_device_id{1}}, false);
}

TEST_CASE("polymorphic_allocator: equal when the resources are, whatever the value type",
          "[comparison]") {
  rmm::test::host_backed_resource const first;
  rmm::test::host_backed_resource const second;  // a different instance: unequal to first
  rmm::mr::polymorphic_allocator<int> const a{first};
  check_equal(a, rmm::mr::polymorphic_allocator<int>{a}, true);
  check_equal(a, rmm::mr::polymorphic_allocator<double>{a}, true);
  check_equal(a, rmm::mr::polymorphic_allocator<int>{first}, true);
  check_equal(a, rmm::mr::polymorphic_allocator<double>{second}, false);
  check_equal(rmm::mr::polymorphic_allocator<int>{rmm::mr::cuda_memory_resource{}},
              rmm::mr::polymorphic_allocator<float>{rmm::mr::cuda_memory_resource{}},
              true);
  STATIC_REQUIRE(comparable_in_cxx20<rmm::mr::polymorphic_allocator<int>>());
}

TEST_CASE("stream_allocator_adaptor: equal when the underlying allocators are", "[comparison]") {
  rmm::test::host_backed_resource const first;
  rmm::test::host_backed_resource const second;
  rmm::mr::polymorphic_allocator<int> const a{first};
  rmm::mr::polymorphic_allocator<int> const b{second};
  auto const on_default = rmm::mr::stream_allocator_adaptor{a, rmm::cuda_stream_default};
  // The stream is not part of equality: memory from one is freed through the other.
  check_equal(on_default, rmm::mr::stream_allocator_adaptor{a, rmm::cuda_stream_per_thread}, true);
  check_equal(on_default, rmm::mr::stream_allocator_adaptor{b, rmm::cuda_stream_default}, false);
  using rebound = decltype(on_default)::rebind<double>::other;
  check_equal(on_default, rebound{on_default}, true);
}
