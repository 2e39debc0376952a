// pool_memory_resource while another thread captures a CUDA graph in global mode: the pool's
// device synchronisations are refused then, and a refused synchronisation must not make blocks
// that work may still use look idle (stream_ordered_core.md, "A synchronisation can fail").
#include "../utilities/device_kernels.hpp"
#include "../utilities/graph_capture.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace {

using rmm::mr::cuda_memory_resource;
using rmm::mr::pool_memory_resource;
using rmm::test::capture_on_other_thread;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

}  // namespace

TEST_CASE("pool: a refused device synchronisation hands out nothing that work may still use",
          "[gpu][pool][expected_api_errors]") {
  // 4 MiB, all of it handed out: a (2 MiB) and c (512 KiB) on s1, b (1.5 MiB) on s2. A slow
  // kernel on s1 still writes a when s1 frees it; c waits in s1's batch. A request for 4 MiB on s2
  // then needs the last resort: a device synchronisation, after which every free block would be
  // idle and merge. Refused (another thread captures), it must fail the request, not hand out a.
  pool_memory_resource pool{cuda_memory_resource{}, 4 * MiB, 4 * MiB};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* a = pool.allocate(s1, 2 * MiB, 256);
  void* b = pool.allocate(s2, 3 * MiB / 2, 256);
  void* c = pool.allocate(s1, 512 * KiB, 256);
  rmm::test::fill_pattern_after_delay(a, 2 * MiB, 1, 300'000'000, s1.value());  // ~300 ms
  pool.deallocate(s1, a, 2 * MiB, 256);
  pool.deallocate(s1, c, 512 * KiB, 256);
  pool.deallocate(s2, b, 3 * MiB / 2, 256);
  {
    capture_on_other_thread const capture;
    REQUIRE(capture.begin_status() == cudaSuccess);
    CHECK_THROWS_AS(pool.allocate(s2, 4 * MiB, 256), rmm::out_of_memory);
    CHECK_THROWS_AS(pool.release(), rmm::cuda_error);
    CHECK(pool.pool_size() == 4 * MiB);          // nothing given back
    CHECK(pool.free_bytes() == 4 * MiB);         // nothing lost: c is back in s1's list
    CHECK(pool.largest_free_block() < 4 * MiB);  // nothing merged across streams
  }
  CHECK(cudaGetLastError() == cudaSuccess);
  // Once the capture has ended, the same request synchronises and gets the merged blocks; a's
  // kernel has finished, so it cannot overwrite the new pattern.
  auto const at = [](void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  void* whole   = pool.allocate(s2, 4 * MiB, 256);
  CHECK(at(whole) == std::min({at(a), at(b), at(c)}));  // the three tile the pool's one chunk
  CHECK(rmm::test::fill_and_count_mismatches(whole, 4 * MiB, 2, s2.value()) == 0);
  pool.deallocate(s2, whole, 4 * MiB, 256);
  pool.release();
  CHECK(pool.pool_size() == 0);
}
