// Whether this machine's device supports virtual memory management, for the tests of
// virtual_memory_resource and of what is built on it (the expandable pool, the conformance suite).
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

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

}  // namespace rmm::test
