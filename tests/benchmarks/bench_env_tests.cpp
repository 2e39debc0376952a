// benchmarks/bench_env.hpp, on the host: env_clamped, which reads RMM_BENCH_SEEDS and
// RMM_BENCH_STACK_SHIFT. Unset gives the fallback as it is (0: the benchmarks run as before);
// a value is clamped into the bounds; text that is not a number reads as 0, then clamped.
#include "bench_env.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

namespace {

namespace rb = rmm::bench;

constexpr char const* name = "RMM_BENCH_TEST_ENV_CLAMPED";  // no benchmark reads it

long long read_as(char const* value, long long fallback, long long lo, long long hi) {
  if (value == nullptr) {
    ::unsetenv(name);
  } else {
    ::setenv(name, value, 1);
  }
  long long const v = rb::env_clamped(name, fallback, lo, hi);
  ::unsetenv(name);
  return v;
}

}  // namespace

TEST_CASE("bench env: unset gives the fallback, not clamped", "[bench][env]") {
  CHECK(read_as(nullptr, 0, 0, 65536) == 0);
  CHECK(read_as(nullptr, 1, 1, 1000000) == 1);
  CHECK(read_as(nullptr, -5, 0, 10) == -5);
}

TEST_CASE("bench env: values are clamped into the bounds", "[bench][env]") {
  CHECK(read_as("64", 1, 1, 1000000) == 64);
  CHECK(read_as("0", 1, 1, 1000000) == 1);
  CHECK(read_as("-3", 0, 0, 65536) == 0);
  CHECK(read_as("99999999", 0, 0, 65536) == 65536);
  CHECK(read_as("4096", 0, 0, 65536) == 4096);
}

TEST_CASE("bench env: text that is not a number reads as 0", "[bench][env]") {
  CHECK(read_as("abc", 7, 0, 100) == 0);
  CHECK(read_as("", 7, 1, 100) == 1);
}
