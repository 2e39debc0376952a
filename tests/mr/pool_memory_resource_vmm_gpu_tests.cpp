// pool_memory_resource over virtual_memory_resource (the expandable pool): one range grown in
// place by whole granules, blocks that span growth steps, the maximum as a cap on mapped memory,
// release() and the release threshold giving memory back, stream-ordered trimming, falling back
// to a new range when the reservation is full, and holes: free memory in the middle unmapped
// under the maximum, by release() or before growth (defragmentation: set_defragment_threshold),
// and mapped back when a request needs it. For defragmentation also: the unmap happens before the
// new mapping (the peak), work still running on another stream's freed block finishes before its
// memory is unmapped (compute-sanitizer would report the access), and the threshold turns it off.
#include "../utilities/device_kernels.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

using Catch::Matchers::Contains;
constexpr std::size_t MiB = std::size_t{1} << 20U;

void* at(void* p, std::size_t offset) { return static_cast<char*>(p) + offset; }

}  // namespace

TEST_CASE("expandable pool: grows one range in place by whole granules", "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  REQUIRE(pool.grows_in_place());
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, g / 2, 256);
  CHECK(pool.pool_size() == g);
  void* b = pool.allocate(stream, g / 2, 256);  // the rest of the first granule
  CHECK(pool.pool_size() == g);
  CHECK(static_cast<char*>(b) == static_cast<char*>(a) + g / 2);
  // 3 granules more than the free tail (none): mapped right after, contiguous with a and b.
  void* c = pool.allocate(stream, 3 * g, 256);
  CHECK(static_cast<char*>(c) == static_cast<char*>(a) + g);
  CHECK(pool.pool_size() == 4 * g);
  CHECK(vmm.mapped_bytes() == 4 * g);
  CHECK(vmm.statistics().allocations == 1);  // one range
  pool.deallocate(stream, b, g / 2, 256);
  // Half a granule is free before c; a block of 1.5 granules at the end needs 2 more granules
  // and is carved from the new tail.
  void* d = pool.allocate(stream, g + g / 2, 256);
  CHECK(static_cast<char*>(d) == static_cast<char*>(a) + 4 * g);
  CHECK(pool.pool_size() == 6 * g);
  pool.deallocate(stream, c, 3 * g, 256);
  // b's half granule and c's 3 granules, mapped by different growth steps, coalesced into one
  // block: coalescing crosses the boundaries between mappings.
  void* e = pool.allocate(stream, 3 * g + g / 2, 256);
  CHECK(static_cast<char*>(e) == static_cast<char*>(a) + g / 2);
  CHECK(pool.pool_size() == 6 * g);
  rmm::test::fill_pattern(e, 3 * g + g / 2, 4, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(e, 3 * g + g / 2, 4, stream.value()) == 0);
  pool.deallocate(stream, a, g / 2, 256);
  pool.deallocate(stream, d, g + g / 2, 256);
  pool.deallocate(stream, e, 3 * g + g / 2, 256);
  CHECK(pool.free_bytes() == 6 * g);
}

TEST_CASE("expandable pool: the maximum caps mapped memory and out of memory is explained",
          "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool(4);
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 3 * g, 256);
  try {
    static_cast<void>(pool.allocate(stream, 2 * g, 256));
    FAIL("no out_of_memory");
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    CHECK_THAT(what, Contains("cannot allocate " + std::to_string(2 * g) + " bytes"));
    CHECK_THAT(what, Contains("pool size " + std::to_string(3 * g)));
    CHECK_THAT(what, Contains("maximum " + std::to_string(4 * g)));
    CHECK_THAT(what, Contains("would exceed the maximum"));
  }
  CHECK(vmm.mapped_bytes() == 3 * g);
  void* b = pool.allocate(stream, g, 256);  // exactly up to the cap
  CHECK(vmm.mapped_bytes() == 4 * g);
  pool.deallocate(stream, a, 3 * g, 256);
  pool.deallocate(stream, b, g, 256);
}

