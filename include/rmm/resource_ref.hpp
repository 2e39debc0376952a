/**
 * @file resource_ref.hpp
 * @brief Aliases of CCCL's type-erased resource references used throughout the library.
 */
#pragma once

#include <rmm/error.hpp>

#include <cuda/memory_resource>

#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace rmm {

/// @brief Alias for a cuda::mr::synchronous_resource_ref with the property
/// cuda::mr::device_accessible.
using device_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>;

/// @brief Alias for a cuda::mr::resource_ref with the property cuda::mr::device_accessible.
using device_async_resource_ref = cuda::mr::resource_ref<cuda::mr::device_accessible>;

/// @brief Alias for a cuda::mr::synchronous_resource_ref with the property
/// cuda::mr::host_accessible.
using host_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible>;

/// @brief Alias for a cuda::mr::resource_ref with the property cuda::mr::host_accessible.
using host_async_resource_ref = cuda::mr::resource_ref<cuda::mr::host_accessible>;

/// @brief Alias for a cuda::mr::synchronous_resource_ref with the properties
/// cuda::mr::host_accessible and cuda::mr::device_accessible.
using host_device_resource_ref =
    cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;

/// @brief Alias for a cuda::mr::resource_ref with the properties cuda::mr::host_accessible and
/// cuda::mr::device_accessible.
using host_device_async_resource_ref =
    cuda::mr::resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;

/**
 * @brief True if @p Resource is a resource adaptor, detected by a `get_upstream_resource()`
 * member.
 * @deprecated This trait will be removed in a future release.
 */
template <class Resource, class = void>
[[deprecated("is_resource_adaptor will be removed in a future release")]] constexpr bool
    is_resource_adaptor = false;

/// @cond
template <class Resource>
[[deprecated("is_resource_adaptor will be removed in a future release")]] constexpr bool
    is_resource_adaptor<Resource,
                        std::void_t<decltype(std::declval<Resource&>().get_upstream_resource())>> =
        cuda::mr::resource<Resource>;
/// @endcond

/**
 * @brief Converts a pointer to a memory resource into a device_async_resource_ref, checking for
 * nullptr.
 * @tparam Resource The type of the memory resource.
 * @param res A pointer to the memory resource.
 * @throws rmm::logic_error (a std::logic_error) if @p res is null; the message names the type.
 * @return A device_async_resource_ref to the memory resource.
 */
template <class Resource>
device_async_resource_ref to_device_async_resource_ref_checked(Resource* res) {
  RMM_EXPECTS(res != nullptr,
              std::string{"to_device_async_resource_ref_checked: the resource pointer (of type "} +
                  typeid(Resource).name() + ") is null");
  return device_async_resource_ref{*res};
}

}  // namespace rmm
