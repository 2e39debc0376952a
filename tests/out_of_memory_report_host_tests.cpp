// rmm::out_of_memory_report and the exception that carries it (<rmm/out_of_memory_report.hpp>,
// <rmm/error.hpp>): the message is written from the fields, copies share the report, exceptions
// made from a plain string have none; and the helpers that fill and quote reports
// (<rmm/detail/oom_device_info.hpp>, <rmm/detail/oom_report.hpp>). No GPU needed: where the
// machine has one, only the device fields differ, and the tests accept both.
#include <rmm/detail/error.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/out_of_memory_report.hpp>
#include "utilities/oom_report_checks.hpp"

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <type_traits>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

using rmm::test::no_cuda_error_left;
using rmm::test::report_of;

namespace {

rmm::out_of_memory_report full_report() {
  rmm::out_of_memory_report r;
  r.resource           = "pool_memory_resource";
  r.requested_bytes    = 1024;
  r.reason             = "the limit of 4096 bytes would be exceeded";
  r.reserved_bytes     = 8192;
  r.used_bytes         = 6144;
  r.free_bytes         = 2048;
  r.largest_free_block = 512;
  r.maximum_bytes      = 8192;
  r.device             = 0;
  r.device_free_bytes  = 100;
  r.device_total_bytes = 200;
  r.stream             = 0x2a;
  return r;
}

// The device fields are all empty (no device) or name a device whose memory is known.
void check_device_fields(rmm::out_of_memory_report const& r) {
  if (r.device) {
    CHECK(*r.device >= 0);
    CHECK(r.device_free_bytes.has_value() == r.device_total_bytes.has_value());
    if (r.device_total_bytes) {
      CHECK(*r.device_free_bytes <= *r.device_total_bytes);
    }
  } else {
    CHECK_FALSE(r.device_free_bytes);
    CHECK_FALSE(r.device_total_bytes);
  }
}

}  // namespace

TEST_CASE("out_of_memory_report: every field is written with its name, in order", "[oom]") {
  CHECK(rmm::to_string(full_report()) ==
        "pool_memory_resource: cannot allocate 1024 bytes: the limit of 4096 bytes would be "
        "exceeded [reserved 8192 bytes; used 6144 bytes; free 2048 bytes; largest free block 512 "
        "bytes; maximum 8192 bytes; device 0 free 100 of 200 bytes; stream 0x2a]");
}

TEST_CASE("out_of_memory_report: empty fields are left out", "[oom]") {
  rmm::out_of_memory_report r;
  r.resource        = "simulated_memory_resource";
  r.requested_bytes = 7;
  CHECK(rmm::to_string(r) == "simulated_memory_resource: cannot allocate 7 bytes");
  r.reason = "(256 after rounding): no room";
  CHECK(rmm::to_string(r) ==
        "simulated_memory_resource: cannot allocate 7 bytes (256 after rounding): no room");
  r.device = 3;  // memory unknown
  r.stream = 0;
  CHECK(rmm::to_string(r) ==
        "simulated_memory_resource: cannot allocate 7 bytes (256 after rounding): no room "
        "[device 3; stream 0x0]");
  r.requested_bytes = 0;  // not a request (creating a driver pool)
  CHECK_THAT(rmm::to_string(r), StartsWith("simulated_memory_resource: cannot allocate ("));
}

TEST_CASE("out_of_memory_report: without a resource, RMM's layout", "[oom]") {
  rmm::out_of_memory_report r;
  r.reason = "CUDA error (failed to allocate 64 bytes) at: f.cpp:1: cudaErrorMemoryAllocation";
  r.requested_bytes    = 64;
  r.device             = 1;
  r.device_free_bytes  = 5;
  r.device_total_bytes = 9;
  CHECK(rmm::to_string(r) ==
        "CUDA error (failed to allocate 64 bytes) at: f.cpp:1: cudaErrorMemoryAllocation; "
        "requested 64 bytes on device 1; device free 5 of 9 bytes");
  r.reserved_bytes = 3;
  CHECK_THAT(rmm::to_string(r), Contains("device free 5 of 9 bytes [reserved 3 bytes]"));
}

TEST_CASE("out_of_memory: built from a report, the message is the report's", "[oom]") {
  rmm::out_of_memory const e{full_report()};
  CHECK(std::string{e.what()} == "std::bad_alloc: out_of_memory: " + rmm::to_string(full_report()));
  REQUIRE(e.report() != nullptr);
  auto const& r = *e.report();
  CHECK(r.resource == "pool_memory_resource");
  CHECK(r.requested_bytes == 1024);
  CHECK(r.reason == "the limit of 4096 bytes would be exceeded");
  CHECK(r.reserved_bytes == std::size_t{8192});
  CHECK(r.used_bytes == std::size_t{6144});
  CHECK(r.free_bytes == std::size_t{2048});
  CHECK(r.largest_free_block == std::size_t{512});
  CHECK(r.maximum_bytes == std::size_t{8192});
  CHECK(r.device == 0);
  CHECK(r.device_free_bytes == std::size_t{100});
  CHECK(r.device_total_bytes == std::size_t{200});
  CHECK(r.stream == std::uintptr_t{0x2a});
  std::bad_alloc const& as_std = e;
  CHECK_THAT(as_std.what(), StartsWith("std::bad_alloc: out_of_memory: pool_memory_resource"));
}

