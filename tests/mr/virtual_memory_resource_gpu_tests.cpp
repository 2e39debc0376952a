// virtual_memory_resource: construction checks, what is reserved and mapped, in-place growth and
// shrinking (address and contents kept, memory given back), deferred unmaps, out-of-memory
// reports, and many threads. The conformance suite covers the common resource contract.
#include "../utilities/device_kernels.hpp"
#include "../utilities/messages.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::virtual_memory_resource;
using rmm::test::logic_error_message;
constexpr std::size_t MiB = std::size_t{1} << 20U;

std::size_t device_free() { return rmm::available_device_memory().first; }

using rmm::test::vmm_unavailable;

}  // namespace

TEST_CASE("vmm: defaults, granularity and construction checks", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  std::size_t const g = mr.granularity();
  CHECK(g >= rmm::CUDA_ALLOCATION_ALIGNMENT);
  CHECK((g & (g - 1)) == 0);
  CHECK(mr.reservation_size() == rmm::align_up(rmm::available_device_memory().second, g));
  CHECK(mr.device() == rmm::get_current_cuda_device());
  CHECK(mr.mapped_bytes() == 0);
  CHECK(virtual_memory_resource{rmm::get_current_cuda_device(), 3 * MiB}.reservation_size() ==
        rmm::align_up(3 * MiB, g));

  int const devices = rmm::get_num_cuda_devices();
  CHECK_THAT(logic_error_message([&] { virtual_memory_resource{rmm::cuda_device_id{devices}}; }),
             Contains("device " + std::to_string(devices) + " does not exist"));
  CHECK_THAT(logic_error_message([&] {
               virtual_memory_resource{rmm::get_current_cuda_device(), 0, {0}};
             }),
             Contains("peer device 0 is not another existing device"));

  virtual_memory_resource copy = mr;  // copies share state
  CHECK(copy == mr);
  CHECK_FALSE(virtual_memory_resource{} == mr);
}

TEST_CASE("vmm: an allocation reserves room to grow and maps whole granules", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  std::size_t const g = mr.granularity();
  void* p             = mr.allocate(stream, MiB + 1, 256);
  REQUIRE(p != nullptr);
  CHECK(rmm::is_pointer_aligned(p, g));
  CHECK(mr.mapped_size(p) == rmm::align_up(MiB + 1, g));
  CHECK(mr.reserved_size(p) == mr.reservation_size());
  auto const c = mr.statistics();
  CHECK(c.mapped == rmm::align_up(MiB + 1, g));
  CHECK(c.used == MiB + 1);
  CHECK(c.reserved == mr.reservation_size());
  CHECK(c.allocations == 1);
  rmm::test::fill_pattern(p, MiB + 1, 3, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(p, MiB + 1, 3, stream.value()) == 0);
  mr.deallocate(stream, p, MiB + 1, 256);
  stream.synchronize();
  mr.flush();
  auto const after = mr.statistics();
  CHECK(after.mapped == 0);
  CHECK(after.used == 0);
  CHECK(after.reserved == 0);
  CHECK(after.allocations == 0);
  CHECK(after.peak_mapped == rmm::align_up(MiB + 1, g));
}

TEST_CASE("vmm: growing in place keeps the address and the contents", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  std::size_t const g = mr.granularity();
  std::size_t bytes   = 3 * MiB;
  void* p             = mr.allocate(stream, bytes, 256);
  rmm::test::fill_pattern(p, bytes, 11, stream.value());
  // Grow in small steps to 256 MiB: never copied, so the pattern written first survives.
  while (bytes < 256 * MiB) {
    std::size_t const next = bytes + 2 * MiB + 17;
    REQUIRE(mr.try_resize(p, bytes, next, stream));
    bytes = next;
  }
  CHECK(mr.mapped_size(p) == rmm::align_up(bytes, g));
  CHECK(mr.used_bytes() == bytes);
  CHECK(rmm::test::count_pattern_mismatches(p, 3 * MiB, 11, stream.value()) == 0);
  rmm::test::fill_pattern(p, bytes, 12, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(p, bytes, 12, stream.value()) == 0);
  // Within the mapped memory a resize needs no driver call and changes only the size.
  std::size_t const mapped = mr.mapped_size(p);
  REQUIRE(mr.try_resize(p, bytes, mapped, stream));
  CHECK(mr.mapped_size(p) == mapped);
  mr.deallocate(stream, p, mapped, 256);
}

