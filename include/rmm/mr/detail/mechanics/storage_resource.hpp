/**
 * @file storage_resource.hpp
 * @brief The plain resource behind each storage_type, held by value in a std::variant: what
 * unbounded_memory_resource allocates from and block_memory_pool_resource takes its blocks from.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <cstddef>
#include <string>
#include <variant>

namespace rmm::mr::detail {

/// @brief One of the three plain resources, chosen by a storage_type. All are stateless.
using storage_resource =
    std::variant<cuda_memory_resource, pinned_host_memory_resource, system_memory_resource>;

/**
 * @brief The resource for @p type: cuda_memory_resource (device), pinned_host_memory_resource
 * (pinned_host) or system_memory_resource (system), made on the current device.
 * @throws rmm::logic_error if @p type is not an enumerator, or if it is storage_type::system and
 * the current device cannot access pageable system memory (no HMM or ATS).
 */
[[nodiscard]] inline storage_resource make_storage_resource(storage_type type) {
  switch (type) {
    case storage_type::device:
      return cuda_memory_resource{};
    case storage_type::pinned_host:
      return pinned_host_memory_resource{};
    case storage_type::system:
      return system_memory_resource{};
  }
  RMM_FAIL("invalid storage_type " + std::to_string(static_cast<int>(type)));
}

/// @brief The largest alignment the resource for @p type honours: 4096 for system memory, 256
/// for the CUDA allocations.
[[nodiscard]] constexpr std::size_t storage_max_alignment(storage_type type) noexcept {
  return type == storage_type::system ? system_memory_resource::max_alignment
                                      : CUDA_ALLOCATION_ALIGNMENT;
}

/**
 * @brief Checks that @p dev_id names a visible device.
 * @throws rmm::out_of_range naming @p what, the id and the device count otherwise.
 */
inline void expect_valid_device(int dev_id, char const* what) {
  int const count = get_num_cuda_devices();
  RMM_EXPECTS(dev_id >= 0 && dev_id < count,
              std::string{what} + ": dev_id " + std::to_string(dev_id) + " is not in [0, " +
                  std::to_string(count) + ")",
              rmm::out_of_range);
}

}  // namespace rmm::mr::detail
