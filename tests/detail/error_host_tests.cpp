// <rmm/detail/error.hpp> and <rmm/detail/logging_assert.hpp>, the headers code written for RMM
// includes for the checking macros: every name RMM's headers define is there and means the same.
#include <rmm/detail/error.hpp>
#include <rmm/detail/logging_assert.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("detail/error.hpp: the macros and exception types are reachable", "[error][detail]") {
  CHECK_THROWS_AS([] { RMM_EXPECTS(1 + 1 == 3, "arithmetic"); }(), rmm::logic_error);
  CHECK_THROWS_AS([] { RMM_EXPECTS(false, "custom", std::runtime_error); }(), std::runtime_error);
  CHECK_THROWS_AS([] { RMM_FAIL("unreachable"); }(), rmm::logic_error);
  CHECK_THROWS_AS([] { RMM_CUDA_TRY(cudaErrorInvalidValue); }(), rmm::cuda_error);
  CHECK_THROWS_AS([] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation, 1); }(), rmm::out_of_memory);
  CHECK_NOTHROW([] { RMM_ASSERT_CUDA_SUCCESS(cudaSuccess); }());
  CHECK_NOTHROW([] { RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaSuccess); }());
  STATIC_REQUIRE(std::is_base_of_v<std::bad_alloc, rmm::out_of_memory>);
}

TEST_CASE("detail/error.hpp: RMM_STRINGIFY expands, then stringifies", "[error][detail]") {
#define RMM_TEST_VALUE 42
  CHECK(std::string{RMM_STRINGIFY(RMM_TEST_VALUE)} == "42");
  CHECK(std::string{STRINGIFY_DETAIL(RMM_TEST_VALUE)} == "RMM_TEST_VALUE");
#undef RMM_TEST_VALUE
  CHECK(std::string{"line " RMM_STRINGIFY(__LINE__)} == "line " + std::to_string(__LINE__));
}

TEST_CASE("detail/error.hpp: RMM's per-arity macro names work as the variadic ones",
          "[error][detail]") {
  CHECK_NOTHROW([] { RMM_EXPECTS_2(true, "fine"); }());
  CHECK_THROWS_WITH([] { RMM_EXPECTS_2(false, "two"); }(),
                    StartsWith("RMM failure at: ") && Contains(": two"));
  CHECK_THROWS_AS([] { RMM_EXPECTS_3(false, "three", rmm::out_of_range); }(), rmm::out_of_range);
  CHECK_THROWS_WITH([] { RMM_FAIL_1("one"); }(), StartsWith("RMM failure at:") && Contains("one"));
  CHECK_THROWS_AS([] { RMM_FAIL_2("two", rmm::invalid_argument); }(), rmm::invalid_argument);
  CHECK_THROWS_AS([] { RMM_CUDA_TRY_1(cudaErrorInvalidValue); }(), rmm::cuda_error);
  CHECK_THROWS_AS([] { RMM_CUDA_TRY_2(cudaErrorInvalidValue, std::runtime_error); }(),
                  std::runtime_error);
  CHECK_THROWS_WITH([] { RMM_CUDA_TRY_ALLOC_2(cudaErrorMemoryAllocation, 77); }(),
                    Contains("failed to allocate 77 bytes"));
  CHECK_THROWS_AS([] { RMM_CUDA_TRY_ALLOC_1(cudaErrorInvalidValue); }(), rmm::bad_alloc);
  // The selectors pick by argument count, as in RMM.
  CHECK(std::string{GET_RMM_EXPECTS_MACRO(a, b, c, "third", "second")} == "third");
  CHECK(std::string{GET_RMM_FAIL_MACRO(a, "two", "one")} == "one");
  CHECK(std::string{GET_RMM_CUDA_TRY_MACRO(a, b, "two", "one")} == "two");
  CHECK(std::string{GET_RMM_CUDA_TRY_ALLOC_MACRO(a, b, "two", "one")} == "two");
}

TEST_CASE("detail/logging_assert.hpp: a true assertion passes", "[error][detail]") {
  int evaluated = 0;
  RMM_LOGGING_ASSERT(++evaluated == 1 || true);
#ifdef NDEBUG
  CHECK(evaluated == 0);  // release builds do not evaluate the expression, as assert()
#else
  CHECK(evaluated == 1);
#endif
}