TEST_CASE("expandable pool: release() unmaps the free tail; the device's free memory rises",
          "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  void* low  = pool.allocate(stream, MiB, 256);
  void* high = pool.allocate(stream, 512 * MiB, 256);
  rmm::test::fill_pattern(low, MiB, 1, stream.value());
  pool.deallocate(stream, high, 512 * MiB, 256);
  CHECK(pool.pool_size() == rmm::align_up(513 * MiB, g));  // no threshold: nothing given back
  stream.synchronize();
  std::size_t const free_before = rmm::available_device_memory().first;
  pool.release();
  CHECK(pool.pool_size() == rmm::align_up(MiB, g));
  CHECK(vmm.mapped_bytes() == rmm::align_up(MiB, g));
  CHECK(rmm::available_device_memory().first >= free_before + 500 * MiB);
  CHECK(rmm::test::count_pattern_mismatches(low, MiB, 1, stream.value()) == 0);
  // It grows again after the trim.
  void* again = pool.allocate(stream, 64 * MiB, 256);
  rmm::test::fill_pattern(again, 64 * MiB, 2, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(again, 64 * MiB, 2, stream.value()) == 0);
  pool.deallocate(stream, again, 64 * MiB, 256);
  pool.deallocate(stream, low, MiB, 256);
  pool.release();  // all free: the range itself goes back
  CHECK(pool.pool_size() == 0);
  CHECK(vmm.mapped_bytes() == 0);
  CHECK(vmm.reserved_bytes() == 0);
}

TEST_CASE("expandable pool: the release threshold trims behind the freeing stream's work",
          "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  CHECK(pool.release_threshold() == std::numeric_limits<std::size_t>::max());
  pool.set_release_threshold(64 * MiB);
  CHECK(pool.release_threshold() == 64 * MiB);
  rmm::cuda_stream stream;
  void* low  = pool.allocate(stream, MiB, 256);
  void* high = pool.allocate(stream, 256 * MiB, 256);
  // Still running when freed: the unmap must wait for it (compute-sanitizer would report a
  // fault otherwise).
  rmm::test::fill_pattern_after_delay(high, 256 * MiB, 3, 100'000'000, stream.value());
  pool.deallocate(stream, high, 256 * MiB, 256);
  // At most the threshold stays free (whole granules): the pool shrank at once...
  CHECK(pool.pool_size() <= rmm::align_up(MiB, g) + 64 * MiB);
  CHECK(pool.pool_size() >= 64 * MiB);
  // ...but the memory is unmapped only after the kernel.
  CHECK(vmm.mapped_bytes() >= 256 * MiB);
  stream.synchronize();
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(vmm.mapped_bytes() == pool.pool_size());
  pool.deallocate(stream, low, MiB, 256);
}

TEST_CASE("expandable pool: a full reservation falls back to a new range", "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool(std::nullopt, 16 * MiB);
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) {  // 40 MiB in all: three ranges of at most 16 MiB
    blocks.push_back(pool.allocate(stream, 4 * MiB, 256));
    rmm::test::fill_pattern(blocks.back(), 4 * MiB, static_cast<std::uint32_t>(i), stream.value());
  }
  CHECK(pool.pool_size() == 40 * MiB);
  CHECK(vmm.statistics().allocations == 3);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    mismatches += rmm::test::count_pattern_mismatches(
        blocks[i], 4 * MiB, static_cast<std::uint32_t>(i), stream.value());
  }
  CHECK(mismatches == 0);
  for (void* p : blocks) {
    pool.deallocate(stream, p, 4 * MiB, 256);
  }
}

