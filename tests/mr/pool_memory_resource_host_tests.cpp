// pool_memory_resource's out-of-memory report, over simulated_memory_resource (no GPU needed:
// with initial size 0 on one stream the pool makes no CUDA call that can fail): each refusal
// (the maximum, a failing upstream, a request no pool can hold, a sharded pool) and every field.
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/pool_memory_resource_impl.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>
#include <rmm/out_of_memory_report.hpp>
#include "../utilities/oom_report_checks.hpp"

#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using rmm::test::no_cuda_error_left;
using rmm::test::report_of;

namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using rmm::mr::pool_memory_resource;
using rmm::mr::simulated_memory_resource;
constexpr std::size_t MiB   = std::size_t{1} << 20U;
constexpr std::size_t align = 256;
cuda::stream_ref const stream{cudaStream_t{nullptr}};

// The device fields: empty without a GPU; on a machine with one, the current device's.
void check_device_fields(rmm::out_of_memory_report const& r) {
  rmm::out_of_memory_report expected;
  rmm::detail::add_device_memory(expected);
  CHECK(r.device == expected.device);
  CHECK(r.device_total_bytes == expected.device_total_bytes);
  CHECK(r.device_free_bytes.has_value() == expected.device_free_bytes.has_value());
}

}  // namespace

TEST_CASE("pool report: the maximum would be exceeded", "[pool][oom][simulated]") {
  simulated_memory_resource up{256 * MiB};
  pool_memory_resource pool{up, 0, 32 * MiB};
  void* a = pool.allocate(stream, 20 * MiB, align);  // the pool takes one chunk of 32 MiB
  REQUIRE(pool.pool_size() == 32 * MiB);
  auto const r = report_of([&] { static_cast<void>(pool.allocate(stream, 16 * MiB + 1, align)); });
  CHECK(r.resource == "pool_memory_resource");
  CHECK(r.requested_bytes == 16 * MiB + 1);
  CHECK(r.reserved_bytes == 32 * MiB);
  CHECK(r.free_bytes == 12 * MiB);
  CHECK(r.largest_free_block == 12 * MiB);
  CHECK(r.maximum_bytes == 32 * MiB);
  CHECK_FALSE(r.used_bytes);
  CHECK(r.stream == std::uintptr_t{0});
  check_device_fields(r);
  CHECK_THAT(r.reason,
             StartsWith("(" + std::to_string(16 * MiB + 256) + " after rounding): ") &&
                 Contains("pool size 33554432 bytes") && Contains("would exceed the maximum"));
  CHECK_THAT(to_string(r),
             StartsWith("pool_memory_resource: cannot allocate 16777217 bytes (16777472 after "
                        "rounding)") &&
                 Contains("[reserved 33554432 bytes; free 12582912 bytes; largest free block "
                          "12582912 bytes; maximum 33554432 bytes"));
  pool.deallocate(stream, a, 20 * MiB, align);
}

TEST_CASE("pool report: the upstream failed", "[pool][oom][simulated]") {
  simulated_memory_resource up{16 * MiB};
  pool_memory_resource pool{up, 0};
  auto const r = report_of([&] { static_cast<void>(pool.allocate(stream, 20 * MiB, align)); });
  CHECK(r.requested_bytes == 20 * MiB);
  CHECK(r.reserved_bytes == std::size_t{0});
  CHECK(r.free_bytes == std::size_t{0});
  CHECK(r.largest_free_block == std::size_t{0});
  CHECK_FALSE(r.maximum_bytes);  // no maximum
  check_device_fields(r);
  // The upstream's report is quoted, without its device.
  CHECK_THAT(r.reason,
             Contains("upstream failed to allocate 20971520 bytes: "
                      "simulated_memory_resource: cannot allocate 20971520 bytes: 0 of "
                      "the capacity of 16777216 bytes are in use [used 0 bytes") &&
                 Contains("maximum 16777216 bytes]"));
  CHECK(up.current_bytes() == 0);
}

TEST_CASE("pool report: a request no pool can hold", "[pool][oom][simulated]") {
  simulated_memory_resource up{64 * MiB};
  pool_memory_resource pool{up, 0, 8 * MiB};
  void* a         = pool.allocate(stream, MiB, align);
  auto const huge = std::numeric_limits<std::size_t>::max() - 10;
  auto const r    = report_of([&] { static_cast<void>(pool.allocate(stream, huge, align)); });
  CHECK(r.requested_bytes == huge);
  CHECK(r.reason == "larger than any pool can hold");
  CHECK(r.reserved_bytes == 8 * MiB);
  CHECK(r.free_bytes == 7 * MiB);
  CHECK(r.largest_free_block == 7 * MiB);
  CHECK(r.maximum_bytes == 8 * MiB);
  CHECK(r.stream == std::uintptr_t{0});
  check_device_fields(r);
  pool.deallocate(stream, a, MiB, align);
}

TEST_CASE("pool report: a sharded pool reports the shard and the root", "[pool][oom][simulated]") {
  simulated_memory_resource up{256 * MiB};
  pool_memory_resource pool{up, 0, 64 * MiB};
  rmm::mr::detail::shared_state<rmm::mr::detail::pool_memory_resource_impl>(pool).enable_sharding();
  void* a      = pool.allocate(stream, 40 * MiB, align);
  auto const r = report_of([&] { static_cast<void>(pool.allocate(stream, 32 * MiB, align)); });
  CHECK(r.resource == "pool_memory_resource");
  CHECK(r.requested_bytes == 32 * MiB);
  CHECK(r.reserved_bytes == pool.pool_size());  // the root gave back what it took in vain
  CHECK(r.maximum_bytes == 64 * MiB);
  CHECK(r.free_bytes == pool.free_bytes());
  CHECK(r.largest_free_block == pool.largest_free_block());
  CHECK(r.stream == std::uintptr_t{0});
  CHECK_THAT(r.reason,
             StartsWith("(33554432 after rounding): no free block fits in shard ") &&
                 Contains("after the other shards gave their free pieces back, the "
                          "pool's root: no free block fits in the pool size"));
  pool.deallocate(stream, a, 40 * MiB, align);
}
