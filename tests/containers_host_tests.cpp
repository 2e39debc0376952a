// The containers' types, checked at compile time (movable, not copyable, RMM's typedefs and
// constructor signatures), and the argument checks that fail before any CUDA call, which run
// without a GPU.
#include "utilities/test_resources.hpp"

#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>
#include <cuda/memory_resource>
#include <cuda/std/iterator>
#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace {

using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;
using rmm::cuda_stream_view;
using rmm::device_buffer;
using rmm::device_scalar;
using rmm::device_uvector;

// --- device_buffer ------------------------------------------------------------------------------
static_assert(std::is_default_constructible_v<device_buffer>);
static_assert(!std::is_copy_constructible_v<device_buffer>);
static_assert(!std::is_copy_assignable_v<device_buffer>);
static_assert(std::is_nothrow_move_constructible_v<device_buffer>);
static_assert(std::is_nothrow_move_assignable_v<device_buffer>);
static_assert(std::is_nothrow_destructible_v<device_buffer>);
static_assert(std::is_constructible_v<device_buffer, std::size_t, cuda_stream_view>);
static_assert(
    std::is_constructible_v<device_buffer, std::size_t, cuda_stream_view, any_device_resource>);
static_assert(std::is_constructible_v<device_buffer,
                                      std::size_t,
                                      cuda_stream_view,
                                      rmm::device_async_resource_ref>);
static_assert(std::is_constructible_v<device_buffer,
                                      std::size_t,
                                      cuda_stream_view,
                                      rmm::test::host_backed_resource&>);
static_assert(std::is_constructible_v<device_buffer, std::size_t, std::size_t, cuda_stream_view>);
static_assert(std::is_constructible_v<device_buffer, void const*, std::size_t, cuda_stream_view>);
static_assert(
    std::
        is_constructible_v<device_buffer, void const*, std::size_t, std::size_t, cuda_stream_view>);
static_assert(std::is_constructible_v<device_buffer, device_buffer const&, cuda_stream_view>);
// The size constructor is explicit: a size is not a buffer.
static_assert(!std::is_convertible_v<std::size_t, device_buffer>);
static_assert(std::is_same_v<decltype(std::declval<device_buffer&>().data()), void*>);
static_assert(std::is_same_v<decltype(std::declval<device_buffer const&>().data()), void const*>);
static_assert(std::is_same_v<decltype(std::declval<device_buffer const&>().ssize()), std::int64_t>);
static_assert(std::is_same_v<decltype(std::declval<device_buffer&>().memory_resource()),
                             rmm::device_async_resource_ref>);
static_assert(
    std::is_same_v<decltype(std::declval<device_buffer const&>().stream()), cuda_stream_view>);

// --- device_uvector -----------------------------------------------------------------------------
using int_vector = device_uvector<int>;
static_assert(std::is_same_v<int_vector::value_type, int>);
static_assert(std::is_same_v<int_vector::size_type, std::size_t>);
static_assert(std::is_same_v<int_vector::reference, int&>);
static_assert(std::is_same_v<int_vector::const_reference, int const&>);
static_assert(std::is_same_v<int_vector::pointer, int*>);
static_assert(std::is_same_v<int_vector::const_pointer, int const*>);
static_assert(std::is_same_v<int_vector::iterator, int*>);
static_assert(std::is_same_v<int_vector::const_iterator, int const*>);
static_assert(std::is_same_v<int_vector::reverse_iterator, cuda::std::reverse_iterator<int*>>);
static_assert(
    std::is_same_v<int_vector::const_reverse_iterator, cuda::std::reverse_iterator<int const*>>);
static_assert(!std::is_default_constructible_v<int_vector>);
static_assert(!std::is_copy_constructible_v<int_vector>);
static_assert(!std::is_copy_assignable_v<int_vector>);
static_assert(std::is_nothrow_move_constructible_v<int_vector>);
static_assert(std::is_nothrow_move_assignable_v<int_vector>);
static_assert(std::is_constructible_v<int_vector, std::size_t, cuda_stream_view>);
static_assert(
    std::is_constructible_v<int_vector, std::size_t, cuda_stream_view, any_device_resource>);
