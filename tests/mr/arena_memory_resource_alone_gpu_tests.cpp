// arena_memory_resource while one stream arena exists (no events, no owner map: returns go to the
// global arena under its lock alone) and its passage to two stream arenas, when the first arena's
// superblocks enter the owner map: blocks from the one-arena time are found and reused after it.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace {

using rmm::mr::arena_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20U;
constexpr std::size_t A   = rmm::CUDA_ALLOCATION_ALIGNMENT;

}  // namespace

TEST_CASE("arena: blocks returned while alone, then a second stream finds the first arena's blocks",
          "[gpu][arena]") {
  arena_memory_resource mr{rmm::mr::cuda_memory_resource{}, 256 * MiB};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  // Alone: a large block goes back to the global arena whole (release_large_alone), which is then
  // in the state it started from, so the same request is granted the same block again.
  void* first = mr.allocate(s1, 40 * MiB, A);
  mr.deallocate(s1, first, 40 * MiB, A);
  for (int i = 0; i < 3; ++i) {
    void* big = mr.allocate(s1, 40 * MiB, A);
    CHECK(big == first);
    CHECK(rmm::test::fill_and_count_mismatches(
              big, 40 * MiB, 10U + static_cast<unsigned>(i), s1.value()) == 0);
    mr.deallocate(s1, big, 40 * MiB, A);
  }
  void* small = mr.allocate(s1, MiB, A);       // in s1's arena (a batch of superblocks)
  void* kept  = mr.allocate(s1, 40 * MiB, A);  // a large block of the one-arena time
  rmm::test::fill_pattern(small, MiB, 7, s1.value());
  RMM_CUDA_TRY(cudaStreamSynchronize(s1.value()));

  // A second stream arena: s1's superblocks enter the owner map now.
  void* other = mr.allocate(s2, MiB, A);
  CHECK(other != small);
  CHECK(rmm::test::count_pattern_mismatches(small, MiB, 7, s2.value()) == 0);  // untouched
  CHECK(rmm::test::fill_and_count_mismatches(other, MiB, 8, s2.value()) == 0);

  // s1's small block freed on s2 goes back to s1's arena, found through the map.
  mr.deallocate(s2, small, MiB, A);
  void* again = mr.allocate(s1, MiB, A);
  CHECK(again == small);

  // The large block of the one-arena time, freed on s2 after the passage, serves s2 again.
  mr.deallocate(s2, kept, 40 * MiB, A);
  void* big = mr.allocate(s2, 40 * MiB, A);
  CHECK(rmm::test::fill_and_count_mismatches(big, 40 * MiB, 9, s2.value()) == 0);
  mr.deallocate(s2, big, 40 * MiB, A);
  mr.deallocate(s1, again, MiB, A);
  mr.deallocate(s2, other, MiB, A);
}
