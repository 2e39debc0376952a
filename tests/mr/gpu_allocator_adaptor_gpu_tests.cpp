// gpu_allocator_adaptor on a GPU, over cuda_memory_resource and virtual_memory_resource: size 0
// and alignments refused, deallocate true exactly once, free, device memory written and read back
// by kernels, reallocate in place (virtual memory: the same address, grown and shrunk, contents
// kept) and by moving (cudaMalloc'd memory: min(old, new) bytes kept, even while a kernel is still
// writing them), refusals that leave the original valid (not resizable, more than the device
// holds), allocation beyond the device, many threads at once, and an IGpuAllocator-shaped base
// class forwarding to the adaptor.
#include "../utilities/device_kernels.hpp"
#include "../utilities/igpu_allocator.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/gpu_allocator_adaptor.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

using rmm::mr::cuda_memory_resource;
using rmm::mr::gpu_allocator_adaptor;
using rmm::mr::virtual_memory_resource;
using rmm::test::count_pattern_mismatches;
using rmm::test::fill_pattern;

constexpr std::uint32_t resizable = gpu_allocator_adaptor::resizable;
constexpr std::size_t KiB         = std::size_t{1} << 10U;
constexpr std::size_t MiB         = std::size_t{1} << 20U;

// A virtual_memory_resource, or nothing (with a message) where the device lacks virtual memory
// management.
std::optional<virtual_memory_resource> make_vmm(std::size_t reservation = 0) {
  try {
    return virtual_memory_resource{rmm::get_current_cuda_device(), reservation};
  } catch (rmm::logic_error const& e) {
    WARN("SKIPPED (virtual memory management unavailable): " << e.what());
    return std::nullopt;
  }
}

std::size_t device_total_memory() { return rmm::available_device_memory().second; }

// Writes the pattern of `seed` into `bytes` bytes on `stream` and checks it reads back.
void check_usable(void* ptr, std::size_t bytes, std::uint32_t seed, rmm::cuda_stream_view stream) {
  fill_pattern(ptr, bytes, seed, stream.value());
  CHECK(count_pattern_mismatches(ptr, bytes, seed, stream.value()) == 0);
}

using rmm::test::AllocatorFlags;
using rmm::test::forwarding_allocator;
using rmm::test::IGpuAllocator;
using std::uint64_t;

// 8 threads x `iterations`: allocate (resizable or not), write a pattern with a kernel on the
// thread's own stream, reallocate, check that min(old, new) bytes survived, keep a few alive,
// deallocate (true; false for an interior pointer). Catch's assertions are not thread-safe: errors
// are counted. Returns how many reallocations to another size stayed in place and how many moved.
struct outcome {
  int in_place;
  int moved;
};
outcome hammer(gpu_allocator_adaptor& adaptor, int iterations, std::size_t max_bytes) {
  constexpr int threads = 8;
  std::atomic<int> errors{0};
  std::atomic<int> in_place{0};
  std::atomic<int> moved{0};
  int const device = rmm::get_current_cuda_device().value();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      if (cudaSetDevice(device) != cudaSuccess) {
        ++errors;
        return;
      }
      rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
      std::mt19937 rng{static_cast<std::mt19937::result_type>(100 + t)};
      std::uniform_int_distribution<std::size_t> size{1, max_bytes};
      struct held {
        void* ptr;
        std::size_t bytes;
        std::uint32_t seed;
      };
      std::vector<held> live;
      auto const release = [&](held const& h) {
        if (count_pattern_mismatches(h.ptr, h.bytes, h.seed, stream.value()) != 0) {
          ++errors;
        }
        // Not a pointer it returned (every one is 256-byte aligned): false, nothing freed. A freed
        // pointer is not tried again here: another thread may have been given it meanwhile.
        if (adaptor.deallocate(static_cast<char*>(h.ptr) + 1)) {
          ++errors;
        }
        if (!adaptor.deallocate(h.ptr)) {
          ++errors;
        }
      };
      for (int i = 0; i < iterations; ++i) {
        auto const seed  = static_cast<std::uint32_t>(t * 100000 + i);
        std::size_t n    = size(rng);
        bool const grows = (rng() % 4) != 0;
        void* p          = adaptor.allocate(n, (rng() & 1U) != 0 ? 256 : 0, grows ? resizable : 0U);
        if (p == nullptr) {
          ++errors;
          continue;
        }
        fill_pattern(p, n, seed, stream.value());  // still running when reallocate is called
        std::size_t const m = size(rng);
        void* q             = adaptor.reallocate(p, 0, m);
        if (!grows) {
          if (q != nullptr) {
            ++errors;
          }
        } else if (q == nullptr) {
          ++errors;  // the device has room: growing or moving must succeed
        } else {
          if (m != n) {
            ++(q == p ? in_place : moved);
          }
          if (count_pattern_mismatches(q, std::min(n, m), seed, stream.value()) != 0) {
            ++errors;
          }
          p = q;
          n = m;
          fill_pattern(p, n, seed, stream.value());
        }
        live.push_back({p, n, seed});
        if (live.size() > 3) {
          std::size_t const k = rng() % live.size();
          release(live[k]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
      for (held const& h : live) {
        release(h);
      }
    });
  }
  for (auto& w : workers) {
    w.join();
  }
  INFO("reallocations in place: " << in_place.load() << ", moved: " << moved.load());
  CHECK(errors.load() == 0);
  CHECK(adaptor.allocated_bytes() == 0);
  CHECK(adaptor.live_allocations() == 0);
  return {in_place.load(), moved.load()};
}

}  // namespace

