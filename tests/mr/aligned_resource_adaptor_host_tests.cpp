// aligned_resource_adaptor without a GPU, over host memory whose pointers are exactly 256-byte
// aligned (offset_resource: a chosen multiple of 256 past a 64 KiB boundary), so that the adaptor
// must pad: every pointer at or above the threshold is aligned, the whole aligned span is backed
// and keeps its data, smaller requests pass through untouched, frees of both kinds reach the
// upstream with the upstream's own pointer, size and alignment (verifying_resource), the
// per-call alignment, the refusals, out of memory naming the request, copies, many threads.
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/simulated_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::aligned_resource_adaptor;
using rmm::test::counting_resource;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;
using rmm::test::policy_adaptor_fakes::capacity_resource;
using rmm::test::policy_adaptor_fakes::offset_resource;

constexpr std::size_t KiB = 1024;

cuda::stream_ref host_stream() { return cuda::stream_ref{cudaStream_t{}}; }

std::size_t tracked(aligned_resource_adaptor const& mr) {
  return rmm::mr::detail::shared_state<rmm::mr::detail::aligned_resource_adaptor_impl>(mr)
      .tracked_allocations();
}

void fill(void* ptr, std::size_t bytes, unsigned seed) {
  auto* p = static_cast<unsigned char*>(ptr);
  for (std::size_t i = 0; i < bytes; ++i) {
    p[i] = static_cast<unsigned char>(seed * 31U + i * 7U);
  }
}

std::size_t mismatches(void const* ptr, std::size_t bytes, unsigned seed) {
  auto const* p     = static_cast<unsigned char const*>(ptr);
  std::size_t count = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    count += p[i] == static_cast<unsigned char>(seed * 31U + i * 7U) ? 0U : 1U;
  }
  return count;
}

// adaptor -> counting (what the upstream was asked for) -> verifying (frees match) -> offset.
struct fixture {
  explicit fixture(std::size_t offset,
                   std::size_t alignment,
                   std::size_t threshold = aligned_resource_adaptor::default_alignment_threshold)
      : verifying{offset_resource{offset}},
        counting{verifying},
        mr{counting, alignment, threshold} {}

  verifying_resource verifying;
  counting_resource counting;
  aligned_resource_adaptor mr;

  void check_balanced() const {
    CHECK(verifying.failures().empty());
    CHECK(verifying.live_allocations() == 0);
    CHECK(counting.counts().bytes_outstanding.load() == 0);
    CHECK(tracked(mr) == 0);
  }
};

}  // namespace

