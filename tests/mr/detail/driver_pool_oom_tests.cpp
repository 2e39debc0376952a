/**
 * @file driver_pool_oom_tests.cpp
 * @brief The out-of-memory reports of the driver pools (detail/mechanics/driver_pool_oom.hpp)
 * without a GPU: over a null pool, whose attributes cannot be read, every report still names the
 * request, the limit or max_size, the stream and the reason; the device fields are the current
 * device's (none without a GPU). The driver's own refusal (cudaMallocFromPoolAsync) is covered by
 * the GPU suite.
 */
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/driver_pool_oom.hpp>
#include "../../utilities/oom_report_checks.hpp"

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

using rmm::test::no_cuda_error_left;
using rmm::test::report_of;

namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

cudaStream_t const fake_stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1234});

void check_current_device(rmm::out_of_memory_report const& r) {
  rmm::out_of_memory_report expected;
  rmm::detail::add_device_memory(expected);
  CHECK(r.device == expected.device);
  CHECK(r.device_total_bytes == expected.device_total_bytes);
}

}  // namespace

TEST_CASE("driver pool report: above the limit", "[driver_pool][oom]") {
  auto const r = report_of([] {
    rmm::mr::detail::throw_above_limit(
        "cuda_async_memory_resource", nullptr, 5000, fake_stream, -1, 8000, 4000);
  });
  CHECK(r.resource == "cuda_async_memory_resource");
  CHECK(r.requested_bytes == 5000);
  CHECK(r.used_bytes == std::size_t{4000});
  CHECK(r.maximum_bytes == std::size_t{8000});
  CHECK_FALSE(r.reserved_bytes);  // the null pool's attributes cannot be read
  CHECK(r.stream == std::uintptr_t{0x1234});
  CHECK_THAT(r.reason, StartsWith("the limit of 8000 bytes would be exceeded (4000 bytes used "));
  check_current_device(r);
  CHECK(no_cuda_error_left());
}

TEST_CASE("driver pool report: above max_size", "[driver_pool][oom]") {
  auto const r = report_of([] {
    rmm::mr::detail::throw_above_max_size(
        "cuda_async_pinned_memory_resource", nullptr, 9000, fake_stream, -1, 4096);
  });
  CHECK(r.resource == "cuda_async_pinned_memory_resource");
  CHECK(r.requested_bytes == 9000);
  CHECK(r.maximum_bytes == std::size_t{4096});
  CHECK(r.reason == "larger than the pool's max_size of 4096 bytes");
  CHECK(r.stream == std::uintptr_t{0x1234});
  check_current_device(r);
}

TEST_CASE("driver pool report: the driver refused", "[driver_pool][oom]") {
  auto const r = report_of([] {
    rmm::mr::detail::throw_pool_allocation_error(cudaErrorMemoryAllocation,
                                                 "cuda_async_memory_resource",
                                                 nullptr,
                                                 123,
                                                 fake_stream,
                                                 -1,
                                                 0,
                                                 0);
  });
  CHECK(r.requested_bytes == 123);
  CHECK_FALSE(r.maximum_bytes);  // no limit, no max_size
  CHECK_THAT(r.reason,
             StartsWith("cudaMallocFromPoolAsync returned cudaErrorMemoryAllocation") &&
                 Contains("no limit"));
  // Another error is a bad_alloc, not an out_of_memory.
  try {
    rmm::mr::detail::throw_pool_allocation_error(
        cudaErrorInvalidValue, "cuda_async_memory_resource", nullptr, 1, fake_stream, -1, 64, 0);
  } catch (rmm::out_of_memory const&) {
    FAIL("cudaErrorInvalidValue is not out of memory");
  } catch (rmm::bad_alloc const& e) {
    CHECK_THAT(e.what(), Contains("limit 64 bytes") && Contains("[maximum 64 bytes"));
  }
}

TEST_CASE("driver pool report: the maximum is the tighter of limit and max_size",
          "[driver_pool][oom]") {
  using rmm::mr::detail::pool_maximum;
  CHECK_FALSE(pool_maximum(0, 0));
  CHECK(pool_maximum(10, 0) == std::size_t{10});
  CHECK(pool_maximum(0, 20) == std::size_t{20});
  CHECK(pool_maximum(30, 20) == std::size_t{20});
  CHECK(pool_maximum(10, 20) == std::size_t{10});
}