TEST_CASE("out_of_memory: copies share the report and never throw", "[oom]") {
  STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<rmm::out_of_memory>);
  STATIC_REQUIRE(std::is_nothrow_copy_assignable_v<rmm::out_of_memory>);
  STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<rmm::bad_alloc>);
  rmm::out_of_memory const e{full_report()};
  rmm::out_of_memory const copy = e;  // NOLINT(performance-unnecessary-copy-initialization)
  CHECK(copy.report() == e.report());
  CHECK(std::string{copy.what()} == e.what());
  // Thrown and caught by value, through std::exception_ptr: the report survives.
  std::exception_ptr p;
  try {
    throw e;
  } catch (...) {
    p = std::current_exception();
  }
  try {
    std::rethrow_exception(p);
  } catch (rmm::out_of_memory const& caught) {
    REQUIRE(caught.report() != nullptr);
    CHECK(caught.report()->requested_bytes == 1024);
  }
}

TEST_CASE("out_of_memory: a plain string has no report", "[oom]") {
  rmm::out_of_memory const from_string{std::string{"asked 42 bytes"}};
  CHECK(from_string.report() == nullptr);
  CHECK(std::string{from_string.what()} == "std::bad_alloc: out_of_memory: asked 42 bytes");
  rmm::out_of_memory const from_literal{"asked 43 bytes"};
  CHECK(from_literal.report() == nullptr);
  CHECK_THROWS_AS([] { RMM_FAIL("no room", rmm::out_of_memory); }(), rmm::out_of_memory);
}

TEST_CASE("RMM_CUDA_TRY_ALLOC: a report without a resource, RMM's text first", "[oom]") {
  auto const r = report_of([] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation, 4096); });
  CHECK(r.resource.empty());
  CHECK(r.requested_bytes == 4096);
  CHECK_THAT(r.reason,
             StartsWith("CUDA error (failed to allocate 4096 bytes) at: ") &&
                 Contains("cudaErrorMemoryAllocation") && Contains("error code 2"));
  CHECK_FALSE(r.stream);
  check_device_fields(r);
  auto const unsized = report_of([] { RMM_CUDA_TRY_ALLOC(cudaErrorMemoryAllocation); });
  CHECK(unsized.requested_bytes == 0);
  CHECK_THAT(rmm::to_string(unsized), StartsWith("CUDA error at: ") && !Contains("requested"));
}

TEST_CASE("throw_resource_cuda_alloc_error: the resource, the call, the device", "[oom]") {
  auto const r = report_of([] {
    rmm::detail::throw_resource_cuda_alloc_error(
        "cuda_memory_resource", cudaErrorMemoryAllocation, "cudaMalloc", 777);
  });
  CHECK(r.resource == "cuda_memory_resource");
  CHECK(r.requested_bytes == 777);
  CHECK_THAT(r.reason, StartsWith("cudaMalloc returned cudaErrorMemoryAllocation"));
  check_device_fields(r);
  // Any other error is a bad_alloc with the same text, and no out_of_memory.
  try {
    rmm::detail::throw_resource_cuda_alloc_error(
        "cuda_memory_resource", cudaErrorInvalidValue, "cudaMalloc", 5);
  } catch (rmm::out_of_memory const&) {
    FAIL("cudaErrorInvalidValue is not out of memory");
  } catch (rmm::bad_alloc const& e) {
    CHECK_THAT(e.what(),
               StartsWith("std::bad_alloc: cuda_memory_resource: cannot allocate 5 bytes: "
                          "cudaMalloc returned cudaErrorInvalidValue"));
  }
  CHECK(no_cuda_error_left());
}

TEST_CASE("add_device_memory never throws and leaves no CUDA error", "[oom]") {
  STATIC_REQUIRE(
      noexcept(rmm::detail::add_device_memory(std::declval<rmm::out_of_memory_report&>())));
  rmm::out_of_memory_report r;
  rmm::detail::add_device_memory(r);
  check_device_fields(r);
  rmm::out_of_memory_report other;
  rmm::detail::add_device_memory(other, 4096);  // no such device: device named, memory unknown
  CHECK(other.device == 4096);
  CHECK_FALSE(other.device_total_bytes);
  CHECK(no_cuda_error_left());
}

TEST_CASE("oom_report helpers quote an upstream's failure", "[oom]") {
  rmm::out_of_memory const plain{"capacity_resource: full"};
  CHECK(rmm::detail::oom_message(plain) == "capacity_resource: full");
  CHECK(rmm::detail::upstream_failure(plain) == "capacity_resource: full");
  CHECK(rmm::detail::oom_message(std::bad_alloc{}) == std::bad_alloc{}.what());
  // A report is quoted without its device and stream (the asking resource gives its own).
  rmm::out_of_memory const reported{full_report()};
  std::string const quoted = rmm::detail::upstream_failure(reported);
  CHECK_THAT(quoted,
             StartsWith("pool_memory_resource: cannot allocate 1024 bytes") &&
                 Contains("reserved 8192 bytes") && !Contains("device 0") && !Contains("stream"));
}

TEST_CASE("adaptor_report: the upstream's figures under the adaptor's name", "[oom]") {
  rmm::out_of_memory const reported{full_report()};
  auto const r =
      rmm::detail::adaptor_report("aligned_resource_adaptor", 1000, "(1024 padded) ", reported);
  CHECK(r.resource == "aligned_resource_adaptor");
  CHECK(r.requested_bytes == 1000);
  CHECK(r.reason ==
        "(1024 padded) pool_memory_resource could not allocate 1024 bytes: the limit "
        "of 4096 bytes would be exceeded");
  CHECK(r.reserved_bytes == std::size_t{8192});
  CHECK(r.device == 0);
  CHECK(r.stream == std::uintptr_t{0x2a});
  auto const from_plain = rmm::detail::adaptor_report(
      "aligned_resource_adaptor", 1000, "", rmm::out_of_memory{"capacity_resource: full"});
  CHECK(from_plain.reason == "capacity_resource: full");
  CHECK_FALSE(from_plain.reserved_bytes);
}