TEST_CASE(
    "expandable pool: under the maximum, free memory in the middle is unmapped and mapped "
    "back when a request needs it",
    "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool(12);
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 4 * g, 256);
  void* b = pool.allocate(stream, 4 * g, 256);
  void* c = pool.allocate(stream, 2 * g, 256);
  REQUIRE(b == at(a, 4 * g));
  REQUIRE(c == at(a, 8 * g));
  rmm::test::fill_pattern(a, 4 * g, 1, stream.value());
  rmm::test::fill_pattern(c, 2 * g, 2, stream.value());
  pool.deallocate(stream, b, 4 * g, 256);
  // 6 granules fit neither in b's 4 nor in the 2 left under the maximum: b's memory is unmapped
  // (a hole) and the range grows at its end instead.
  void* d = pool.allocate(stream, 6 * g, 256);
  CHECK(d == at(a, 10 * g));
  vmm.flush();
  CHECK(vmm.mapped_bytes() == 12 * g);
  CHECK(pool.pool_size() == 12 * g);
  CHECK(pool.free_bytes() == 0);
  CHECK(rmm::test::count_pattern_mismatches(a, 4 * g, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(c, 2 * g, 2, stream.value()) == 0);
  rmm::test::fill_pattern(d, 6 * g, 3, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(d, 6 * g, 3, stream.value()) == 0);
  // release() unmaps d's free tail; the hole stays a hole.
  pool.deallocate(stream, d, 6 * g, 256);
  pool.release();
  CHECK(pool.pool_size() == 6 * g);
  CHECK(vmm.mapped_bytes() == 6 * g);
  // With a free, the hole and a make 8 granules: mapping the hole (4 granules) serves 7.
  pool.deallocate(stream, a, 4 * g, 256);
  void* e = pool.allocate(stream, 7 * g, 256);
  CHECK(e == a);
  CHECK(pool.pool_size() == 10 * g);
  CHECK(vmm.mapped_bytes() == 10 * g);
  rmm::test::fill_pattern(e, 7 * g, 4, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(e, 7 * g, 4, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(c, 2 * g, 2, stream.value()) == 0);
  pool.deallocate(stream, e, 7 * g, 256);
  pool.deallocate(stream, c, 2 * g, 256);
  pool.release();
  CHECK(vmm.mapped_bytes() == 0);
}

TEST_CASE("expandable pool: release() unmaps free memory in the middle; the address is reused",
          "[gpu][pool][vmm]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  void* x = pool.allocate(stream, 64 * MiB, 256);
  void* y = pool.allocate(stream, 64 * MiB, 256);
  void* z = pool.allocate(stream, g, 256);
  rmm::test::fill_pattern(x, 64 * MiB, 1, stream.value());
  rmm::test::fill_pattern(z, g, 2, stream.value());
  pool.deallocate(stream, y, 64 * MiB, 256);
  stream.synchronize();
  std::size_t const free_before = rmm::available_device_memory().first;
  pool.release();
  CHECK(pool.pool_size() == 64 * MiB + g);
  CHECK(vmm.mapped_bytes() == 64 * MiB + g);
  CHECK(rmm::available_device_memory().first >= free_before + 60 * MiB);
  CHECK(pool.free_bytes() == 0);
  CHECK(rmm::test::count_pattern_mismatches(x, 64 * MiB, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(z, g, 2, stream.value()) == 0);
  // The hole is mapped back for a request it serves rather than growing the end.
  void* again = pool.allocate(stream, 64 * MiB, 256);
  CHECK(again == y);
  CHECK(pool.pool_size() == 128 * MiB + g);
  rmm::test::fill_pattern(again, 64 * MiB, 3, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(again, 64 * MiB, 3, stream.value()) == 0);
  pool.deallocate(stream, again, 64 * MiB, 256);
  pool.release();  // a hole again
  // A range whose only allocated blocks are holes goes back whole.
  pool.deallocate(stream, x, 64 * MiB, 256);
  pool.deallocate(stream, z, g, 256);
  pool.release();
  CHECK(pool.pool_size() == 0);
  CHECK(vmm.mapped_bytes() == 0);
  CHECK(vmm.reserved_bytes() == 0);
}

TEST_CASE("expandable pool: free memory in the middle is unmapped before the range grows",
          "[gpu][pool][vmm][defragment]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  CHECK(pool.defragment_threshold() == 64 * MiB);
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, 64 * MiB, 256);
  void* b = pool.allocate(stream, g, 256);
  REQUIRE(b == at(a, 64 * MiB));
  rmm::test::fill_pattern(b, g, 2, stream.value());
  pool.deallocate(stream, a, 64 * MiB, 256);
  // 96 MiB fit nowhere: a's 64 free MiB are unmapped first, then 96 MiB are mapped after b.
  void* c = pool.allocate(stream, 96 * MiB, 256);
  CHECK(pool.defragmentations() == 1);
  CHECK(c == at(b, g));
  vmm.flush();
  CHECK(vmm.mapped_bytes() == g + 96 * MiB);
  CHECK(pool.pool_size() == g + 96 * MiB);
  CHECK(vmm.statistics().peak_mapped == g + 96 * MiB);  // never a's and c's memory at once
  CHECK(rmm::test::count_pattern_mismatches(b, g, 2, stream.value()) == 0);
  rmm::test::fill_pattern(c, 96 * MiB, 3, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(c, 96 * MiB, 3, stream.value()) == 0);
  // A request that the hole serves maps it back, with no synchronisation.
  void* d = pool.allocate(stream, 64 * MiB, 256);
  CHECK(d == a);
  CHECK(pool.defragmentations() == 1);
  CHECK(pool.pool_size() == 64 * MiB + g + 96 * MiB);
  rmm::test::fill_pattern(d, 64 * MiB, 4, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(d, 64 * MiB, 4, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(c, 96 * MiB, 3, stream.value()) == 0);
  pool.deallocate(stream, b, g, 256);
  pool.deallocate(stream, c, 96 * MiB, 256);
  pool.deallocate(stream, d, 64 * MiB, 256);
  pool.release();
  CHECK(vmm.mapped_bytes() == 0);
}

TEST_CASE("expandable pool: no defragmentation while the pool stays below its peak",
          "[gpu][pool][vmm][defragment]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream stream;
  void* a                = pool.allocate(stream, 128 * MiB, 256);
  void* b                = pool.allocate(stream, g, 256);
  void* x                = pool.allocate(stream, 192 * MiB, 256);
  void* y                = pool.allocate(stream, g, 256);
  std::size_t const peak = 320 * MiB + 2 * g;
  pool.deallocate(stream, x, 192 * MiB, 256);
  pool.release();  // x's memory becomes a hole: 128 MiB + 2 granules mapped
  REQUIRE(vmm.mapped_bytes() == 128 * MiB + 2 * g);
  pool.deallocate(stream, a, 128 * MiB, 256);
  // 160 MiB fit neither a's free 128 MiB nor x's hole (192 MiB cost more than extending);
  // extending by 160 MiB stays under the peak, so a's free memory stays mapped.
  void* c = pool.allocate(stream, 160 * MiB, 256);
  CHECK(pool.defragmentations() == 0);
  CHECK(vmm.mapped_bytes() == 288 * MiB + 2 * g);
  // 192 MiB: mapping x's hole back would pass the peak, so a's free 128 MiB are unmapped first.
  void* d = pool.allocate(stream, 192 * MiB, 256);
  CHECK(d == x);
  CHECK(pool.defragmentations() == 1);
  vmm.flush();
  CHECK(vmm.mapped_bytes() == 352 * MiB + 2 * g);
  CHECK(vmm.statistics().peak_mapped == std::max(peak, 352 * MiB + 2 * g));
  rmm::test::fill_pattern(d, 192 * MiB, 8, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(d, 192 * MiB, 8, stream.value()) == 0);
  pool.deallocate(stream, b, g, 256);
  pool.deallocate(stream, y, g, 256);
  pool.deallocate(stream, c, 160 * MiB, 256);
  pool.deallocate(stream, d, 192 * MiB, 256);
}

TEST_CASE("expandable pool: no defragmentation below the threshold or when it is turned off",
          "[gpu][pool][vmm][defragment]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  std::size_t middle   = 32 * MiB;  // below the default threshold
  SECTION("turned off") {
    pool.set_defragment_threshold(std::numeric_limits<std::size_t>::max());
    CHECK(pool.defragment_threshold() == std::numeric_limits<std::size_t>::max());
    middle = 64 * MiB;
  }
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, middle, 256);
  void* b = pool.allocate(stream, g, 256);
  pool.deallocate(stream, a, middle, 256);
  void* c = pool.allocate(stream, middle + 32 * MiB, 256);
  CHECK(pool.defragmentations() == 0);
  CHECK(c == at(b, g));
  CHECK(vmm.mapped_bytes() == middle + g + middle + 32 * MiB);
  pool.deallocate(stream, b, g, 256);
  pool.deallocate(stream, c, middle + 32 * MiB, 256);
}

TEST_CASE("expandable pool: defragmentation waits for work on the stream that freed the memory",
          "[gpu][pool][vmm][defragment]") {
  auto made = rmm::test::make_expandable_pool();
  if (!made) {
    return;
  }
  auto& [vmm, g, pool] = *made;
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* a = pool.allocate(s1, 256 * MiB, 256);
  void* b = pool.allocate(s1, g, 256);
  rmm::test::fill_pattern(b, g, 5, s1.value());
  // Work on a is still running when a is freed (the kernel spins 50 ms first); s2 then needs
  // more than the pool holds free. Unmapping a before that work ends would fault.
  rmm::test::fill_pattern_after_delay(a, 256 * MiB, 6, 50'000'000, s1.value());
  pool.deallocate(s1, a, 256 * MiB, 256);
  void* c = pool.allocate(s2, 300 * MiB, 256);
  CHECK(pool.defragmentations() == 1);
  CHECK(c == at(b, g));
  vmm.flush();
  CHECK(vmm.statistics().peak_mapped == g + 300 * MiB);
  rmm::test::fill_pattern(c, 300 * MiB, 7, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(c, 300 * MiB, 7, s2.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(b, g, 5, s2.value()) == 0);
  // The memory freed on s1 was given to s2 by the synchronisation: s2 reuses the hole directly.
  void* d = pool.allocate(s2, 256 * MiB, 256);
  CHECK(d == a);
  pool.deallocate(s2, d, 256 * MiB, 256);
  pool.deallocate(s2, c, 300 * MiB, 256);
  pool.deallocate(s1, b, g, 256);
}
