// benchmarks/workload_seeds.hpp, on the host: which workload each run of a single-thread
// random-allocations benchmark uses (RMM_BENCH_SEEDS). One seed must leave the workload as it
// was (the rows stay comparable with earlier runs); several must cycle through distinct ones.
#include "null_memory_resource.hpp"
#include "workload_seeds.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

namespace {

namespace rb = rmm::bench;

// The null resource, recording the size of every allocation in order.
struct recording_resource {
  rb::null_memory_resource null;
  std::vector<std::size_t> sizes;
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    sizes.push_back(bytes);
    return null.allocate(stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t alignment) {
    null.deallocate(stream, ptr, bytes, alignment);
  }
};

// The sizes a workload allocates, in order (no GPU, no memory).
std::vector<std::size_t> sizes_of(rb::workload_params const& params) {
  recording_resource mr;
  rb::live_list live;
  live.reserve(params.num + 1);
  cuda::stream_ref const stream{cudaStream_t{}};
  rb::random_workload(mr, stream, params, live);
  rb::release_all(mr, stream, live);
  return mr.sizes;
}

}  // namespace

TEST_CASE("workload seeds: one seed leaves every run's workload as given", "[bench][seeds]") {
  rb::workload_params const given{1000, 4, 16000, 7};
  for (std::size_t run = 0; run < 5; ++run) {
    rb::workload_params const p = rb::workload_for_run(given, run, 1);
    CHECK(p.seed == 7);
    CHECK(p.num == 1000);
    CHECK(p.max_mib == 4);
    CHECK(p.max_usage_mib == 16000);
  }
}

TEST_CASE("workload seeds: several seeds cycle 1 .. S from the first run", "[bench][seeds]") {
  rb::workload_params const given{1000, 1};
  std::vector<unsigned> seeds;
  for (std::size_t run = 0; run < 7; ++run) {
    rb::workload_params const p = rb::workload_for_run(given, run, 3);
    seeds.push_back(p.seed);
    CHECK(p.num == given.num);
    CHECK(p.max_mib == given.max_mib);
  }
  CHECK(seeds == std::vector<unsigned>{1, 2, 3, 1, 2, 3, 1});
}

TEST_CASE("workload seeds: the cycled seeds give different workloads, each reproducible",
          "[bench][seeds]") {
  rb::workload_params const given{1000, 1};
  auto const first  = sizes_of(rb::workload_for_run(given, 0, 2));
  auto const second = sizes_of(rb::workload_for_run(given, 1, 2));
  auto const again  = sizes_of(rb::workload_for_run(given, 2, 2));
  REQUIRE_FALSE(first.empty());
  CHECK(first != second);
  CHECK(first == again);
  CHECK(first == sizes_of(given));  // seed 1 is the default workload
}
