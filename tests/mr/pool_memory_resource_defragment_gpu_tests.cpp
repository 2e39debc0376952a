// pool_memory_resource over virtual_memory_resource: defragmentation before growth
// (set_defragment_threshold). Before the range maps new memory at its end, free memory in its
// middle (at least the threshold) is unmapped after a device synchronisation, so the memory
// mapped at the peak stays near what is live; the holes are mapped back when a request needs
// them. Checked: the unmap happens before the new mapping (the peak), blocks in use keep their
// data, work still running on another stream's freed block finishes before its memory is
// unmapped (compute-sanitizer would report the access), and the threshold turns it off.
#include "../utilities/device_kernels.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>

namespace {

using rmm::mr::pool_memory_resource;
using rmm::mr::virtual_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20U;

using rmm::test::vmm_unavailable;

void* at(void* p, std::size_t offset) { return static_cast<char*>(p) + offset; }

}  // namespace

TEST_CASE("expandable pool: free memory in the middle is unmapped before the range grows",
          "[gpu][pool][vmm][defragment]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource vmm;
  std::size_t const g = vmm.granularity();
  pool_memory_resource pool{vmm, 0};
  CHECK(pool.defragment_threshold() == 32 * MiB);
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

TEST_CASE("expandable pool: no defragmentation below the threshold or when it is turned off",
          "[gpu][pool][vmm][defragment]") {
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource vmm;
  std::size_t const g = vmm.granularity();
  pool_memory_resource pool{vmm, 0};
  std::size_t middle = 16 * MiB;  // below the default threshold
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
  if (vmm_unavailable()) {
    return;
  }
  virtual_memory_resource vmm;
  std::size_t const g = vmm.granularity();
  pool_memory_resource pool{vmm, 0};
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
