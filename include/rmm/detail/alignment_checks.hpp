/**
 * @file alignment_checks.hpp
 * @brief Shared argument checks of the resources' allocate functions.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>

#include <cstddef>
#include <string>

namespace rmm::detail {

/**
 * @brief Throws the rmm::logic_error of expect_supported_alignment() for an @p alignment that is
 * not a power of two or exceeds @p max_alignment. Out of line and cold: with the messages built
 * inline, the check was a call of about 25 instructions on every allocation of every resource.
 */
[[gnu::cold, gnu::noinline]] inline void throw_unsupported_alignment(std::size_t alignment,
                                                                     std::size_t max_alignment,
                                                                     const char* resource_name) {
  RMM_EXPECTS(is_supported_alignment(alignment),
              std::string{resource_name} + ": alignment " + std::to_string(alignment) +
                  " is not a power of two");
  RMM_EXPECTS(alignment <= max_alignment,
              std::string{resource_name} + ": alignment " + std::to_string(alignment) +
                  " exceeds the largest supported alignment " + std::to_string(max_alignment));
}

/**
 * @brief Checks that @p alignment is a power of two no larger than @p max_alignment, the largest
 * alignment that @p resource_name can guarantee. Two compares inline; the message out of line.
 * @throws rmm::logic_error naming the resource and the alignment otherwise.
 */
inline void expect_supported_alignment(std::size_t alignment,
                                       std::size_t max_alignment,
                                       const char* resource_name) {
  if (!is_supported_alignment(alignment) || alignment > max_alignment) {
    throw_unsupported_alignment(alignment, max_alignment, resource_name);
  }
}

}  // namespace rmm::detail
