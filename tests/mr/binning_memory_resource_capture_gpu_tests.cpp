// binning_memory_resource while another thread captures a CUDA graph in global mode: its bins'
// device synchronisations are refused then, and a refused synchronisation must not make blocks
// that work may still use look idle (stream_ordered_core.md, "A synchronisation can fail").
#include "../utilities/graph_capture.hpp"

#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

TEST_CASE("binning: a refused device synchronisation hands out nothing that work may still use",
          "[gpu][binning][expected_api_errors]") {
  // One bin of 64 KiB blocks, which preallocates 128 of them (fixed_size's default): the whole
  // limit, so neither the bin nor the upstream can serve more.
  constexpr std::size_t block  = 64 * 1024;
  constexpr std::size_t blocks = 128;
  rmm::mr::limiting_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}, block * blocks};
  {
    rmm::mr::binning_memory_resource mr{upstream, 16, 16};
    REQUIRE(upstream.get_allocated_bytes() == block * blocks);
    // s1's 127 frees: all but the batch's newest go into its list, covered by its event, and s2
    // takes those (ordered after s1's kernels) before it runs out.
    rmm::test::check_one_size_refused_sync(
        mr, block, blocks, [](std::size_t taken) { CHECK(taken > 0); });
  }
  CHECK(upstream.get_allocated_bytes() == 0);
}
