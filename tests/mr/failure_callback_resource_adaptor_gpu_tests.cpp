// failure_callback_resource_adaptor over real device memory: a request the device cannot hold
// reaches the callback with its size and, declined, propagates as rmm::out_of_memory with no CUDA
// error left behind; a callback that frees pool memory makes the retry succeed and the memory
// usable; an upstream that fails its first requests is retried until it succeeds.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

namespace {

using rmm::mr::cuda_memory_resource;
using rmm::mr::failure_callback_resource_adaptor;
using rmm::test::policy_adaptor_fakes::failing_resource;

constexpr std::size_t MiB = std::size_t{1} << 20U;

struct sizes_seen {
  std::vector<std::size_t> sizes;
  bool answer{false};
};

bool record_size(std::size_t bytes, void* arg) {
  auto& seen = *static_cast<sizes_seen*>(arg);
  seen.sizes.push_back(bytes);
  return seen.answer;
}

}  // namespace

TEST_CASE(
    "failure_callback_resource_adaptor: device out of memory reaches the callback; "
    "declined, it propagates",
    "[gpu][failure_callback_resource_adaptor][expected_api_errors]") {
  sizes_seen seen;
  failure_callback_resource_adaptor<> mr{cuda_memory_resource{}, record_size, &seen};
  rmm::cuda_stream stream;
  auto const too_much = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate(stream, too_much, 256), rmm::out_of_memory);
  CHECK_THROWS_AS(mr.allocate_sync(too_much, 256), rmm::out_of_memory);
  CHECK(seen.sizes == std::vector<std::size_t>{too_much, too_much});
  CHECK(cudaGetLastError() == cudaSuccess);

  // A callback for rmm::bad_alloc sees it too (out_of_memory derives from it).
  failure_callback_resource_adaptor<rmm::bad_alloc> broad{
      cuda_memory_resource{}, record_size, &seen};
  CHECK_THROWS_AS(broad.allocate(stream, too_much, 256), rmm::out_of_memory);
  CHECK(seen.sizes.size() == 3);

  void* ptr = mr.allocate(stream, MiB, 256);
  rmm::test::fill_pattern(ptr, MiB, 1, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, MiB, 1, stream.value()) == 0);
  mr.deallocate(stream, ptr, MiB, 256);
}

TEST_CASE(
    "failure_callback_resource_adaptor: a callback that frees pool memory makes the retry "
    "succeed",
    "[gpu][failure_callback_resource_adaptor]") {
  rmm::mr::pool_memory_resource pool{cuda_memory_resource{}, 0, 64 * MiB};
  struct spill_state {
    rmm::mr::pool_memory_resource* pool{nullptr};
    rmm::cuda_stream_view stream;
    void* held{nullptr};
    std::vector<std::size_t> sizes;
  } spill;
  auto spill_callback = [](std::size_t bytes, void* arg) {
    auto& s = *static_cast<spill_state*>(arg);
    s.sizes.push_back(bytes);
    if (s.held == nullptr) {
      return false;
    }
    s.pool->deallocate(s.stream, s.held, 48 * MiB, 256);
    s.held = nullptr;
    return true;
  };
  failure_callback_resource_adaptor<> mr{pool, spill_callback, &spill};
  rmm::cuda_stream stream;
  spill.pool   = &pool;
  spill.stream = stream;
  spill.held   = pool.allocate(stream, 48 * MiB, 256);

  void* ptr = mr.allocate(stream, 32 * MiB, 256);  // 48 + 32 > 64: fails once, then fits
  REQUIRE(ptr != nullptr);
  CHECK(spill.sizes == std::vector<std::size_t>{32 * MiB});
  CHECK(spill.held == nullptr);
  rmm::test::fill_pattern(ptr, 32 * MiB, 7, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 32 * MiB, 7, stream.value()) == 0);

  // Nothing left to free: declined, the pool's exception propagates.
  CHECK_THROWS_AS(mr.allocate(stream, 48 * MiB, 256), rmm::out_of_memory);
  CHECK(spill.sizes.size() == 2);
  mr.deallocate(stream, ptr, 32 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("failure_callback_resource_adaptor: retries an upstream that fails its first requests",
          "[gpu][failure_callback_resource_adaptor]") {
  failing_resource<> upstream{cuda_memory_resource{}, 3};
  sizes_seen seen;
  seen.answer = true;
  failure_callback_resource_adaptor<> mr{upstream, record_size, &seen};
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, 3 * MiB + 5, 256);
  CHECK(seen.sizes == std::vector<std::size_t>(3, 3 * MiB + 5));
  CHECK(upstream.requests().size() == 4);
  rmm::test::fill_pattern(ptr, 3 * MiB + 5, 9, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 3 * MiB + 5, 9, stream.value()) == 0);
  mr.deallocate(stream, ptr, 3 * MiB + 5, 256);

  upstream.fail_next(1);
  void* synced = mr.allocate_sync(MiB, 256);
  RMM_CUDA_TRY(cudaMemset(synced, 0, MiB));
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  mr.deallocate_sync(synced, MiB, 256);
  CHECK(seen.sizes.size() == 4);
}