static_assert(std::is_constructible_v<int_vector, int_vector const&, cuda_stream_view>);
static_assert(!std::is_convertible_v<std::size_t, int_vector>);
static_assert(std::is_convertible_v<int_vector&, cuda::std::span<int>>);
static_assert(std::is_convertible_v<int_vector const&, cuda::std::span<int const>>);
static_assert(!std::is_convertible_v<int_vector const&, cuda::std::span<int>>);
static_assert(std::is_same_v<decltype(std::declval<int_vector&>().release()), device_buffer>);
static_assert(std::is_same_v<decltype(std::declval<int_vector const&>().element(0, {})), int>);

/// True if set_element_async accepts an argument of type Value.
template <typename Vector, typename Value, typename = void>
constexpr bool accepts_async_value = false;
template <typename Vector, typename Value>
constexpr bool accepts_async_value<Vector,
                                   Value,
                                   std::void_t<decltype(std::declval<Vector&>().set_element_async(
                                       0, std::declval<Value>(), cuda_stream_view{}))>> = true;
static_assert(accepts_async_value<int_vector, int&>);
static_assert(accepts_async_value<int_vector, int const&>);
static_assert(!accepts_async_value<int_vector, int>);  // an rvalue may die before the copy
static_assert(!accepts_async_value<int_vector, int const>);

// --- device_scalar ------------------------------------------------------------------------------
using int_scalar = device_scalar<int>;
static_assert(std::is_same_v<int_scalar::value_type, int>);
static_assert(std::is_same_v<int_scalar::size_type, std::size_t>);
static_assert(std::is_same_v<int_scalar::reference, int&>);
static_assert(std::is_same_v<int_scalar::const_reference, int const&>);
static_assert(std::is_same_v<int_scalar::pointer, int*>);
static_assert(std::is_same_v<int_scalar::const_pointer, int const*>);
static_assert(!std::is_default_constructible_v<int_scalar>);
static_assert(!std::is_copy_constructible_v<int_scalar>);
static_assert(!std::is_copy_assignable_v<int_scalar>);
static_assert(std::is_nothrow_move_constructible_v<int_scalar>);
static_assert(std::is_nothrow_move_assignable_v<int_scalar>);
static_assert(std::is_constructible_v<int_scalar, cuda_stream_view>);
static_assert(std::is_constructible_v<int_scalar, int const&, cuda_stream_view>);
static_assert(
    std::is_constructible_v<int_scalar, int const&, cuda_stream_view, any_device_resource>);
static_assert(std::is_constructible_v<int_scalar, int_scalar const&, cuda_stream_view>);

template <typename Scalar, typename Value, typename = void>
constexpr bool accepts_async_scalar_value = false;
template <typename Scalar, typename Value>
constexpr bool
    accepts_async_scalar_value<Scalar,
                               Value,
                               std::void_t<decltype(std::declval<Scalar&>().set_value_async(
                                   std::declval<Value>(), cuda_stream_view{}))>> = true;
static_assert(accepts_async_scalar_value<int_scalar, int&>);
static_assert(accepts_async_scalar_value<int_scalar, int const&>);
static_assert(!accepts_async_scalar_value<int_scalar, int>);

}  // namespace

TEST_CASE("containers: argument errors are reported before any CUDA call", "[containers]") {
  rmm::test::host_backed_resource host_mr;
  cuda_stream_view const stream{};
  // Invalid alignment: rmm::invalid_argument naming the value.
  CHECK_THROWS_AS(device_buffer(16, 3, stream, host_mr), rmm::invalid_argument);
  CHECK_THROWS_WITH(device_buffer(16, 48, stream, host_mr),
                    Catch::Matchers::Contains("alignment 48 is not a power of two"));
  CHECK_THROWS_AS(device_buffer(16, 0, stream, host_mr), rmm::invalid_argument);
  // Null source with a non-zero size: rmm::logic_error naming the size.
  CHECK_THROWS_AS(device_buffer(nullptr, 8, stream, host_mr), rmm::logic_error);
  CHECK_THROWS_WITH(device_buffer(nullptr, 8, stream, host_mr),
                    Catch::Matchers::Contains("source_data is null but size is 8 bytes"));
  // A vector whose byte size does not fit in std::size_t: rmm::bad_alloc naming the count.
  auto const too_many = std::numeric_limits<std::size_t>::max() / sizeof(double) + 1;
  CHECK_THROWS_AS(device_uvector<double>(too_many, stream, host_mr), rmm::bad_alloc);
  CHECK_THROWS_WITH(device_uvector<double>(too_many, stream, host_mr),
                    Catch::Matchers::Contains(std::to_string(too_many) + " elements of 8 bytes"));
}
