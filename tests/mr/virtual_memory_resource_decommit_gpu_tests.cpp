// virtual_memory_resource: holes in the middle of an allocation. decommittable() reports whole
// pieces, decommit() unmaps them behind the stream's work (the rest keeps its contents and the
// device's free memory rises), commit() maps them again, and bad ranges are rejected unchanged.
#include "../utilities/device_kernels.hpp"
#include "../utilities/messages.hpp"
#include "../utilities/vmm_support.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::virtual_memory_resource;
using rmm::test::logic_error_message;
using rmm::test::vmm_unavailable;
constexpr std::size_t MiB = std::size_t{1} << 20U;
using runs                = std::vector<std::pair<std::size_t, std::size_t>>;

std::size_t device_free() { return rmm::available_device_memory().first; }

char* at(void* p, std::size_t offset) { return static_cast<char*>(p) + offset; }

}  // namespace

TEST_CASE("vmm: decommit leaves a hole, commit maps it again, the rest keeps its contents",
          "[gpu][vmm]") {
  if (vmm_unavailable() || virtual_memory_resource{}.granularity() != 2 * MiB) {
    return;  // the offsets below assume 2 MiB granules (every current GPU)
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  // 256 MiB mapped at once comes in 8 pieces of 32 MiB.
  std::size_t const bytes = 256 * MiB;
  void* p                 = mr.allocate(stream, bytes, 256);
  CHECK(mr.decommittable(p, 0, bytes) == runs{{0, 224 * MiB}});  // the last piece stays
  CHECK(mr.decommittable(p, 40 * MiB, 100 * MiB) == runs{{64 * MiB, 64 * MiB}});
  CHECK(mr.decommittable(p, 40 * MiB, 10 * MiB).empty());
  rmm::test::fill_pattern(p, 64 * MiB, 1, stream.value());
  rmm::test::fill_pattern(at(p, 128 * MiB), 128 * MiB, 2, stream.value());
  // Work still queued on the stream uses the range to be unmapped: the unmap waits for it.
  rmm::test::fill_pattern_after_delay(at(p, 64 * MiB), 64 * MiB, 3, 20'000'000, stream.value());
  mr.decommit(p, 64 * MiB, 64 * MiB, stream);
  stream.synchronize();
  std::size_t const free_before = device_free();
  mr.flush();
  CHECK(mr.mapped_bytes() == 192 * MiB);
  CHECK(mr.mapped_size(p) == bytes);  // the mapped end stays
  CHECK(mr.used_bytes() == bytes);
  CHECK(device_free() >= free_before + 60 * MiB);
  CHECK(mr.decommittable(p, 0, bytes) == runs{{0, 64 * MiB}, {128 * MiB, 96 * MiB}});
  CHECK(rmm::test::count_pattern_mismatches(p, 64 * MiB, 1, stream.value()) == 0);
  CHECK(rmm::test::count_pattern_mismatches(at(p, 128 * MiB), 128 * MiB, 2, stream.value()) == 0);

  // Mapping back [32, 160) MiB maps only the hole; what was mapped stays as it was.
  REQUIRE(mr.commit(p, 32 * MiB, 128 * MiB));
  CHECK(mr.mapped_bytes() == bytes);
  CHECK(mr.statistics().peak_mapped == bytes);
  CHECK(rmm::test::count_pattern_mismatches(p, 64 * MiB, 1, stream.value()) == 0);
  rmm::test::fill_pattern(at(p, 64 * MiB), 64 * MiB, 4, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(at(p, 64 * MiB), 64 * MiB, 4, stream.value()) == 0);
  // The hole was mapped as one call of 64 MiB: pieces of 8 MiB.
  CHECK(mr.decommittable(p, 64 * MiB, 16 * MiB) == runs{{64 * MiB, 16 * MiB}});
  mr.decommit(p, 64 * MiB, 8 * MiB, stream);
  mr.decommit(p, 72 * MiB, 8 * MiB, stream);
  stream.synchronize();
  mr.flush();
  CHECK(mr.mapped_bytes() == bytes - 16 * MiB);
  // Freeing an allocation with a hole unmaps what is mapped and releases the range.
  mr.deallocate(stream, p, bytes, 256);
  stream.synchronize();
  mr.flush();
  CHECK(mr.mapped_bytes() == 0);
  CHECK(mr.reserved_bytes() == 0);
}

TEST_CASE("vmm: decommit and commit reject bad ranges and change nothing", "[gpu][vmm]") {
  if (vmm_unavailable() || virtual_memory_resource{}.granularity() != 2 * MiB) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 64 * MiB, 256);  // pieces of 8 MiB
  // Not whole pieces, the last piece (the mapped end), an unknown pointer.
  CHECK_THAT(logic_error_message([&] { mr.decommit(p, 4 * MiB, 8 * MiB, stream); }),
             Contains("not a run of whole mapped pieces"));
  CHECK_THAT(logic_error_message([&] { mr.decommit(p, 56 * MiB, 8 * MiB, stream); }),
             Contains("not a run of whole mapped pieces"));
  CHECK_THAT(logic_error_message([&] { mr.decommit(at(p, 1), 0, 8 * MiB, stream); }),
             Contains("unknown pointer"));
  // Not whole granules, beyond the mapped end.
  CHECK_THAT(logic_error_message([&] { static_cast<void>(mr.commit(p, MiB, 2 * MiB)); }),
             Contains("not whole granules below the mapped end"));
  CHECK_THAT(logic_error_message([&] { static_cast<void>(mr.commit(p, 60 * MiB, 8 * MiB)); }),
             Contains("not whole granules below the mapped end"));
  CHECK(mr.mapped_bytes() == 64 * MiB);
  // Committing what is mapped is a no-op that succeeds.
  CHECK(mr.commit(p, 0, 64 * MiB));
  CHECK(mr.mapped_bytes() == 64 * MiB);
  mr.deallocate(stream, p, 64 * MiB, 256);
}

TEST_CASE("vmm: growing at the end never maps a hole's range twice", "[gpu][vmm]") {
  if (vmm_unavailable() || virtual_memory_resource{}.granularity() != 2 * MiB) {
    return;
  }
  virtual_memory_resource mr;
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 64 * MiB, 256);
  mr.decommit(p, 8 * MiB, 16 * MiB, stream);
  REQUIRE(mr.try_resize(p, 64 * MiB, 96 * MiB, stream));
  stream.synchronize();
  mr.flush();
  CHECK(mr.mapped_bytes() == 80 * MiB);
  CHECK(mr.mapped_size(p) == 96 * MiB);
  rmm::test::fill_pattern(at(p, 24 * MiB), 72 * MiB, 5, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(at(p, 24 * MiB), 72 * MiB, 5, stream.value()) == 0);
  // Shrinking to just after the hole keeps it; growing again maps only the new end.
  REQUIRE(mr.try_resize(p, 96 * MiB, 32 * MiB, stream));
  REQUIRE(mr.try_resize(p, 32 * MiB, 40 * MiB, stream));
  stream.synchronize();
  mr.flush();
  CHECK(mr.mapped_bytes() == 24 * MiB);
  REQUIRE(mr.commit(p, 8 * MiB, 16 * MiB));
  CHECK(mr.mapped_bytes() == 40 * MiB);
  mr.deallocate(stream, p, 40 * MiB, 256);
}
