#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <new>
#include <string>

using Catch::Matchers::Contains;

TEST_CASE("exception hierarchy matches the standard types", "[error]") {
  STATIC_REQUIRE(std::is_base_of_v<std::logic_error, rmm::logic_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, rmm::cuda_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::bad_alloc, rmm::bad_alloc>);
  STATIC_REQUIRE(std::is_base_of_v<rmm::bad_alloc, rmm::out_of_memory>);
  STATIC_REQUIRE(std::is_base_of_v<std::out_of_range, rmm::out_of_range>);
  STATIC_REQUIRE(std::is_base_of_v<std::invalid_argument, rmm::invalid_argument>);
}

TEST_CASE("bad_alloc and out_of_memory carry their message", "[error]") {
  rmm::bad_alloc const plain{"no luck"};
  CHECK(std::string{plain.what()} == "std::bad_alloc: no luck");
  rmm::out_of_memory const oom{std::string{"asked 42 bytes"}};
  CHECK_THAT(oom.what(), Contains("out_of_memory") && Contains("asked 42 bytes"));
  std::bad_alloc const& as_std = oom;
  CHECK_THAT(as_std.what(), Contains("out_of_memory"));
}

TEST_CASE("RMM_EXPECTS throws logic_error with reason and location", "[error]") {
  int const value = 7;
  CHECK_NOTHROW([&] { RMM_EXPECTS(value == 7, "unused"); }());
  CHECK_THROWS_MATCHES([&] { RMM_EXPECTS(value == 8, "value was " + std::to_string(value)); }(),
                       rmm::logic_error,
                       Catch::Matchers::Predicate<rmm::logic_error>([](auto const& e) {
                         std::string const what = e.what();
                         return what.find("value was 7") != std::string::npos &&
                                what.find("error_tests.cpp") != std::string::npos;
                       }));
}

TEST_CASE("RMM_EXPECTS and RMM_FAIL messages are RMM's", "[error]") {
  // RMM: "RMM failure at: FILE:LINE: reason" for RMM_EXPECTS, "RMM failure at:FILE:LINE: reason"
  // (no space) for RMM_FAIL.
  int line = 0;
  try {
    line = __LINE__ + 1;
    RMM_EXPECTS(false, "the reason");
    FAIL("no exception");
  } catch (rmm::logic_error const& e) {
    CHECK(std::string{e.what()} ==
          std::string{"RMM failure at: "} + __FILE__ + ":" + std::to_string(line) + ": the reason");
  }
  try {
    line = __LINE__ + 1;
    RMM_FAIL(std::string{"failed "} + "here", rmm::invalid_argument);
    FAIL("no exception");
  } catch (rmm::invalid_argument const& e) {
    CHECK(std::string{e.what()} ==
          std::string{"RMM failure at:"} + __FILE__ + ":" + std::to_string(line) + ": failed here");
  }
}

TEST_CASE("RMM_EXPECTS and RMM_FAIL honour a custom exception type", "[error]") {
  CHECK_THROWS_AS([&] { RMM_EXPECTS(false, "range", rmm::out_of_range); }(), rmm::out_of_range);
  CHECK_THROWS_AS([&] { RMM_FAIL("boom"); }(), rmm::logic_error);
  CHECK_THROWS_WITH([&] { RMM_FAIL("boom 13", rmm::invalid_argument); }(), Contains("boom 13"));
  CHECK_THROWS_AS([&] { RMM_FAIL("boom", rmm::invalid_argument); }(), rmm::invalid_argument);
}

TEST_CASE("RMM_CUDA_TRY names the call and the error", "[error]") {
  CHECK_NOTHROW([&] { RMM_CUDA_TRY(cudaSuccess); }());
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY(cudaErrorInvalidValue); }(), rmm::cuda_error);
  CHECK_THROWS_WITH([&] { RMM_CUDA_TRY(cudaErrorInvalidValue); }(),
                    Contains("cudaErrorInvalidValue") && Contains("error_tests.cpp"));
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY(cudaErrorInvalidValue, rmm::logic_error); }(),
                  rmm::logic_error);
}

TEST_CASE("RMM_CUDA_TRY messages begin with RMM's text", "[error]") {
  // RMM: "CUDA error at: FILE:LINE: cudaErrorName error string"; this library adds the call.
  int line = 0;
  try {
    line = __LINE__ + 1;
    RMM_CUDA_TRY(cudaErrorInvalidValue);
    FAIL("no exception");
  } catch (rmm::cuda_error const& e) {
    std::string const rmm_text = std::string{"CUDA error at: "} + __FILE__ + ":" +
                                 std::to_string(line) + ": cudaErrorInvalidValue " +
                                 cudaGetErrorString(cudaErrorInvalidValue);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith(rmm_text) && Contains("error code 1"));
  }
}

TEST_CASE("RMM_CUDA_TRY_ALLOC messages begin with RMM's text", "[error]") {
  // RMM: "CUDA error (failed to allocate N bytes) at: FILE:LINE: name string" with the size,
  // "CUDA error at: FILE:LINE: name string" without; the what() of rmm::out_of_memory puts
  // "std::bad_alloc: out_of_memory: " before the message, as RMM's does.
  int line = 0;
  try {
    line = __LINE__ + 1;
    RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation, 4096);
    FAIL("no exception");
  } catch (rmm::out_of_memory const& e) {
    std::string const rmm_text = std::string{"std::bad_alloc: out_of_memory: "} +
                                 "CUDA error (failed to allocate 4096 bytes) at: " + __FILE__ +
                                 ":" + std::to_string(line) + ": cudaErrorMemoryAllocation " +
                                 cudaGetErrorString(cudaErrorMemoryAllocation);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith(rmm_text));
  }
  try {
    line = __LINE__ + 1;
    RMM_CUDA_TRY_ALLOC(cudaErrorInvalidValue);
    FAIL("no exception");
  } catch (rmm::bad_alloc const& e) {
    std::string const rmm_text = std::string{"std::bad_alloc: CUDA error at: "} + __FILE__ + ":" +
                                 std::to_string(line) + ": cudaErrorInvalidValue " +
                                 cudaGetErrorString(cudaErrorInvalidValue);
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith(rmm_text) && !Contains("requested"));
  }
}

TEST_CASE("RMM_CUDA_TRY_ALLOC maps out-of-memory to out_of_memory", "[error]") {
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation, 123456); }(),
                  rmm::out_of_memory);
  CHECK_THROWS_WITH([&] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation, 123456); }(),
                    Contains("out_of_memory") && Contains("requested 123456 bytes") &&
                        Contains("cudaErrorMemoryAllocation"));
  // Any other failure is a bad_alloc that is not an out_of_memory.
  try {
    RMM_CUDA_TRY_ALLOC(cudaErrorInvalidValue, 64);
    FAIL("RMM_CUDA_TRY_ALLOC did not throw");
  } catch (rmm::out_of_memory const&) {
    FAIL("cudaErrorInvalidValue must not map to out_of_memory");
  } catch (rmm::bad_alloc const& e) {
    CHECK_THAT(e.what(), Contains("requested 64 bytes"));
  }
  CHECK_THROWS_AS([&] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation); }(), rmm::out_of_memory);
}
