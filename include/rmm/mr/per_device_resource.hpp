/**
 * @file per_device_resource.hpp
 * @brief The process-wide registry of one default memory resource per CUDA device.
 *
 * The registry's storage, its lock and the exit flag live in the compiled library (one
 * definition per process, whatever number of shared objects use this header). Each entry owns
 * its resource as a `cuda::mr::any_resource<cuda::mr::device_accessible>` and keeps it alive
 * until it is replaced or the process exits; the initial entry of every device is a
 * cuda_memory_resource.
 *
 * Thread-safety: every function here is thread-safe with respect to concurrent calls of any of
 * them; concurrent calls leave a valid state, in an unspecified order. A reference returned by a
 * getter stays valid until the entry is replaced (the setter returns the previous resource to
 * its caller, who decides how long it lives).
 *
 * Where the specification calls an out-of-range device id undefined behaviour, these functions
 * throw `rmm::out_of_range` naming the id and the device count.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <string>

namespace rmm::mr {

namespace detail {

/// @brief Owning type-erased device resource held by the registry.
using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

/// @brief Reference to device @p device_index's entry, created as a cuda_memory_resource if it
/// does not exist yet. No range check.
RMM_EXPORT device_async_resource_ref registry_get(int device_index);

/// @brief Replaces device @p device_index's entry; returns the previous one. No range check.
RMM_EXPORT any_device_resource registry_set(int device_index, any_device_resource new_resource);

/// @brief Number of devices, read once per process (0 where there is no device or driver).
RMM_EXPORT int registry_device_count() noexcept;

/**
 * @brief Returns @p device_id's value if it names an existing device.
 * @throws rmm::out_of_range naming the id and the device count otherwise.
 */
inline int checked_device_index(cuda_device_id device_id) {
  int const count = registry_device_count();
  RMM_EXPECTS(device_id.value() >= 0 && device_id.value() < count,
              "device id " + std::to_string(device_id.value()) +
                  " is out of range: the process sees " + std::to_string(count) +
                  " CUDA device(s), so valid ids are in [0, " + std::to_string(count) + ")",
              rmm::out_of_range);
  return device_id.value();
}

}  // namespace detail

/**
 * @brief Get the device_async_resource_ref for the specified device.
 *
 * The initial resource of every device is a cuda_memory_resource. Use the returned reference
 * only while @p device_id is the current device.
 * @throws rmm::out_of_range if @p device_id is not in [0, number of devices).
 */
inline device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id) {
  return detail::registry_get(detail::checked_device_index(device_id));
}

/**
 * @brief Set the memory resource for the specified device, taking ownership of it.
 *
 * @p new_resource must have been created while @p device_id was current. The registry keeps it
 * alive until it is replaced or the process exits; a destructor that may call CUDA must consult
 * rmm::process_is_exiting().
 * @throws rmm::out_of_range if @p device_id is not in [0, number of devices).
 * @return An owning any_resource holding the previous resource for @p device_id.
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> set_per_device_resource(
    cuda_device_id device_id, cuda::mr::any_resource<cuda::mr::device_accessible> new_resource) {
  return detail::registry_set(detail::checked_device_index(device_id), std::move(new_resource));
}

/**
 * @brief Set the device_async_resource_ref for the specified device to @p new_resource_ref.
 *
 * The reference (not the resource) is copied into an owning any_resource: the caller keeps the
 * referenced resource alive while it is in use.
 * @deprecated Use set_per_device_resource instead.
 * @throws rmm::out_of_range if @p device_id is not in [0, number of devices).
 * @return An owning any_resource holding the previous resource for @p device_id.
 */
[[deprecated("Use set_per_device_resource instead")]] inline cuda::mr::any_resource<
    cuda::mr::device_accessible>
set_per_device_resource_ref(cuda_device_id device_id, device_async_resource_ref new_resource_ref) {
  return set_per_device_resource(
      device_id, cuda::mr::any_resource<cuda::mr::device_accessible>{new_resource_ref});
}

/**
 * @brief Get the device_async_resource_ref for the current device (`cudaGetDevice`).
 * @throws rmm::cuda_error if the current device cannot be determined.
 */
inline device_async_resource_ref get_current_device_resource_ref() {
  return get_per_device_resource_ref(get_current_cuda_device());
}

/**
 * @brief Set the memory resource for the current device, taking ownership of it.
 * @throws rmm::cuda_error if the current device cannot be determined.
 * @return An owning any_resource holding the previous resource for the current device.
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> set_current_device_resource(
    cuda::mr::any_resource<cuda::mr::device_accessible> new_resource) {
  return set_per_device_resource(get_current_cuda_device(), std::move(new_resource));
}

/**
 * @brief Set the device_async_resource_ref for the current device.
 * @deprecated Use set_current_device_resource instead.
 * @return An owning any_resource holding the previous resource for the current device.
 */
[[deprecated("Use set_current_device_resource instead")]] inline cuda::mr::any_resource<
    cuda::mr::device_accessible>
set_current_device_resource_ref(device_async_resource_ref new_resource_ref) {
  return set_current_device_resource(
      cuda::mr::any_resource<cuda::mr::device_accessible>{new_resource_ref});
}

/**
 * @brief Reset the memory resource for the specified device to the initial cuda_memory_resource.
 * @throws rmm::out_of_range if @p device_id is not in [0, number of devices).
 * @return An owning any_resource holding the previous resource for @p device_id.
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> reset_per_device_resource(
    cuda_device_id device_id) {
  return set_per_device_resource(device_id, cuda_memory_resource{});
}

/**
 * @brief Reset the memory resource for the current device to the initial cuda_memory_resource.
 * @return An owning any_resource holding the previous resource for the current device.
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> reset_current_device_resource() {
  return reset_per_device_resource(get_current_cuda_device());
}

/**
 * @brief Reset the device_async_resource_ref for the specified device to the initial resource.
 * @deprecated Use reset_per_device_resource instead.
 */
[[deprecated("Use reset_per_device_resource instead")]] inline cuda::mr::any_resource<
    cuda::mr::device_accessible>
reset_per_device_resource_ref(cuda_device_id device_id) {
  return reset_per_device_resource(device_id);
}

/**
 * @brief Reset the device_async_resource_ref for the current device to the initial resource.
 * @deprecated Use reset_current_device_resource instead.
 */
[[deprecated("Use reset_current_device_resource instead")]] inline cuda::mr::any_resource<
    cuda::mr::device_accessible>
reset_current_device_resource_ref() {
  return reset_current_device_resource();
}

}  // namespace rmm::mr
