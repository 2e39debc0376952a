// fixed_size_memory_resource while another thread captures a CUDA graph in global mode: its
// device synchronisations are refused then, and a refused synchronisation must not make blocks
// that work may still use look idle (stream_ordered_core.md, "A synchronisation can fail").
#include "../utilities/graph_capture.hpp"

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

TEST_CASE("fixed_size: a refused device synchronisation hands out nothing that work may still use",
          "[gpu][fixed_size][expected_api_errors]") {
  constexpr std::size_t block  = 64 * 1024;
  constexpr std::size_t blocks = 8;
  rmm::mr::limiting_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}, block * blocks};
  {
    rmm::mr::fixed_size_memory_resource mr{upstream, block, blocks};
    rmm::test::check_one_size_refused_sync(mr, block, blocks, [&](std::size_t taken) {
      // s1's 7 frees fit in its batch (32 blocks): none is in a list another stream may take.
      CHECK(taken == 0);
      CHECK(mr.capacity_blocks() == blocks);          // no growth
      CHECK(mr.free_blocks() == blocks - 1 - taken);  // nothing lost
    });
    CHECK(mr.free_blocks() == blocks);
  }
  CHECK(upstream.get_allocated_bytes() == 0);
}
