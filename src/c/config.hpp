/**
 * @file config.hpp
 * @brief librmm_c's configuration: which resource, and its initial and maximum sizes, parsed from
 * strings by pure functions (no CUDA call), so that the parsing is testable without a GPU.
 */
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rmm::c {

/// @brief The resources librmm_c can install.
enum class resource_kind {
  cuda,        ///< cuda_memory_resource: cudaMalloc/cudaFree per allocation
  cuda_async,  ///< cuda_async_memory_resource: the driver's stream-ordered pool
  pool,        ///< pool_memory_resource over cudaMalloc
  expandable,  ///< pool_memory_resource over virtual_memory_resource (docs/expandable_pool.md)
  arena,       ///< arena_memory_resource over cudaMalloc (one fixed arena)
  binning,     ///< binning_memory_resource (bins 512 B..1 MiB) over a pool
};

/// @brief The resource's name as the configuration spells it ("cuda", "pool", ...). Static.
[[nodiscard]] char const* resource_name(resource_kind kind) noexcept;

/// @brief A size setting: absent, a number of bytes, or a percentage of the device's memory.
struct size_setting {
  enum class unit { none, bytes, percent };
  unit kind{unit::none};  ///< what value means
  std::size_t value{};    ///< bytes (a multiple of 256) or percent (0..100)

  [[nodiscard]] bool has_value() const noexcept { return kind != unit::none; }
};

/// @brief A complete, validated configuration.
struct config {
  resource_kind resource{resource_kind::pool};  ///< the resource to install
  size_setting initial;                         ///< initial pool (or arena) size
  size_setting maximum;                         ///< the pool's hard cap
};

/// @brief The parameter names used in messages, e.g. the environment variables' names.
struct config_names {
  std::string_view resource;  ///< e.g. "RMM_C_RESOURCE"
  std::string_view initial;   ///< e.g. "RMM_C_INITIAL_POOL_SIZE"
  std::string_view maximum;   ///< e.g. "RMM_C_MAXIMUM_POOL_SIZE"
};

/// @brief The names of the environment variables.
inline constexpr config_names environment_names{
    "RMM_C_RESOURCE", "RMM_C_INITIAL_POOL_SIZE", "RMM_C_MAXIMUM_POOL_SIZE"};

/// @brief The names of rmm_c_configure's parameters.
inline constexpr config_names configure_names{
    "rmm_c_configure(resource)", "rmm_c_configure(initial_size)", "rmm_c_configure(maximum_size)"};

/// @brief A configuration, or the message saying why there is none.
struct parse_result {
  std::optional<config> value;  ///< set on success
  std::string error;            ///< set on failure: names the parameter and quotes its value
};

/**
 * @brief Parses a size setting: a size string accepted by rmm::parse_memory_size ("512MB",
 * "1.5 GB"), rounded up to a multiple of 256 bytes, or an integer percentage "0%".."100%".
 * @throws rmm::invalid_argument "<name>: ..." quoting @p text if it is neither.
 */
[[nodiscard]] size_setting parse_size_setting(std::string_view name, std::string_view text);

/**
 * @brief Parses and validates a configuration. An absent (nullopt) or empty string means the
 * default: resource `pool`, no initial size (the resource's default), no maximum.
 *
 * Rejected, with a message naming the parameter and quoting its value: an unknown resource
 * name (resource names are lower-case, exactly as listed in resource_kind), a malformed size, a
 * percentage above 100, a maximum below the initial size when both are in the same unit, any
 * size for `cuda`, and a maximum for `cuda_async` and `arena` (neither can cap).
 *
 * Pure function; thread-safe; never throws except std::bad_alloc.
 */
[[nodiscard]] parse_result parse_config(config_names const& names,
                                        std::optional<std::string> const& resource,
                                        std::optional<std::string> const& initial,
                                        std::optional<std::string> const& maximum);

/// @brief The environment variable that sets the expandable pool's defragmentation threshold.
inline constexpr std::string_view defragment_threshold_variable = "RMM_C_DEFRAGMENT_THRESHOLD";

/**
 * @brief Parses the expandable pool's defragmentation threshold
 * (pool_memory_resource::set_defragment_threshold) for @p resource: nullopt if @p text is absent
 * or empty (the pool's default), std::numeric_limits<std::size_t>::max() for "off", else the
 * bytes of a size string ("64MB", "0").
 * @throws rmm::invalid_argument "<name>=<quoted text>: ..." if @p text is neither, or if it is set
 * for a resource other than `expandable` (only the expandable pool defragments).
 */
[[nodiscard]] std::optional<std::size_t> parse_defragment_threshold(
    resource_kind resource, std::string_view name, std::optional<std::string> const& text);

/**
 * @brief A size setting in bytes for a device of @p total_bytes: percentages are taken of
 * @p total_bytes and rounded down to a multiple of 256 bytes; byte values are returned as is;
 * nullopt if absent.
 */
[[nodiscard]] std::optional<std::size_t> resolve_size(size_setting const& setting,
                                                      std::size_t total_bytes) noexcept;

}  // namespace rmm::c
