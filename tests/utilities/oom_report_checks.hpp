// Shared by the tests of rmm::out_of_memory_report (host and GPU): the report of an exception a
// callable throws, and whether a test left a CUDA error behind.
#pragma once

#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace rmm::test {

/**
 * @brief The report of the rmm::out_of_memory that @p f throws (a copy). Fails the test if @p f
 * throws none or one without a report, and checks that the message is the report's.
 */
template <typename F>
rmm::out_of_memory_report report_of(F&& f) {
  try {
    f();
  } catch (rmm::out_of_memory const& e) {
    REQUIRE(e.report() != nullptr);
    CHECK(std::string{e.what()} == "std::bad_alloc: out_of_memory: " + to_string(*e.report()));
    return *e.report();
  }
  FAIL("no rmm::out_of_memory");
  return {};
}

/// @brief True unless a device exists and the runtime holds an error. Without a device (or
/// driver) the runtime reports its missing initialisation on every call, so only a machine with
/// a GPU can tell whether an error was left behind.
inline bool no_cuda_error_left() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    return true;
  }
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace rmm::test
