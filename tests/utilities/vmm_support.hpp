// Whether this machine's device supports virtual memory management, for the tests of
// virtual_memory_resource and of what is built on it (the expandable pool, the conformance suite),
// and the expandable pool those tests make.
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace rmm::test {

/// @brief Why a virtual_memory_resource cannot be made here (its constructor's message); empty
/// when it can.
inline std::string vmm_unavailable_reason() {
  try {
    rmm::mr::virtual_memory_resource probe{};
    return {};
  } catch (rmm::logic_error const& e) {
    return e.what();
  }
}

/// @brief True, after a SKIPPED warning saying why, when virtual memory management is missing.
inline bool vmm_unavailable() {
  std::string const why = vmm_unavailable_reason();
  if (why.empty()) {
    return false;
  }
  WARN("SKIPPED: " << why);
  return true;
}

/// @brief An expandable pool for one test: a pool_memory_resource (no initial size) over a
/// virtual_memory_resource, and the latter's granularity.
struct expandable_pool {
  /// @brief A pool that maps at most @p maximum_granules granules (no maximum by default), over
  /// ranges that reserve @p reservation_size bytes each (the device's memory when 0).
  explicit expandable_pool(std::optional<std::size_t> maximum_granules = std::nullopt,
                           std::size_t reservation_size                = 0)
      : vmm{rmm::get_current_cuda_device(), reservation_size},
        g{vmm.granularity()},
        pool{vmm,
             0,
             maximum_granules ? std::optional<std::size_t>{*maximum_granules * g} : std::nullopt} {}

  rmm::mr::virtual_memory_resource vmm;
  std::size_t g;  ///< vmm's granularity
  rmm::mr::pool_memory_resource pool;
};

/// @brief An expandable_pool made with these arguments; none, after a SKIPPED warning saying why,
/// when virtual memory management is missing (the test then returns).
inline std::optional<expandable_pool> make_expandable_pool(
    std::optional<std::size_t> maximum_granules = std::nullopt, std::size_t reservation_size = 0) {
  std::optional<expandable_pool> made;
  if (!vmm_unavailable()) {
    made.emplace(maximum_granules, reservation_size);
  }
  return made;
}

}  // namespace rmm::test