TEST_CASE("gpu_allocator_adaptor: size 0 and refused alignments are nullptr",
          "[gpu][gpu_allocator_adaptor]") {
  gpu_allocator_adaptor adaptor{cuda_memory_resource{}};
  CHECK_FALSE(adaptor.resizes_in_place());
  CHECK(adaptor.allocate(0, 0, 0) == nullptr);
  CHECK(adaptor.allocate(0, 256, resizable) == nullptr);
  for (std::uint64_t alignment : {3ULL, 48ULL, 257ULL, 512ULL, 4096ULL, ~0ULL}) {
    INFO("alignment " << alignment);
    CHECK(adaptor.allocate(1024, alignment, 0) == nullptr);
  }
  CHECK(adaptor.live_allocations() == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("gpu_allocator_adaptor: device memory, deallocate true exactly once, free",
          "[gpu][gpu_allocator_adaptor]") {
  gpu_allocator_adaptor adaptor{cuda_memory_resource{}};
  rmm::cuda_stream stream;
  for (std::uint64_t alignment : {0ULL, 1ULL, 4ULL, 128ULL, 256ULL}) {
    INFO("alignment " << alignment);
    void* p = adaptor.allocate(MiB + 3, alignment, 0);
    REQUIRE(p != nullptr);
    CHECK(rmm::is_pointer_aligned(p, 256));
    check_usable(p, MiB + 3, 1, stream);
    CHECK(adaptor.deallocate(p));
    CHECK_FALSE(adaptor.deallocate(p));
  }

  // A device pointer the adaptor did not return: false, and it is left alone.
  void* foreign = nullptr;
  REQUIRE(cudaMalloc(&foreign, 4096) == cudaSuccess);
  CHECK_FALSE(adaptor.deallocate(foreign));
  check_usable(foreign, 4096, 2, stream);
  REQUIRE(cudaFree(foreign) == cudaSuccess);
  CHECK(adaptor.deallocate(nullptr));

  void* q = adaptor.allocate(4096, 0, 0);
  REQUIRE(q != nullptr);
  adaptor.free(q);
  CHECK_FALSE(adaptor.deallocate(q));
  adaptor.free(q);
  adaptor.free(nullptr);
  CHECK(adaptor.live_allocations() == 0);
  CHECK(adaptor.allocated_bytes() == 0);
}

TEST_CASE("gpu_allocator_adaptor: deallocate waits for work still using the memory",
          "[gpu][gpu_allocator_adaptor]") {
  // A kernel on a non-blocking stream still writes the block when it is freed; the adaptor waits
  // for the device first, so the next allocation (likely the same memory) sees none of it.
  gpu_allocator_adaptor adaptor{cuda_memory_resource{}};
  rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
  void* p = adaptor.allocate(MiB, 0, 0);
  REQUIRE(p != nullptr);
  rmm::test::fill_pattern_after_delay(p, MiB, 3, 50'000'000, stream.value());  // 50 ms
  CHECK(adaptor.deallocate(p));
  CHECK(cudaStreamQuery(stream.value()) == cudaSuccess);  // the kernel has finished
  void* q = adaptor.allocate(MiB, 0, 0);
  REQUIRE(q != nullptr);
  check_usable(q, MiB, 4, stream);
  CHECK(adaptor.deallocate(q));
}

TEST_CASE("gpu_allocator_adaptor: more than the device holds is nullptr",
          "[gpu][gpu_allocator_adaptor][expected_api_errors]") {
  std::size_t const total = device_total_memory();
  SECTION("cuda_memory_resource") {
    gpu_allocator_adaptor adaptor{cuda_memory_resource{}};
    CHECK(adaptor.allocate(2 * total, 0, 0) == nullptr);
    CHECK(adaptor.allocate(std::numeric_limits<std::uint64_t>::max(), 0, resizable) == nullptr);
    CHECK(cudaGetLastError() == cudaSuccess);  // the failure is not left behind
    void* p = adaptor.allocate(MiB, 0, 0);     // still works
    REQUIRE(p != nullptr);
    CHECK(adaptor.deallocate(p));
  }
  SECTION("virtual_memory_resource") {
    auto vmm = make_vmm();
    if (!vmm) {
      return;
    }
    gpu_allocator_adaptor adaptor{*vmm};
    CHECK(adaptor.allocate(2 * total, 0, resizable) == nullptr);
    CHECK(adaptor.allocate(std::numeric_limits<std::uint64_t>::max(), 0, 0) == nullptr);
    CHECK(cudaGetLastError() == cudaSuccess);
    void* p = adaptor.allocate(MiB, 0, 0);
    REQUIRE(p != nullptr);
    CHECK(adaptor.deallocate(p));
    CHECK(vmm->used_bytes() == 0);
  }
}

TEST_CASE("gpu_allocator_adaptor: reallocate over virtual memory grows and shrinks in place",
          "[gpu][gpu_allocator_adaptor][vmm]") {
  auto vmm = make_vmm();
  if (!vmm) {
    return;
  }
  gpu_allocator_adaptor adaptor{*vmm};
  REQUIRE(adaptor.resizes_in_place());
  std::size_t const g = vmm->granularity();
  rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};

  std::size_t const small = g / 2;
  void* p                 = adaptor.allocate(small, 256, resizable);
  REQUIRE(p != nullptr);
  CHECK(vmm->mapped_size(p) == g);
  fill_pattern(p, small, 5, stream.value());

  // Grow to two and a half granules: the same address, the first bytes kept.
  std::size_t const large = 2 * g + g / 2;
  CHECK(adaptor.reallocate(p, 256, large) == p);
  CHECK(adaptor.allocation_size(p) == large);
  CHECK(adaptor.allocated_bytes() == large);
  CHECK(vmm->mapped_size(p) == 3 * g);
  CHECK(vmm->used_bytes() == large);
  CHECK(count_pattern_mismatches(p, small, 5, stream.value()) == 0);
  check_usable(p, large, 6, stream);  // all of it is mapped and writable

  // Grow within what is mapped: no driver call needed, the same address.
  CHECK(adaptor.reallocate(p, 0, 3 * g) == p);
  CHECK(vmm->mapped_size(p) == 3 * g);
  CHECK(count_pattern_mismatches(p, large, 6, stream.value()) == 0);

  // Shrink below one granule while a kernel is still writing it: the adaptor waits for the
  // device before the tail is unmapped, so nothing faults and the first bytes are the kernel's.
  rmm::test::fill_pattern_after_delay(p, 3 * g, 7, 20'000'000, stream.value());
  std::size_t const tiny = g / 4;
  CHECK(adaptor.reallocate(p, 0, tiny) == p);
  CHECK(adaptor.allocation_size(p) == tiny);
  vmm->flush();
  CHECK(vmm->mapped_size(p) == g);
  CHECK(count_pattern_mismatches(p, tiny, 7, stream.value()) == 0);

  // And grow again after the shrink.
  CHECK(adaptor.reallocate(p, 0, 2 * g) == p);
  CHECK(count_pattern_mismatches(p, tiny, 7, stream.value()) == 0);
  check_usable(p, 2 * g, 8, stream);

  CHECK(adaptor.deallocate(p));
  CHECK_FALSE(adaptor.deallocate(p));
  CHECK(adaptor.allocated_bytes() == 0);
  CHECK(vmm->used_bytes() == 0);
  CHECK(vmm->statistics().allocations == 0);
}

TEST_CASE("gpu_allocator_adaptor: beyond a virtual allocation's reservation it moves",
          "[gpu][gpu_allocator_adaptor][vmm]") {
  auto probe = make_vmm();
  if (!probe) {
    return;
  }
  std::size_t const g = probe->granularity();
  auto vmm            = make_vmm(2 * g);  // each allocation can grow to two granules in place
  REQUIRE(vmm);
  gpu_allocator_adaptor adaptor{*vmm};
  rmm::cuda_stream stream;
  void* p = adaptor.allocate(g, 0, resizable);
  REQUIRE(p != nullptr);
  fill_pattern(p, g, 9, stream.value());
  CHECK(adaptor.reallocate(p, 0, 2 * g) == p);  // within the reservation
  void* q = adaptor.reallocate(p, 0, 5 * g);    // beyond it: a new range, the bytes copied
  REQUIRE(q != nullptr);
  CHECK(q != p);
  CHECK(count_pattern_mismatches(q, g, 9, stream.value()) == 0);
  CHECK(adaptor.allocation_size(q) == 5 * g);
  CHECK_FALSE(adaptor.deallocate(p));
  CHECK(vmm->statistics().allocations == 1);
  CHECK(adaptor.deallocate(q));
  CHECK(vmm->used_bytes() == 0);
}

TEST_CASE("gpu_allocator_adaptor: reallocate over cuda_memory_resource moves the contents",
          "[gpu][gpu_allocator_adaptor]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  gpu_allocator_adaptor adaptor{counting};
  rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
  std::size_t const n = 3 * MiB + 5;
  void* p             = adaptor.allocate(n, 0, resizable);
  REQUIRE(p != nullptr);
  // Still being written (on a non-blocking stream) when reallocate copies: it waits first.
  rmm::test::fill_pattern_after_delay(p, n, 10, 20'000'000, stream.value());

  std::size_t const bigger = 8 * MiB;
  void* q                  = adaptor.reallocate(p, 0, bigger);
  REQUIRE(q != nullptr);
  CHECK(q != p);
  CHECK(count_pattern_mismatches(q, n, 10, stream.value()) == 0);
  CHECK(adaptor.allocation_size(q) == bigger);
  CHECK(adaptor.allocation_size(p) == 0);
  CHECK_FALSE(adaptor.deallocate(p));
  CHECK(adaptor.allocated_bytes() == bigger);
  CHECK(counting.counts().bytes_outstanding.load() == bigger);  // the old block was freed
  check_usable(q, bigger, 11, stream);

  std::size_t const smaller = 100 * KiB + 1;
  void* r                   = adaptor.reallocate(q, 256, smaller);  // shrinking moves too
  REQUIRE(r != nullptr);
  CHECK(r != q);
  CHECK(count_pattern_mismatches(r, smaller, 11, stream.value()) == 0);
  CHECK(adaptor.allocated_bytes() == smaller);
  CHECK(counting.counts().bytes_outstanding.load() == smaller);
  CHECK(adaptor.reallocate(r, 0, smaller) == r);  // the same size: nothing to do
  CHECK(adaptor.deallocate(r));
  CHECK(counting.counts().bytes_outstanding.load() == 0);
}

TEST_CASE("gpu_allocator_adaptor: refused reallocations leave the original valid",
          "[gpu][gpu_allocator_adaptor][expected_api_errors]") {
  std::size_t const total = device_total_memory();
  rmm::cuda_stream stream;
  auto const check_refusals = [&](gpu_allocator_adaptor& adaptor) {
    void* fixed = adaptor.allocate(MiB, 0, 0);
    void* grows = adaptor.allocate(MiB, 0, resizable);
    REQUIRE(fixed != nullptr);
    REQUIRE(grows != nullptr);
    fill_pattern(fixed, MiB, 12, stream.value());
    fill_pattern(grows, MiB, 13, stream.value());

    CHECK(adaptor.reallocate(fixed, 0, 2 * MiB) == nullptr);  // not resizable
    CHECK(adaptor.reallocate(fixed, 0, MiB / 2) == nullptr);
    CHECK(adaptor.allocation_size(fixed) == MiB);
    CHECK(count_pattern_mismatches(fixed, MiB, 12, stream.value()) == 0);

    // More than the device holds: in place or by moving, nothing can hold it.
    CHECK(adaptor.reallocate(grows, 0, total) == nullptr);
    CHECK(adaptor.reallocate(grows, 0, 2 * total) == nullptr);
    CHECK(adaptor.reallocate(grows, 0, std::numeric_limits<std::uint64_t>::max()) == nullptr);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(adaptor.allocation_size(grows) == MiB);
    CHECK(count_pattern_mismatches(grows, MiB, 13, stream.value()) == 0);
    check_usable(grows, MiB, 14, stream);
    CHECK(adaptor.reallocate(grows, 0, 0) == nullptr);
    CHECK(adaptor.reallocate(grows, 512, 2 * MiB) == nullptr);
    CHECK(adaptor.allocation_size(grows) == MiB);

    CHECK(adaptor.deallocate(fixed));
    CHECK(adaptor.deallocate(grows));
    CHECK(adaptor.live_allocations() == 0);
  };
  SECTION("cuda_memory_resource") {
    gpu_allocator_adaptor adaptor{cuda_memory_resource{}};
    check_refusals(adaptor);
  }
  SECTION("virtual_memory_resource") {
    auto vmm = make_vmm();
    if (!vmm) {
      return;
    }
    gpu_allocator_adaptor adaptor{*vmm};
    check_refusals(adaptor);
    CHECK(vmm->used_bytes() == 0);
  }
}

TEST_CASE("gpu_allocator_adaptor: many threads over cuda_memory_resource",
          "[gpu][gpu_allocator_adaptor][threads]") {
  rmm::test::counting_resource counting{cuda_memory_resource{}};
  gpu_allocator_adaptor adaptor{counting};
  outcome const o = hammer(adaptor, 300, 256 * KiB);
  CHECK(o.in_place == 0);  // cudaMalloc'd memory cannot grow or shrink
  CHECK(o.moved > 0);
  CHECK(counting.counts().bytes_outstanding.load() == 0);
  CHECK(counting.counts().allocations.load() == counting.counts().deallocations.load());
}

TEST_CASE("gpu_allocator_adaptor: many threads over virtual_memory_resource",
          "[gpu][gpu_allocator_adaptor][threads][vmm]") {
  auto vmm = make_vmm();
  if (!vmm) {
    return;
  }
  gpu_allocator_adaptor adaptor{*vmm};
  outcome const o = hammer(adaptor, 150, 3 * vmm->granularity());
  CHECK(o.in_place > 0);
  CHECK(o.moved == 0);  // the device has room: every resize stays in place
  vmm->flush();
  CHECK(vmm->used_bytes() == 0);
  CHECK(vmm->statistics().allocations == 0);
  CHECK(vmm->mapped_bytes() == 0);
}

TEST_CASE("gpu_allocator_adaptor: an IGpuAllocator subclass forwarding to it",
          "[gpu][gpu_allocator_adaptor]") {
  auto vmm = make_vmm();
  gpu_allocator_adaptor adaptor =
      vmm ? gpu_allocator_adaptor{*vmm} : gpu_allocator_adaptor{cuda_memory_resource{}};
  rmm::cuda_stream stream;
  std::unique_ptr<IGpuAllocator> allocator = std::make_unique<forwarding_allocator>(adaptor);

  CHECK(allocator->allocate(0, 0, 0) == nullptr);
  CHECK(allocator->allocate(64, 3, 0) == nullptr);
  void* p = allocator->allocate(MiB, 256, resizable);  // AllocatorFlag::kRESIZABLE
  REQUIRE(p != nullptr);
  fill_pattern(p, MiB, 15, stream.value());
  void* q = allocator->reallocate(p, 256, 6 * MiB);
  REQUIRE(q != nullptr);
  CHECK((q == p) == adaptor.resizes_in_place());
  CHECK(count_pattern_mismatches(q, MiB, 15, stream.value()) == 0);
  CHECK(allocator->deallocate(q));
  CHECK_FALSE(allocator->deallocate(q));
  CHECK(allocator->deallocate(nullptr));

  void* fixed = allocator->allocate(4096, 0, 0);
  REQUIRE(fixed != nullptr);
  CHECK(allocator->reallocate(fixed, 0, 8192) == nullptr);
  allocator->free(fixed);  // the deprecated form
  CHECK(adaptor.live_allocations() == 0);
  allocator.reset();
  CHECK(adaptor.allocated_bytes() == 0);
}
