// Parsing of librmm_c's configuration (see config.hpp). No CUDA call here.
#include "config.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/memory_size.hpp>
#include <rmm/mr/pool_size_strings.hpp>

#include <array>
#include <exception>
#include <limits>
#include <string>
#include <utility>

namespace rmm::c {
namespace {

struct named_kind {
  char const* name;
  resource_kind kind;
};

constexpr std::array<named_kind, 6> kinds{{{"cuda", resource_kind::cuda},
                                           {"cuda_async", resource_kind::cuda_async},
                                           {"pool", resource_kind::pool},
                                           {"expandable", resource_kind::expandable},
                                           {"arena", resource_kind::arena},
                                           {"binning", resource_kind::binning}}};

std::string quoted(std::string_view text) { return rmm::detail::quote_memory_size_text(text); }

std::string valid_names() {
  std::string names;
  for (auto const& k : kinds) {
    names += names.empty() ? "" : ", ";
    names += k.name;
  }
  return names;
}

// "<name>=<quoted text>", the way every message shows a setting.
std::string shown(std::string_view name, std::string_view text) {
  return std::string{name} + "=" + quoted(text);
}

}  // namespace

char const* resource_name(resource_kind kind) noexcept {
  for (auto const& k : kinds) {
    if (k.kind == kind) {
      return k.name;
    }
  }
  return "unknown";
}

size_setting parse_size_setting(std::string_view name, std::string_view text) {
  if (!text.empty() && text.back() == '%') {
    std::string_view const digits = text.substr(0, text.size() - 1);
    bool valid                    = !digits.empty() && digits.size() <= 3;
    std::size_t percent           = 0;
    for (char const c : digits) {
      valid   = valid && rmm::detail::memory_size_is_digit(c);
      percent = percent * 10U + static_cast<std::size_t>(c - '0');
    }
    if (!valid || percent > 100) {
      throw rmm::invalid_argument{
          shown(name, text) +
          ": a percentage must be an integer from 0% to 100% of the device's total memory"};
    }
    return size_setting{size_setting::unit::percent, percent};
  }
  std::size_t const bytes = rmm::mr::detail::parse_named_size(name, text);
  return size_setting{size_setting::unit::bytes, rmm::mr::detail::round_pool_size(name, bytes)};
}

parse_result parse_config(config_names const& names,
                          std::optional<std::string> const& resource,
                          std::optional<std::string> const& initial,
                          std::optional<std::string> const& maximum) {
  auto const given = [](std::optional<std::string> const& s) { return s && !s->empty(); };
  parse_result result;
  config cfg;
  try {
    if (given(resource)) {
      bool found = false;
      for (auto const& k : kinds) {
        if (*resource == k.name) {
          cfg.resource = k.kind;
          found        = true;
        }
      }
      if (!found) {
        result.error = shown(names.resource, *resource) + ": unknown resource; expected one of " +
                       valid_names() + " (lower-case)";
        return result;
      }
    }
    if (given(initial)) {
      cfg.initial = parse_size_setting(names.initial, *initial);
    }
    if (given(maximum)) {
      cfg.maximum = parse_size_setting(names.maximum, *maximum);
    }
  } catch (std::exception const& e) {
    result.error = e.what();
    return result;
  }
  std::string const kind_text = std::string{" (resource "} + resource_name(cfg.resource) + ")";
  if (cfg.resource == resource_kind::cuda && cfg.initial.has_value()) {
    result.error = shown(names.initial, *initial) + ": resource cuda has no pool to size" +
                   "; unset it or choose a pool resource";
    return result;
  }
  if ((cfg.resource == resource_kind::cuda || cfg.resource == resource_kind::cuda_async ||
       cfg.resource == resource_kind::arena) &&
      cfg.maximum.has_value()) {
    result.error = shown(names.maximum, *maximum) + ": not supported" + kind_text +
                   ": it cannot cap its size; unset it or choose pool, expandable or binning";
    return result;
  }
  if (cfg.initial.has_value() && cfg.maximum.has_value() && cfg.initial.kind == cfg.maximum.kind &&
      cfg.maximum.value < cfg.initial.value) {
    result.error = shown(names.maximum, *maximum) + " is below " + shown(names.initial, *initial);
    return result;
  }
  result.value = cfg;
  return result;
}

std::optional<std::size_t> parse_defragment_threshold(resource_kind resource,
                                                      std::string_view name,
                                                      std::optional<std::string> const& text) {
  if (!text || text->empty()) {
    return std::nullopt;
  }
  if (resource != resource_kind::expandable) {
    throw rmm::invalid_argument{shown(name, *text) + ": not supported (resource " +
                                resource_name(resource) +
                                "): only the expandable pool defragments; unset it or choose "
                                "expandable"};
  }
  if (*text == "off") {
    return std::numeric_limits<std::size_t>::max();
  }
  try {
    return rmm::parse_memory_size(*text);
  } catch (rmm::invalid_argument const& e) {
    throw rmm::invalid_argument{shown(name, *text) +
                                ": expected a size string such as \"64MB\", or \"off\" (" +
                                e.what() + ")"};
  }
}

std::optional<std::size_t> resolve_size(size_setting const& setting,
                                        std::size_t total_bytes) noexcept {
  switch (setting.kind) {
    case size_setting::unit::bytes:
      return setting.value;
    case size_setting::unit::percent:
      // total_bytes / 100 * percent cannot overflow; the remainder's share is added exactly.
      return rmm::align_down(
          total_bytes / 100U * setting.value + total_bytes % 100U * setting.value / 100U,
          rmm::CUDA_ALLOCATION_ALIGNMENT);
    case size_setting::unit::none:
      break;
  }
  return std::nullopt;
}

}  // namespace rmm::c
