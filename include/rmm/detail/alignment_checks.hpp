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
 * @brief Checks that @p alignment is a power of two no larger than @p max_alignment, the largest
 * alignment that @p resource_name can guarantee.
 * @throws rmm::logic_error naming the resource and the alignment otherwise.
 */
inline void expect_supported_alignment(std::size_t alignment,
                                       std::size_t max_alignment,
                                       const char* resource_name) {
  RMM_EXPECTS(is_supported_alignment(alignment),
              std::string{resource_name} + ": alignment " + std::to_string(alignment) +
                  " is not a power of two");
  RMM_EXPECTS(alignment <= max_alignment,
              std::string{resource_name} + ": alignment " + std::to_string(alignment) +
                  " exceeds the largest supported alignment " + std::to_string(max_alignment));
}

}  // namespace rmm::detail
