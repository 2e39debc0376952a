// One conformance suite, run against every resource. Built twice: with the legacy default stream
// and with the per-thread default stream (rmm_gpu_tests / rmm_gpu_tests_ptds).
#include "conformance_factories.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

TEMPLATE_TEST_CASE("conformance: properties and concepts",
                   "[gpu][conformance]",
                   RMM_CONFORMANCE_FACTORIES) {
  using resource_t = decltype(TestType::make());
  STATIC_REQUIRE(cuda::mr::resource_with<resource_t, cuda::mr::device_accessible>);
  STATIC_REQUIRE(cuda::mr::synchronous_resource_with<resource_t, cuda::mr::device_accessible>);
  STATIC_REQUIRE(cuda::has_property<resource_t, cuda::mr::host_accessible> ==
                 TestType::host_accessible);
  STATIC_REQUIRE(std::is_copy_constructible_v<resource_t>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<resource_t>);
}

TEMPLATE_TEST_CASE("conformance: sizes from 0 to 1 GiB",
                   "[gpu][conformance]",
                   RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr = TestType::make();
  rmm::cuda_stream stream;
  CHECK(mr.allocate(stream, 0, 256) == nullptr);
  mr.deallocate(stream, nullptr, 0, 256);
  std::uint32_t seed = 1;
  for (std::size_t bytes : {std::size_t{1},
                            std::size_t{255},
                            std::size_t{256},
                            std::size_t{257},
                            4 * KiB + 1,
                            MiB + 3,
                            64 * MiB,
                            GiB}) {
    if (bytes > max_request_of<TestType>::value) {
      continue;
    }
    INFO(TestType::name << ": " << bytes << " bytes");
    void* ptr = mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    REQUIRE(ptr != nullptr);
    CHECK(rmm::is_pointer_aligned(ptr, rmm::CUDA_ALLOCATION_ALIGNMENT));
    check_pattern(ptr, bytes, ++seed, stream);
    if constexpr (TestType::host_accessible) {
      CHECK(rmm::test::count_pattern_mismatches_host(ptr, std::min(bytes, 4 * MiB), seed) == 0);
    }
    mr.deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  void* synced = mr.allocate_sync(MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
  RMM_CUDA_TRY(cudaMemset(synced, 0xab, MiB));
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  mr.deallocate_sync(synced, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

TEMPLATE_TEST_CASE("conformance: alignment", "[gpu][conformance]", RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr = TestType::make();
  rmm::cuda_stream stream;
  for (std::size_t alignment = 1; alignment <= rmm::CUDA_ALLOCATION_ALIGNMENT; alignment *= 2) {
    INFO("alignment " << alignment);
    void* ptr = mr.allocate(stream, 1000, alignment);
    CHECK(rmm::is_pointer_aligned(ptr, std::max(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT)));
    mr.deallocate(stream, ptr, 1000, alignment);
  }
  // Callback resources delegate alignment to the callback; the others check it.
  if constexpr (!std::is_same_v<TestType, callback_factory>) {
    CHECK_THROWS_AS(mr.allocate(stream, 1000, 3), rmm::logic_error);
    CHECK_THROWS_WITH(mr.allocate(stream, 1000, 3),
                      Contains("alignment 3 is not a power of two") && Contains(TestType::name));
    CHECK_THROWS_WITH(mr.allocate(stream, 1000, std::size_t{1} << 20),
                      Contains("alignment 1048576 exceeds"));
  }
}

TEMPLATE_TEST_CASE("conformance: live allocations are distinct and keep their data",
                   "[gpu][conformance]",
                   RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr = TestType::make();
  rmm::cuda_stream stream;
  std::mt19937_64 rng{7};
  std::uniform_int_distribution<std::size_t> size_dist{1, 2 * MiB};
  struct block {
    void* ptr;
    std::size_t bytes;
    std::uint32_t seed;
  };
  std::vector<block> blocks;
  for (std::uint32_t i = 0; i < 100; ++i) {
    auto const bytes = size_dist(rng);
    void* ptr        = mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    rmm::test::fill_pattern(ptr, bytes, i, stream.value());
    blocks.push_back({ptr, bytes, i});
  }
  auto sorted = blocks;
  std::sort(
      sorted.begin(), sorted.end(), [](auto const& a, auto const& b) { return a.ptr < b.ptr; });
  std::size_t overlaps = 0;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    auto const prev_end = static_cast<char*>(sorted[i - 1].ptr) + sorted[i - 1].bytes;
    if (prev_end > static_cast<char*>(sorted[i].ptr)) {
      ++overlaps;
    }
  }
  CHECK(overlaps == 0);
  std::size_t mismatches = 0;
  for (auto const& b : blocks) {
    mismatches += rmm::test::count_pattern_mismatches(b.ptr, b.bytes, b.seed, stream.value());
  }
  CHECK(mismatches == 0);
  for (auto const& b : blocks) {
    mr.deallocate(stream, b.ptr, b.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

TEMPLATE_TEST_CASE("conformance: equality, copies and type erasure",
                   "[gpu][conformance]",
                   RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr   = TestType::make();
  auto copy = mr;
  CHECK(copy == mr);
  CHECK_FALSE(copy != mr);
  any_device_resource owning{copy};
  rmm::device_async_resource_ref ref{mr};
  rmm::device_async_resource_ref ref_to_owning{owning};
  CHECK(ref == ref_to_owning);
  rmm::device_resource_ref sync_ref{ref};
  void* ptr = sync_ref.allocate_sync(4096, 256);
  // Memory from one copy is freed through another: copies are interchangeable.
  owning.deallocate_sync(ptr, 4096, 256);
  auto moved = std::move(copy);
  CHECK(moved == mr);
}

TEMPLATE_TEST_CASE("conformance: many threads", "[gpu][conformance]", RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr                   = TestType::make();
  constexpr int num_threads = 16;
  std::atomic<std::size_t> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  // A new thread starts on device 0: each makes the resource's device current (the suite may run
  // with another device current, RMM_TEST_DEVICE; docs/multi-gpu.md).
  auto const device = rmm::get_current_cuda_device();
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        rmm::cuda_set_device_raii const on_device{device};
        rmm::cuda_stream stream;
        std::mt19937_64 rng{static_cast<std::uint64_t>(t)};
        std::uniform_int_distribution<std::size_t> size_dist{1, 256 * KiB};
        for (int i = 0; i < 50; ++i) {
          auto const bytes = size_dist(rng);
          auto const seed  = static_cast<std::uint32_t>(t * 1000 + i);
          void* ptr        = mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
          rmm::test::fill_pattern(ptr, bytes, seed, stream.value());
          mismatches += rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value());
          mr.deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
        }
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  CHECK(mismatches == 0);
}

TEMPLATE_TEST_CASE("conformance: many streams, cross-stream free",
                   "[gpu][conformance]",
                   RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto mr = TestType::make();
  std::vector<rmm::cuda_stream> streams(8);
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t i = 0; i < 64; ++i) {
    auto& stream     = streams[i % streams.size()];
    auto const bytes = (i + 1) * 10 * KiB;
    void* ptr        = mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    rmm::test::fill_pattern(ptr, bytes, static_cast<std::uint32_t>(i), stream.value());
    blocks.emplace_back(ptr, bytes);
  }
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto& stream = streams[i % streams.size()];
    mismatches += rmm::test::count_pattern_mismatches(
        blocks[i].first, blocks[i].second, static_cast<std::uint32_t>(i), stream.value());
  }
  CHECK(mismatches == 0);
  // Free each block on a different stream than the one it was allocated on.
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto& other = streams[(i + 3) % streams.size()];
    mr.deallocate(other, blocks[i].first, blocks[i].second, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  for (auto& stream : streams) {
    stream.synchronize();
  }
  // The default streams work too.
  for (auto stream :
       {rmm::cuda_stream_default, rmm::cuda_stream_legacy, rmm::cuda_stream_per_thread}) {
    void* ptr = mr.allocate(stream, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
    check_pattern(ptr, MiB, 99, stream);
    mr.deallocate(stream, ptr, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

TEMPLATE_TEST_CASE("conformance: out of memory is typed and explained",
                   "[gpu][conformance][expected_api_errors]",
                   RMM_CONFORMANCE_FACTORIES) {
  if (skip_if_unavailable<TestType>()) {
    return;
  }
  auto const probe = TestType::oom_probe();
  if (!probe) {
    WARN("SKIPPED out-of-memory probe for " << TestType::name
                                            << ": probing is unsafe or undefined");
    return;
  }
  auto mr = TestType::make();
  rmm::cuda_stream stream;
  auto const bytes = *probe;
  try {
    void* ptr = mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    mr.deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    FAIL("allocating " << bytes << " bytes did not throw");
  } catch (rmm::out_of_memory const& e) {
    std::string const what   = e.what();
    std::string const device = "device " + std::to_string(rmm::get_current_cuda_device().value());
    CHECK_THAT(what,
               Contains("out_of_memory") && Contains(std::to_string(bytes)) && Contains(device));
  }
  // The failure left no error behind: the next allocation works.
  CHECK(cudaGetLastError() == cudaSuccess);
  void* ptr = mr.allocate(stream, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
  check_pattern(ptr, MiB, 5, stream);
  mr.deallocate(stream, ptr, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
}
