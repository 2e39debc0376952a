/**
 * @file storage_type.hpp
 * @brief The kind of memory a storage-parameterised resource draws on (pinned host, device or
 * system memory), numbered as the sensor-streaming SDK numbers its `storage_type` parameter.
 *
 * Everything here is a pure function of its arguments and therefore thread-safe.
 */
#pragma once

#include <rmm/error.hpp>

#include <string>

namespace rmm::mr {

/**
 * @brief Where a storage-parameterised resource (unbounded_memory_resource,
 * block_memory_pool_resource, device_host_pool_pair::allocate) takes its memory from.
 *
 * The numeric values are those of the SDK's `storage_type` parameter, so that a configuration
 * value can be converted with storage_type_from_int().
 */
enum class storage_type : int {
  pinned_host = 0,  ///< page-locked host memory (cudaMallocHost): host and device accessible
  device      = 1,  ///< device memory (cudaMalloc): device accessible only
  system      = 2,  ///< system memory (the system allocator): host and, with HMM or ATS, device
};

/// @brief The enumerator's name ("pinned_host", "device", "system"), or "storage_type(<n>)" for a
/// value outside the enumeration. Never throws except std::bad_alloc.
[[nodiscard]] inline std::string storage_type_name(storage_type type) {
  switch (type) {
    case storage_type::pinned_host:
      return "pinned_host";
    case storage_type::device:
      return "device";
    case storage_type::system:
      return "system";
  }
  return "storage_type(" + std::to_string(static_cast<int>(type)) + ")";
}

/**
 * @brief Converts the SDK's integer `storage_type` (0 pinned host, 1 device, 2 system) to the
 * enumeration.
 * @throws rmm::logic_error naming @p value and the accepted values if it is not 0, 1 or 2.
 */
[[nodiscard]] inline storage_type storage_type_from_int(int value) {
  RMM_EXPECTS(value >= static_cast<int>(storage_type::pinned_host) &&
                  value <= static_cast<int>(storage_type::system),
              "invalid storage_type " + std::to_string(value) +
                  ": expected 0 (pinned_host), 1 (device) or 2 (system)");
  return static_cast<storage_type>(value);
}

}  // namespace rmm::mr
