// limiting_resource_adaptor without a GPU, over host-backed "device" memory
// (utilities/test_resources.hpp): the count rounded to the alignment, the limit reached exactly,
// the out-of-memory error and its message, refusals that never reach the upstream, refunds when
// the upstream fails, bad alignments, overflowing requests, copies and many threads racing for
// the last bytes.
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::limiting_resource_adaptor;
using rmm::test::counting_resource;
using rmm::test::host_backed_resource;

constexpr std::size_t align = rmm::CUDA_ALLOCATION_ALIGNMENT;
cuda::stream_ref const stream{cudaStream_t{}};

}  // namespace

// Upstreams for these tests, in a named namespace: clang drops the hidden-friend get_property of
// a class with internal linkage as unneeded.
namespace rmm::test::limiting_fakes {

struct failing_resource {
  void* allocate_sync(std::size_t, std::size_t) { throw std::bad_alloc{}; }
  void deallocate_sync(void*, std::size_t, std::size_t) noexcept {}
  void* allocate(cuda::stream_ref, std::size_t, std::size_t) { throw std::bad_alloc{}; }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  bool operator==(failing_resource const&) const noexcept { return true; }
  bool operator!=(failing_resource const&) const noexcept { return false; }
  friend void get_property(failing_resource const&, cuda::mr::device_accessible) noexcept {}
};

// Records the largest number of bytes outstanding at any time (requested sizes).
class high_water_resource {
 public:
  void* allocate(cuda::stream_ref s, std::size_t bytes, std::size_t alignment) {
    void* ptr = state_->upstream.allocate(s, bytes, alignment);
    std::lock_guard<std::mutex> lock{state_->mutex};
    state_->live += bytes;
    state_->high = std::max(state_->high, state_->live);
    return ptr;
  }
  void deallocate(cuda::stream_ref s,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    {
      std::lock_guard<std::mutex> lock{state_->mutex};
      state_->live -= bytes;
    }
    state_->upstream.deallocate(s, ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    return allocate(cuda::stream_ref{cudaStream_t{}}, bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, bytes, alignment);
  }
  [[nodiscard]] std::size_t high() const {
    std::lock_guard<std::mutex> lock{state_->mutex};
    return state_->high;
  }
  bool operator==(high_water_resource const& o) const noexcept { return state_ == o.state_; }
  bool operator!=(high_water_resource const& o) const noexcept { return !(*this == o); }
  friend void get_property(high_water_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    host_backed_resource upstream;
    std::mutex mutex;
    std::size_t live{0};
    std::size_t high{0};
  };
  std::shared_ptr<state> state_ = std::make_shared<state>();
};

}  // namespace rmm::test::limiting_fakes

TEST_CASE("limiting_resource_adaptor: types and properties", "[limiting]") {
  STATIC_REQUIRE(cuda::mr::resource_with<limiting_resource_adaptor, cuda::mr::device_accessible>);
  STATIC_REQUIRE_FALSE(cuda::has_property<limiting_resource_adaptor, cuda::mr::host_accessible>);
  STATIC_REQUIRE(std::is_copy_constructible_v<limiting_resource_adaptor>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<limiting_resource_adaptor>);
  limiting_resource_adaptor mr{host_backed_resource{}, 4096};
  CHECK(mr.get_allocation_limit() == 4096);
  CHECK(mr.get_allocated_bytes() == 0);
}

TEST_CASE("limiting_resource_adaptor: counts sizes rounded up to the alignment", "[limiting]") {
  limiting_resource_adaptor mr{host_backed_resource{}, 1024};
  void* a = mr.allocate(stream, 1, align);
  CHECK(mr.get_allocated_bytes() == 256);
  void* b = mr.allocate_sync(257, align);
  CHECK(mr.get_allocated_bytes() == 768);
  void* c = mr.allocate(stream, 256, align);  // exactly at the limit: allowed
  CHECK(mr.get_allocated_bytes() == 1024);
  mr.deallocate(stream, a, 1, align);
  mr.deallocate_sync(b, 257, align);
  mr.deallocate(stream, c, 256, align);
  CHECK(mr.get_allocated_bytes() == 0);

  // Alignment 1: sizes count exactly.
  limiting_resource_adaptor exact{host_backed_resource{}, 100, 1};
  void* d = exact.allocate(stream, 99, align);
  CHECK(exact.get_allocated_bytes() == 99);
  void* e = exact.allocate(stream, 1, align);
  CHECK(exact.get_allocated_bytes() == 100);
  CHECK_THROWS_AS(exact.allocate(stream, 1, align), rmm::out_of_memory);
  exact.deallocate(stream, d, 99, align);
  exact.deallocate(stream, e, 1, align);
  CHECK(exact.get_allocated_bytes() == 0);

  // Zero bytes are free of charge.
  void* z = exact.allocate(stream, 0, align);
  CHECK(exact.get_allocated_bytes() == 0);
  exact.deallocate(stream, z, 0, align);
}

TEST_CASE("limiting_resource_adaptor: over the limit throws out_of_memory naming the numbers",
          "[limiting][expected_api_errors]") {
  counting_resource upstream{host_backed_resource{}};
  limiting_resource_adaptor mr{upstream, 10000};
  void* a = mr.allocate(stream, 6000, align);  // 6144 counted
  CHECK(upstream.counts().allocations == 1);
  try {
    void* b = mr.allocate(stream, 4000, align);  // 4096 more: 10240 > 10000
    mr.deallocate(stream, b, 4000, align);
    FAIL("allocating above the limit did not throw");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK_THAT(what,
               Contains("out_of_memory") &&
                   Contains("Exceeded memory limit (failed to allocate 3.906250 KiB)") &&
                   Contains("limiting_resource_adaptor: cannot allocate 4000 bytes") &&
                   Contains("limit of 10000 bytes") && Contains("6144 bytes in use"));
    // RMM's text is the reason: it follows the adaptor's name and the request.
    CHECK_THAT(what,
               Contains("limiting_resource_adaptor: cannot allocate 4000 bytes: Exceeded "
                        "memory limit (failed to allocate 3.906250 KiB)"));
    // The report: the request, the bytes in use, the limit, the stream.
    REQUIRE(e.report() != nullptr);
    CHECK(e.report()->resource == "limiting_resource_adaptor");
    CHECK(e.report()->requested_bytes == 4000);
    CHECK(e.report()->used_bytes == std::size_t{6144});
    CHECK(e.report()->maximum_bytes == std::size_t{10000});
    CHECK(e.report()->stream == std::uintptr_t{0});
    CHECK_FALSE(e.report()->reserved_bytes);
  }
  try {
    static_cast<void>(mr.allocate_sync(4000, align));
    FAIL("allocating above the limit did not throw");
  } catch (rmm::out_of_memory const& e) {
    REQUIRE(e.report() != nullptr);
    CHECK_FALSE(e.report()->stream);  // no stream: a synchronous request
  }
  // Refused before the upstream was asked; nothing charged.
  CHECK(upstream.counts().allocations == 1);
  CHECK(mr.get_allocated_bytes() == 6144);
  CHECK_THROWS_AS(mr.allocate_sync(4000, align), std::bad_alloc);
  void* c = mr.allocate(stream, 3000, align);  // 3072: 9216 fits
  CHECK(mr.get_allocated_bytes() == 9216);
  mr.deallocate(stream, a, 6000, align);
  mr.deallocate(stream, c, 3000, align);
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(upstream.counts().bytes_outstanding == 0);
}

TEST_CASE("limiting_resource_adaptor: requests that would overflow the count are refused",
          "[limiting][expected_api_errors]") {
  limiting_resource_adaptor unlimited{host_backed_resource{}, ~std::size_t{0}};
  CHECK_THROWS_AS(unlimited.allocate(stream, ~std::size_t{0}, align), rmm::out_of_memory);
  CHECK_THROWS_AS(unlimited.allocate(stream, ~std::size_t{0} - 100, align), rmm::out_of_memory);
  CHECK(unlimited.get_allocated_bytes() == 0);
}

TEST_CASE("limiting_resource_adaptor: an upstream failure refunds the charge", "[limiting]") {
  limiting_resource_adaptor mr{rmm::test::limiting_fakes::failing_resource{}, 1000};
  CHECK_THROWS_AS(mr.allocate(stream, 500, align), std::bad_alloc);
  CHECK_THROWS_AS(mr.allocate_sync(500, align), std::bad_alloc);
  CHECK(mr.get_allocated_bytes() == 0);
}

TEST_CASE("limiting_resource_adaptor: the alignment must be a power of two",
          "[limiting][expected_api_errors]") {
  CHECK_THROWS_AS(limiting_resource_adaptor(host_backed_resource{}, 1000, 3), rmm::logic_error);
  CHECK_THROWS_WITH(limiting_resource_adaptor(host_backed_resource{}, 1000, 0),
                    Contains("alignment 0 is not a power of two"));
}

TEST_CASE("limiting_resource_adaptor: forwards unchanged; copies share the count", "[limiting]") {
  rmm::test::verifying_resource upstream{host_backed_resource{}};
  limiting_resource_adaptor mr{upstream, 1 << 20};
  CHECK(mr.get_upstream_resource() == rmm::device_async_resource_ref{upstream});
  limiting_resource_adaptor copy = mr;
  CHECK(copy == mr);
  CHECK(limiting_resource_adaptor{upstream, 1 << 20} != mr);
  void* p = mr.allocate(stream, 1000, 64);
  CHECK(copy.get_allocated_bytes() == 1024);
  copy.deallocate(stream, p, 1000, 64);
  CHECK(mr.get_allocated_bytes() == 0);
  CHECK(upstream.failures().empty());
  CHECK(upstream.live_allocations() == 0);
}

TEST_CASE("limiting_resource_adaptor: many threads never exceed the limit together", "[limiting]") {
  rmm::test::limiting_fakes::high_water_resource upstream;
  constexpr std::size_t limit = 64 * 256;  // 64 blocks of 256 bytes
  limiting_resource_adaptor mr{upstream, limit};
  constexpr int num_threads = 8;
  std::atomic<std::size_t> refused{0};
  std::atomic<std::size_t> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&] {
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        try {
          mine.push_back(mr.allocate(stream, 200, align));
          ++granted;
        } catch (rmm::out_of_memory const&) {
          ++refused;
        }
        if (mine.size() > 10) {  // 8 threads x 11 blocks > 64: they compete for the last ones
          mr.deallocate(stream, mine.front(), 200, align);
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) {
        mr.deallocate(stream, p, 200, align);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(granted + refused == num_threads * 2000);
  CHECK(granted > 0);
  CHECK(upstream.high() <= 64 * 200);  // never more than 64 blocks outstanding
  CHECK(mr.get_allocated_bytes() == 0);
}
