/**
 * @file rmm_c_config_tests.cpp
 * @brief Host tests of librmm_c: the configuration parser (src/c/config.hpp) and the C
 * functions' behaviour that needs no GPU (invalid configuration, configure after first use).
 */
#include "config.hpp"

#include <rmm/c/rmm_c.h>
#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

extern "C" int rmm_c_header_check_c(void);  // tests/c/rmm_c_header_check.c

namespace {

using rmm::c::config_names;
using rmm::c::environment_names;
using rmm::c::parse_config;
using rmm::c::resource_kind;
using rmm::c::size_setting;

constexpr std::size_t MiB = std::size_t{1} << 20U;
constexpr std::size_t GiB = std::size_t{1} << 30U;

using opt = std::optional<std::string>;

rmm::c::parse_result parse(opt resource, opt initial = {}, opt maximum = {}) {
  return parse_config(environment_names, resource, initial, maximum);
}

bool contains(std::string const& text, std::string const& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("every resource name parses", "[rmm_c][config]") {
  struct named {
    char const* name;
    resource_kind kind;
  };
  for (auto const& n : {named{"cuda", resource_kind::cuda},
                        named{"cuda_async", resource_kind::cuda_async},
                        named{"pool", resource_kind::pool},
                        named{"expandable", resource_kind::expandable},
                        named{"arena", resource_kind::arena},
                        named{"binning", resource_kind::binning}}) {
    auto const result = parse(std::string{n.name});
    INFO(n.name << ": " << result.error);
    REQUIRE(result.value);
    CHECK(result.value->resource == n.kind);
    CHECK(std::string{rmm::c::resource_name(n.kind)} == n.name);
    CHECK_FALSE(result.value->initial.has_value());
    CHECK_FALSE(result.value->maximum.has_value());
  }
}

TEST_CASE("absent or empty settings give the defaults", "[rmm_c][config]") {
  for (auto const& empty : {opt{}, opt{""}}) {
    auto const result = parse(empty, empty, empty);
    REQUIRE(result.value);
    CHECK(result.value->resource == resource_kind::pool);
    CHECK_FALSE(result.value->initial.has_value());
    CHECK_FALSE(result.value->maximum.has_value());
  }
}

TEST_CASE("sizes parse as size strings rounded to 256 bytes, or percentages", "[rmm_c][config]") {
  auto const result = parse(opt{"pool"}, opt{"1GB"}, opt{"2.5 GB"});
  REQUIRE(result.value);
  CHECK(result.value->initial.kind == size_setting::unit::bytes);
  CHECK(result.value->initial.value == GiB);
  CHECK(result.value->maximum.value == 2 * GiB);  // the fraction is truncated (memory_size.md)

  CHECK(rmm::c::parse_size_setting("X", "1000B").value == 1024);  // rounded up to 256
  CHECK(rmm::c::parse_size_setting("X", "0B").value == 0);
  CHECK(rmm::c::parse_size_setting("X", "512MB").value == 512 * MiB);

  auto const percent = rmm::c::parse_size_setting("X", "50%");
  CHECK(percent.kind == size_setting::unit::percent);
  CHECK(percent.value == 50);
  CHECK(rmm::c::parse_size_setting("X", "0%").value == 0);
  CHECK(rmm::c::parse_size_setting("X", "100%").value == 100);

  auto const mixed = parse(opt{"expandable"}, opt{"0B"}, opt{"90%"});
  REQUIRE(mixed.value);
  CHECK(mixed.value->maximum.kind == size_setting::unit::percent);
}

TEST_CASE("percentages resolve against the device's memory", "[rmm_c][config]") {
  size_setting const half{size_setting::unit::percent, 50};
  CHECK(rmm::c::resolve_size(half, 80 * GiB) == 40 * GiB);
  size_setting const third{size_setting::unit::percent, 33};
  std::size_t const third_bytes = *rmm::c::resolve_size(third, 1000000);
  CHECK(third_bytes % 256 == 0);
  CHECK(third_bytes == 329984);  // 330000 rounded down to 256
  CHECK(rmm::c::resolve_size(size_setting{size_setting::unit::bytes, 4096}, 1) == 4096);
  CHECK_FALSE(rmm::c::resolve_size(size_setting{}, 1).has_value());
}

TEST_CASE("an invalid resource name is reported with the variable and the value",
          "[rmm_c][config]") {
  for (char const* bad : {"Pool", "pools", "managed", " pool", "cuda-async"}) {
    auto const result = parse(std::string{bad});
    INFO(result.error);
    CHECK_FALSE(result.value);
    CHECK(contains(result.error, std::string{"RMM_C_RESOURCE=\""} + bad + "\""));
    CHECK(contains(result.error, "cuda, cuda_async, pool, expandable, arena, binning"));
  }
}

TEST_CASE("invalid sizes are reported with the variable and the value", "[rmm_c][config]") {
  struct bad_size {
    opt initial;
    opt maximum;
    char const* variable;
    char const* value;
  };
  for (auto const& b : {bad_size{opt{"1GiB"}, {}, "RMM_C_INITIAL_POOL_SIZE", "1GiB"},
                        bad_size{opt{"12"}, {}, "RMM_C_INITIAL_POOL_SIZE", "12"},
                        bad_size{{}, opt{"lots"}, "RMM_C_MAXIMUM_POOL_SIZE", "lots"},
                        bad_size{{}, opt{"101%"}, "RMM_C_MAXIMUM_POOL_SIZE", "101%"},
                        bad_size{{}, opt{"-5%"}, "RMM_C_MAXIMUM_POOL_SIZE", "-5%"},
                        bad_size{opt{"%"}, {}, "RMM_C_INITIAL_POOL_SIZE", "%"},
                        bad_size{opt{"1.5%"}, {}, "RMM_C_INITIAL_POOL_SIZE", "1.5%"}}) {
    auto const result = parse(opt{"pool"}, b.initial, b.maximum);
    INFO(result.error);
    CHECK_FALSE(result.value);
    CHECK(contains(result.error, b.variable));
    CHECK(contains(result.error, std::string{"\""} + b.value + "\""));
  }
}

TEST_CASE("settings a resource cannot use are rejected", "[rmm_c][config]") {
  auto const cuda_initial = parse(opt{"cuda"}, opt{"1GB"});
  CHECK_FALSE(cuda_initial.value);
  CHECK(contains(cuda_initial.error, "RMM_C_INITIAL_POOL_SIZE=\"1GB\""));
  for (char const* kind : {"cuda", "cuda_async", "arena"}) {
    auto const result = parse(std::string{kind}, {}, opt{"2GB"});
    INFO(result.error);
    CHECK_FALSE(result.value);
    CHECK(contains(result.error, "RMM_C_MAXIMUM_POOL_SIZE=\"2GB\""));
    CHECK(contains(result.error, kind));
  }
  CHECK(parse(opt{"cuda_async"}, opt{"1GB"}).value);
  CHECK(parse(opt{"arena"}, opt{"30%"}).value);
}

TEST_CASE("the defragmentation threshold: a size string or off, for the expandable pool only",
          "[rmm_c][config]") {
  using rmm::c::defragment_threshold_variable;
  using rmm::c::parse_defragment_threshold;
  auto const expandable = resource_kind::expandable;
  CHECK_FALSE(parse_defragment_threshold(expandable, defragment_threshold_variable, {}));
  CHECK_FALSE(parse_defragment_threshold(expandable, defragment_threshold_variable, opt{""}));
  CHECK(parse_defragment_threshold(expandable, defragment_threshold_variable, opt{"off"}) ==
        std::numeric_limits<std::size_t>::max());
  CHECK(parse_defragment_threshold(expandable, defragment_threshold_variable, opt{"0B"}) == 0);
  CHECK(parse_defragment_threshold(expandable, defragment_threshold_variable, opt{"128MB"}) ==
        128 * MiB);
  for (char const* bad : {"sixty", "-1", "64QB", "OFF", "0", "128MiB"}) {
    INFO(bad);
    try {
      (void)parse_defragment_threshold(expandable, defragment_threshold_variable, opt{bad});
      FAIL("no exception");
    } catch (rmm::invalid_argument const& e) {
      CHECK(contains(e.what(), "RMM_C_DEFRAGMENT_THRESHOLD=\"" + std::string{bad} + "\""));
      CHECK(contains(e.what(), "\"off\""));
    }
  }
  for (auto const kind : {resource_kind::pool, resource_kind::arena, resource_kind::cuda}) {
    try {
      (void)parse_defragment_threshold(kind, defragment_threshold_variable, opt{"64MB"});
      FAIL("no exception");
    } catch (rmm::invalid_argument const& e) {
      CHECK(contains(e.what(),
                     "RMM_C_DEFRAGMENT_THRESHOLD=\"64MB\": not supported (resource " +
                         std::string{rmm::c::resource_name(kind)} + ")"));
    }
  }
  // Unset, any resource is fine.
  CHECK_FALSE(parse_defragment_threshold(resource_kind::pool, defragment_threshold_variable, {}));
}

TEST_CASE("a maximum below the initial size is rejected", "[rmm_c][config]") {
  auto const bytes = parse(opt{"pool"}, opt{"2GB"}, opt{"1GB"});
  CHECK_FALSE(bytes.value);
  CHECK(contains(bytes.error, "RMM_C_MAXIMUM_POOL_SIZE=\"1GB\""));
  CHECK(contains(bytes.error, "RMM_C_INITIAL_POOL_SIZE=\"2GB\""));
  CHECK_FALSE(parse(opt{"pool"}, opt{"60%"}, opt{"50%"}).value);
  CHECK(parse(opt{"pool"}, opt{"1GB"}, opt{"1GB"}).value);
  // Different units are compared at installation, against the device's memory.
  CHECK(parse(opt{"pool"}, opt{"1GB"}, opt{"1%"}).value);
}

TEST_CASE("rmm_c_configure's messages name its parameters", "[rmm_c][config]") {
  auto const result = parse_config(rmm::c::configure_names, opt{"pool"}, opt{"1 XB"}, std::nullopt);
  CHECK_FALSE(result.value);
  CHECK(contains(result.error, "rmm_c_configure(initial_size)"));
  CHECK(contains(result.error, "\"1 XB\""));
}

TEST_CASE("the public header compiles as C", "[rmm_c]") { CHECK(rmm_c_header_check_c() == 4); }

// The C functions share one process-wide state: this case runs them in order.
TEST_CASE("C functions: invalid configuration, then configure after first use", "[rmm_c][c_api]") {
  // Invalid rmm_c_configure calls fail, name the parameter and leave nothing configured.
  CHECK(rmm_c_configure("bogus", nullptr, nullptr) != 0);
  CHECK(contains(rmm_c_last_error(), "rmm_c_configure(resource)=\"bogus\""));
  CHECK(rmm_c_configure(nullptr, "12XB", nullptr) != 0);
  CHECK(contains(rmm_c_last_error(), "rmm_c_configure(initial_size)"));

  // The environment is read at the first allocation; an invalid value fails every allocation.
  REQUIRE(setenv("RMM_C_RESOURCE", "bogus", 1) == 0);
  REQUIRE(setenv("RMM_C_INITIAL_POOL_SIZE", "", 1) == 0);
  CHECK(rmm_c_resource_name() == nullptr);
  for (int i = 0; i < 2; ++i) {
    CHECK(rmm_c_alloc(1024, 0, nullptr) == nullptr);
    CHECK(contains(rmm_c_last_error(), "RMM_C_RESOURCE=\"bogus\""));
    CHECK(rmm_c_cupy_malloc(0, 1024, 0) == 0);
  }
  // Fixing the environment afterwards changes nothing: the configuration is sealed.
  REQUIRE(setenv("RMM_C_RESOURCE", "pool", 1) == 0);
  CHECK(rmm_c_alloc(1024, 0, nullptr) == nullptr);
  CHECK(rmm_c_resource_name() == nullptr);

  CHECK(rmm_c_configure("pool", "1GB", nullptr) != 0);
  CHECK(contains(rmm_c_last_error(), "after the first allocation"));

  // Harmless calls.
  CHECK(rmm_c_alloc(0, 0, nullptr) == nullptr);
  rmm_c_free(nullptr, 0, 0, nullptr);
  rmm_c_cupy_free(0, 0, 0);
  CHECK(rmm_c_alloc(-1, 0, nullptr) == nullptr);
  CHECK(contains(rmm_c_last_error(), "negative size"));
  CHECK(rmm_c_get_stats(-1, nullptr) != 0);
  rmm_c_stats stats{};
  REQUIRE(rmm_c_get_stats(-1, &stats) == 0);
  CHECK(stats.bytes_in_use == 0);
  CHECK(stats.allocations == 0);
  CHECK(rmm_c_get_stats(-2, &stats) != 0);
  CHECK(contains(rmm_c_last_error(), "invalid device -2"));
  rmm_c_reset_peak();
  CHECK(rmm_c_release() == 0);
}
