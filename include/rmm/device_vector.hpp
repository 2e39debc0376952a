/**
 * @file device_vector.hpp
 * @brief rmm::device_vector: a thrust::device_vector whose storage comes from a memory resource.
 */
#pragma once

#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <thrust/device_vector.h>

namespace rmm {

/**
 * @brief Alias for a thrust::device_vector that allocates through rmm::mr::thrust_allocator.
 *
 * A default-constructed allocator uses the current device's resource on the default stream; pass
 * `rmm::mr::thrust_allocator<T>{stream, mr}` to the vector's constructor to choose both. The
 * vector's element operations (construction with a size, resize, copies, element access from the
 * host) are Thrust algorithms and are synchronous with respect to the host, as for any
 * thrust::device_vector; the allocator's stream orders the allocations and deallocations.
 *
 * Thread-safety: that of thrust::device_vector (none for one vector; distinct vectors may be used
 * concurrently if their resources are thread-safe).
 *
 * @note Including this header works in any translation unit, but constructing a vector with
 * elements (and most operations on it) instantiates Thrust's CUDA backend, which needs a CUDA
 * translation unit compiled by nvcc (see docs/thrust_and_prefetch.md).
 *
 * @tparam T The element type.
 */
template <typename T>
using device_vector = thrust::device_vector<T, rmm::mr::thrust_allocator<T>>;

}  // namespace rmm