TEST_CASE("aligned_resource_adaptor: types", "[aligned_resource_adaptor]") {
  STATIC_REQUIRE(aligned_resource_adaptor::default_alignment_threshold == 0);
  STATIC_REQUIRE(cuda::mr::resource_with<aligned_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(
      cuda::mr::synchronous_resource_with<aligned_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE(!cuda::has_property<aligned_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<aligned_resource_adaptor>);
  STATIC_REQUIRE(std::is_copy_assignable_v<aligned_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<aligned_resource_adaptor>);
  STATIC_REQUIRE(!std::is_convertible_v<rmm::test::any_device_resource, aligned_resource_adaptor>);
}

TEST_CASE(
    "aligned_resource_adaptor: at or above the threshold every pointer is aligned and its "
    "aligned span is backed; below it requests pass through",
    "[aligned_resource_adaptor]") {
  auto const alignment = GENERATE(std::size_t{512}, 4 * KiB, 64 * KiB);
  auto const threshold = GENERATE(std::size_t{0}, 16 * KiB);
  auto const offset    = GENERATE(std::size_t{0}, std::size_t{256}, 3 * std::size_t{256});
  INFO("alignment " << alignment << ", threshold " << threshold << ", offset " << offset);
  fixture f{offset, alignment, threshold};
  unsigned seed = 0;
  for (std::size_t bytes : {std::size_t{1},
                            std::size_t{255},
                            std::size_t{257},
                            4 * KiB - 1,
                            16 * KiB - 1,
                            16 * KiB,
                            16 * KiB + 1,
                            100 * KiB,
                            KiB * KiB + 3}) {
    INFO(bytes << " bytes");
    bool const aligned_path = bytes >= threshold;
    for (bool sync : {false, true}) {
      std::size_t const before = f.counting.counts().bytes_outstanding.load();
      void* ptr = sync ? f.mr.allocate_sync(bytes, 256) : f.mr.allocate(host_stream(), bytes, 256);
      REQUIRE(ptr != nullptr);
      std::size_t const asked = f.counting.counts().bytes_outstanding.load() - before;
      if (aligned_path) {
        CHECK(rmm::is_pointer_aligned(ptr, alignment));
        CHECK(asked == rmm::align_up(bytes, alignment) + alignment - 256);
        // The whole aligned span is usable (ASan builds check that it lies in the allocation).
        std::size_t const span = rmm::align_up(bytes, alignment);
        fill(ptr, span, ++seed);
        CHECK(mismatches(ptr, span, seed) == 0);
      } else {
        CHECK(asked == bytes);  // untouched: the upstream's own pointer, 256-aligned
        CHECK(rmm::is_pointer_aligned(ptr, 256));
        CHECK(reinterpret_cast<std::uintptr_t>(ptr) % offset_resource::base_alignment == offset);
        fill(ptr, bytes, ++seed);
        CHECK(mismatches(ptr, bytes, seed) == 0);
      }
      if (sync) {
        f.mr.deallocate_sync(ptr, bytes, 256);
      } else {
        f.mr.deallocate(host_stream(), ptr, bytes, 256);
      }
    }
  }
  f.check_balanced();
}

TEST_CASE("aligned_resource_adaptor: the upstream pointer is remembered only when it differs",
          "[aligned_resource_adaptor]") {
  SECTION("already aligned: nothing to remember") {
    fixture f{0, 4 * KiB};
    void* ptr = f.mr.allocate(host_stream(), 10 * KiB, 256);
    CHECK(reinterpret_cast<std::uintptr_t>(ptr) % offset_resource::base_alignment == 0);
    CHECK(tracked(f.mr) == 0);
    f.mr.deallocate(host_stream(), ptr, 10 * KiB, 256);
    f.check_balanced();
  }
  SECTION("misaligned: remembered until freed") {
    fixture f{256, 4 * KiB};
    std::vector<void*> ptrs;
    for (int i = 0; i < 10; ++i) {
      ptrs.push_back(f.mr.allocate(host_stream(), 10 * KiB, 256));
    }
    CHECK(tracked(f.mr) == 10);
    for (void* ptr : ptrs) {
      f.mr.deallocate(host_stream(), ptr, 10 * KiB, 256);
    }
    f.check_balanced();
  }
}

TEST_CASE("aligned_resource_adaptor: data of live allocations survives interleaved frees",
          "[aligned_resource_adaptor]") {
  fixture f{256, 64 * KiB, 8 * KiB};
  std::mt19937 rng{3};
  std::uniform_int_distribution<std::size_t> size_dist{1, 200 * KiB};
  struct block {
    void* ptr;
    std::size_t bytes;
    unsigned seed;
  };
  std::vector<block> live;
  for (unsigned i = 0; i < 200; ++i) {
    auto const bytes = size_dist(rng);
    void* ptr        = f.mr.allocate(host_stream(), bytes, 256);
    fill(ptr, bytes, i);
    live.push_back({ptr, bytes, i});
    if (i % 3 == 2) {  // free the oldest, check the others still hold their data
      f.mr.deallocate(host_stream(), live.front().ptr, live.front().bytes, 256);
      live.erase(live.begin());
    }
  }
  std::size_t bad = 0;
  for (auto const& b : live) {
    bad += mismatches(b.ptr, b.bytes, b.seed);
    CHECK(rmm::is_pointer_aligned(b.ptr, b.bytes >= 8 * KiB ? 64 * KiB : 256));
  }
  CHECK(bad == 0);
  for (auto const& b : live) {
    f.mr.deallocate_sync(b.ptr, b.bytes, 256);
  }
  f.check_balanced();
}

TEST_CASE("aligned_resource_adaptor: the per-call alignment is honoured up to the adaptor's",
          "[aligned_resource_adaptor][expected_api_errors]") {
  fixture f{256, 4 * KiB, 64 * KiB};  // small requests would pass through at 256
  for (std::size_t alignment = 1; alignment <= 4 * KiB; alignment *= 2) {
    INFO("alignment " << alignment);
    void* ptr = f.mr.allocate(host_stream(), 1000, alignment);
    CHECK(rmm::is_pointer_aligned(ptr, std::max(alignment, std::size_t{256})));
    f.mr.deallocate(host_stream(), ptr, 1000, alignment);
    ptr = f.mr.allocate_sync(1000, alignment);
    CHECK(rmm::is_pointer_aligned(ptr, std::max(alignment, std::size_t{256})));
    f.mr.deallocate_sync(ptr, 1000, alignment);
  }
  CHECK_THROWS_AS(f.mr.allocate(host_stream(), 1000, 8 * KiB), rmm::logic_error);
  CHECK_THROWS_WITH(f.mr.allocate(host_stream(), 1000, 8 * KiB),
                    Contains("aligned_resource_adaptor: alignment 8192 exceeds the largest "
                             "supported alignment 4096"));
  CHECK_THROWS_WITH(f.mr.allocate_sync(1000, 3),
                    Contains("aligned_resource_adaptor: alignment 3 is not a power of two"));
  CHECK_THROWS_AS(f.mr.allocate(host_stream(), 1000, 0), rmm::logic_error);
  f.check_balanced();
}

TEST_CASE("aligned_resource_adaptor: construction checks and raises the alignment",
          "[aligned_resource_adaptor][expected_api_errors]") {
  CHECK_THROWS_AS(aligned_resource_adaptor(host_backed_resource{}, 3), rmm::logic_error);
  CHECK_THROWS_WITH(aligned_resource_adaptor(host_backed_resource{}, 3000),
                    Contains("aligned_resource_adaptor: alignment 3000 is not a power of two"));
  CHECK_THROWS_AS(aligned_resource_adaptor(host_backed_resource{}, 0), rmm::logic_error);

  // Alignments below 256 are raised to 256, which every upstream already gives: pass-through.
  for (std::size_t alignment : {std::size_t{1}, std::size_t{64}, std::size_t{256}}) {
    fixture f{256, alignment};
    void* ptr = f.mr.allocate(host_stream(), 100 * KiB, 256);
    CHECK(f.counting.counts().bytes_outstanding.load() == 100 * KiB);
    CHECK(reinterpret_cast<std::uintptr_t>(ptr) % offset_resource::base_alignment == 256);
    f.mr.deallocate(host_stream(), ptr, 100 * KiB, 256);
    f.check_balanced();
  }
  aligned_resource_adaptor defaults{host_backed_resource{}};
  void* ptr = defaults.allocate(host_stream(), 1000, 256);
  CHECK(rmm::is_pointer_aligned(ptr, 256));
  defaults.deallocate(host_stream(), ptr, 1000, 256);
}

TEST_CASE("aligned_resource_adaptor: size 0 goes to the upstream unchanged",
          "[aligned_resource_adaptor]") {
  fixture f{256, 4 * KiB};
  CHECK(f.mr.allocate(host_stream(), 0, 256) == nullptr);
  CHECK(f.mr.allocate(host_stream(), 0, 4 * KiB) == nullptr);
  CHECK(f.mr.allocate_sync(0, 256) == nullptr);
  f.mr.deallocate(host_stream(), nullptr, 0, 4 * KiB);
  f.mr.deallocate_sync(nullptr, 0, 256);
  f.check_balanced();
}

TEST_CASE("aligned_resource_adaptor: out of memory names the request and keeps its type",
          "[aligned_resource_adaptor][expected_api_errors]") {
  capacity_resource upstream{offset_resource{256}, 64 * KiB};
  aligned_resource_adaptor mr{upstream, 4 * KiB};
  // 62 KiB fit the capacity, 62 KiB + 3840 bytes of padding do not.
  CHECK_THROWS_AS(mr.allocate(host_stream(), 62 * KiB, 256), rmm::out_of_memory);
  CHECK_THROWS_WITH(mr.allocate_sync(62 * KiB, 256),
                    Contains("aligned_resource_adaptor: cannot allocate 63488 bytes (69376 with "
                             "alignment padding)") &&
                        Contains("capacity_resource"));
  CHECK_THROWS_WITH(mr.allocate(host_stream(), std::numeric_limits<std::size_t>::max() - 100, 256),
                    Contains("out_of_memory") && Contains("overflows"));
  CHECK(upstream.outstanding() == 0);
  void* ptr = mr.allocate(host_stream(), 32 * KiB, 256);
  CHECK(rmm::is_pointer_aligned(ptr, 4 * KiB));
  mr.deallocate(host_stream(), ptr, 32 * KiB, 256);
  CHECK(upstream.outstanding() == 0);
  CHECK(tracked(mr) == 0);
}

TEST_CASE("aligned_resource_adaptor: the report keeps the upstream's figures under its name",
          "[aligned_resource_adaptor]") {
  rmm::mr::simulated_memory_resource upstream{64 * KiB};
  aligned_resource_adaptor mr{upstream, 4 * KiB};
  try {
    void* p = mr.allocate(host_stream(), 62 * KiB, 256);
    mr.deallocate(host_stream(), p, 62 * KiB, 256);
    FAIL("62 KiB and the padding fit 64 KiB");
  } catch (rmm::out_of_memory const& e) {
    REQUIRE(e.report() != nullptr);
    auto const& r = *e.report();
    CHECK(r.resource == "aligned_resource_adaptor");
    CHECK(r.requested_bytes == 62 * KiB);
    CHECK(r.reason ==
          "(69376 with alignment padding) from the upstream: simulated_memory_resource could not "
          "allocate 69376 bytes: 0 of the capacity of 65536 bytes are in use");
    CHECK(r.used_bytes == std::size_t{0});  // the upstream's figures
    CHECK(r.free_bytes == 64 * KiB);
    CHECK(r.maximum_bytes == 64 * KiB);
    CHECK_FALSE(r.device);  // the simulated upstream has none
  }
  // The padded size overflows: the adaptor's own report.
  try {
    static_cast<void>(
        mr.allocate(host_stream(), std::numeric_limits<std::size_t>::max() - 100, 256));
    FAIL("an overflowing request did not throw");
  } catch (rmm::out_of_memory const& e) {
    REQUIRE(e.report() != nullptr);
    CHECK(e.report()->resource == "aligned_resource_adaptor");
    CHECK(e.report()->requested_bytes == std::numeric_limits<std::size_t>::max() - 100);
    CHECK(e.report()->reason == "aligned to 4096, the padded size overflows");
  }
  CHECK(upstream.current_bytes() == 0);
}
TEST_CASE("aligned_resource_adaptor: copies share the state; upstream and equality",
          "[aligned_resource_adaptor]") {
  fixture f{256, 4 * KiB};
  aligned_resource_adaptor copy{f.mr};
  aligned_resource_adaptor other{f.counting, 4 * KiB};
  CHECK(copy == f.mr);
  CHECK_FALSE(copy != f.mr);
  CHECK(other != f.mr);
  void* ptr = copy.allocate(host_stream(), 5000, 256);
  CHECK(tracked(f.mr) == 1);
  f.mr.deallocate(host_stream(), ptr, 5000, 256);  // freed through the original
  auto moved = std::move(copy);
  CHECK(moved == f.mr);
  rmm::device_async_resource_ref ref{moved};
  ptr = ref.allocate(host_stream(), 5000, 256);
  CHECK(rmm::is_pointer_aligned(ptr, 4 * KiB));
  ref.deallocate(host_stream(), ptr, 5000, 256);

  rmm::device_async_resource_ref upstream = f.mr.get_upstream_resource();
  ptr                                     = upstream.allocate(host_stream(), 300, 256);
  CHECK(f.counting.counts().bytes_outstanding.load() == 300);
  f.counting.deallocate(host_stream(), ptr, 300, 256);
  f.check_balanced();
}

TEST_CASE("aligned_resource_adaptor: many threads", "[aligned_resource_adaptor]") {
  fixture f{768, 64 * KiB, 4 * KiB};
  constexpr int num_threads = 8;
  std::atomic<int> errors{0};
  std::atomic<std::size_t> misaligned{0};
  std::atomic<std::size_t> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        std::mt19937 rng{static_cast<std::uint32_t>(t)};
        std::uniform_int_distribution<std::size_t> size_dist{1, 32 * KiB};
        for (unsigned i = 0; i < 200; ++i) {
          auto const bytes = size_dist(rng);
          void* ptr        = f.mr.allocate(host_stream(), bytes, 256);
          misaligned += rmm::is_pointer_aligned(ptr, bytes >= 4 * KiB ? 64 * KiB : 256) ? 0U : 1U;
          auto const seed = static_cast<unsigned>(t) * 1000U + i;
          fill(ptr, bytes, seed);
          std::this_thread::yield();
          corrupted += mismatches(ptr, bytes, seed);
          f.mr.deallocate(host_stream(), ptr, bytes, 256);
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
  CHECK(misaligned == 0);
  CHECK(corrupted == 0);
  f.check_balanced();
}