TEST_CASE("vmm: shrinking unmaps the tail and the device's free memory rises", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  std::size_t const g = mr.granularity();
  // 32 MiB mapped at once comes in pieces of an eighth: [0, 4), [4, 8), ... MiB.
  void* p           = mr.allocate(stream, 32 * MiB, 256);
  std::size_t bytes = 32 * MiB;
  for (int i = 0; i < 64; ++i) {  // 64 more steps of 4 MiB
    REQUIRE(mr.try_resize(p, bytes, bytes + 4 * MiB, stream));
    bytes += 4 * MiB;
  }
  rmm::test::fill_pattern(p, bytes, 5, stream.value());
  stream.synchronize();
  std::size_t const free_before = device_free();
  REQUIRE(mr.try_resize(p, bytes, 6 * MiB, stream));  // the piece [4, 8) MiB straddles 6 MiB
  stream.synchronize();
  mr.flush();
  CHECK(mr.mapped_size(p) == rmm::align_up(8 * MiB, g));
  CHECK(mr.mapped_bytes() == rmm::align_up(8 * MiB, g));
  CHECK(mr.used_bytes() == 6 * MiB);
  CHECK(device_free() >= free_before + 200 * MiB);
  CHECK(rmm::test::count_pattern_mismatches(p, 6 * MiB, 5, stream.value()) == 0);
  // It grows again over the unmapped range.
  REQUIRE(mr.try_resize(p, 6 * MiB, 64 * MiB, stream));
  rmm::test::fill_pattern(p, 64 * MiB, 6, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(p, 64 * MiB, 6, stream.value()) == 0);
  mr.deallocate(stream, p, 64 * MiB, 256);
}

TEST_CASE("vmm: unmapping waits for the work queued on the freeing stream", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 64 * MiB, 256);
  void* q = mr.allocate(stream, 2 * MiB, 256);
  REQUIRE(mr.try_resize(q, 2 * MiB, 64 * MiB, stream));  // a second piece: [2, 64) MiB
  // Kernels still running (they spin first) when the memory is freed and the tail shrunk: an
  // unmap that did not wait would make them fault (compute-sanitizer reports it).
  rmm::test::fill_pattern_after_delay(p, 64 * MiB, 1, 200'000'000, stream.value());
  rmm::test::fill_pattern_after_delay(q, 64 * MiB, 2, 0, stream.value());
  mr.deallocate(stream, p, 64 * MiB, 256);
  REQUIRE(mr.try_resize(q, 64 * MiB, 2 * MiB, stream));
  CHECK(mr.mapped_bytes() == 128 * MiB);  // both still mapped: the kernels have not finished
  stream.synchronize();
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(mr.mapped_bytes() == mr.mapped_size(q));  // done once the event has completed
  CHECK(mr.mapped_size(q) == rmm::align_up(2 * MiB, mr.granularity()));
  CHECK(rmm::test::count_pattern_mismatches(q, 2 * MiB, 2, stream.value()) == 0);
  mr.deallocate(stream, q, 2 * MiB, 256);
}

TEST_CASE("vmm: a range is released only after its tail's unmap on another stream", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream busy;
  rmm::cuda_stream idle;
  void* p = mr.allocate(busy, 2 * MiB, 256);
  REQUIRE(mr.try_resize(p, 2 * MiB, 64 * MiB, busy));
  rmm::test::fill_pattern_after_delay(p, 64 * MiB, 1, 200'000'000, busy.value());
  REQUIRE(mr.try_resize(p, 64 * MiB, 2 * MiB, busy));  // tail unmap waits for `busy`
  mr.deallocate(idle, p, 2 * MiB, 256);                // completes first
  idle.synchronize();
  auto const during = mr.statistics();
  CHECK(during.reserved == mr.reservation_size());  // not freed while its tail is mapped
  CHECK(during.mapped == 64 * MiB);
  busy.synchronize();
  auto const after = mr.statistics();
  CHECK(after.reserved == 0);
  CHECK(after.mapped == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("vmm: a reservation bounds growth; failures leave the allocation intact",
          "[gpu][vmm][expected_api_errors]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource small{rmm::get_current_cuda_device(), 8 * MiB};
  rmm::cuda_stream stream;
  void* p = small.allocate(stream, 4 * MiB, 256);
  rmm::test::fill_pattern(p, 4 * MiB, 9, stream.value());
  CHECK_FALSE(small.try_resize(p, 4 * MiB, 8 * MiB + 1, stream));
  REQUIRE(small.try_resize(p, 4 * MiB, 8 * MiB, stream));
  std::size_t const total = rmm::available_device_memory().second;
  virtual_memory_resource mr;
  void* big = mr.allocate(stream, 4 * MiB, 256);
  rmm::test::fill_pattern(big, 4 * MiB, 10, stream.value());
  CHECK_FALSE(mr.try_resize(big, 4 * MiB, total, stream));  // more than the device can map
  CHECK(mr.mapped_size(big) == rmm::align_up(4 * MiB, mr.granularity()));
  CHECK(rmm::test::count_pattern_mismatches(big, 4 * MiB, 10, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(p, 4 * MiB, 9, stream.value()) == 0);

  CHECK_THAT(logic_error_message([&] { mr.try_resize(p, 4 * MiB, 8 * MiB, stream); }),
             Contains("try_resize of unknown pointer"));
  CHECK_THAT(logic_error_message([&] { mr.try_resize(big, 3 * MiB, 8 * MiB, stream); }),
             Contains("from 3145728 bytes, but its size is 4194304"));
  CHECK_THAT(logic_error_message([&] { mr.try_resize(big, 4 * MiB, 0, stream); }),
             Contains("try_resize to 0 bytes"));
  small.deallocate(stream, p, 8 * MiB, 256);
  mr.deallocate(stream, big, 4 * MiB, 256);
}

TEST_CASE("vmm: out of memory is typed and reports what is mapped and free",
          "[gpu][vmm][expected_api_errors]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  void* held              = mr.allocate(stream, 8 * MiB, 256);
  std::size_t const total = rmm::available_device_memory().second;
  try {
    void* p = mr.allocate(stream, total, 256);
    mr.deallocate(stream, p, total, 256);
    FAIL("allocating the whole device did not throw");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK_THAT(what,
               Contains("cannot allocate " + std::to_string(total) + " bytes") &&
                   Contains("this resource maps 8388608 bytes") && Contains("bytes free of") &&
                   Contains("CUDA_ERROR_OUT_OF_MEMORY"));
  }
  CHECK(mr.mapped_bytes() == 8 * MiB);
  CHECK(mr.reserved_bytes() == mr.reservation_size());
  void* p = mr.allocate(stream, MiB, 256);  // nothing was lost
  mr.deallocate(stream, p, MiB, 256);
  mr.deallocate(stream, held, 8 * MiB, 256);
}

TEST_CASE("vmm: many threads allocate, resize and free at once", "[gpu][vmm]") {
  if (vmm_unavailable()) {
    return;
  }
  // Small reservations: 16 threads' live allocations stay far from the address space's end.
  virtual_memory_resource mr{rmm::get_current_cuda_device(), 256 * MiB};
  std::atomic<int> errors{0};
  std::atomic<std::size_t> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      try {
        rmm::cuda_stream stream;
        std::mt19937_64 rng{static_cast<std::uint64_t>(t)};
        std::uniform_int_distribution<std::size_t> size{1, 64 * MiB};
        for (int i = 0; i < 20; ++i) {
          std::size_t bytes = size(rng);
          void* p           = mr.allocate(stream, bytes, 256);
          auto const seed   = static_cast<std::uint32_t>(t * 100 + i);
          rmm::test::fill_pattern(p, bytes, seed, stream.value());
          std::size_t const next = size(rng);
          if (!mr.try_resize(p, bytes, next, stream)) {
            ++errors;
          }
          mismatches +=
              rmm::test::count_pattern_mismatches(p, std::min(bytes, next), seed, stream.value());
          mr.deallocate(stream, p, next, 256);
        }
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(errors == 0);
  CHECK(mismatches == 0);
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  mr.flush();
  auto const c = mr.statistics();
  CHECK(c.mapped == 0);
  CHECK(c.used == 0);
  CHECK(c.reserved == 0);
  CHECK(c.allocations == 0);
}
