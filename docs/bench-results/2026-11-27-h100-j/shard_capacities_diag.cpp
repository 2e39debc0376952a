#include "bench_common.hpp"
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <cstdio>
namespace rb = rmm::bench;
int main(int argc, char** argv) {
  std::size_t const T = argc > 1 ? std::stoul(argv[1]) : 16;
  bool const ptds = argc > 2;
  auto mr = std::make_shared<rmm::mr::fixed_size_memory_resource>(rmm::mr::cuda_memory_resource{}, 1 << 20);
  auto& st = rmm::mr::detail::shared_state<rmm::mr::detail::fixed_size_memory_resource_impl>(*mr);
  std::vector<rmm::cuda_stream> owned(T);
  std::vector<rb::live_list> live(T);
  for (int run = 0; run < 8; ++run) {
    rb::run_on_threads(T, [&](std::size_t t) {
      cudaStream_t s = ptds ? cudaStreamPerThread : owned[t].value();
      rb::workload_params const params{10000, 1, 16000 / T, 1234U + static_cast<unsigned>(t)};
      rb::random_workload(*mr, cuda::stream_ref{s}, params, live[t]);
    });
    cudaDeviceSynchronize();
    for (std::size_t t = 0; t < T; ++t) { rb::release_all(*mr, cuda::stream_ref{ptds ? cudaStreamPerThread : owned[t].value()}, live[t]); }
    cudaDeviceSynchronize();
    auto caps = st.shard_capacities();
    std::size_t total = 0; for (auto c : caps) total += c;
    std::printf("T=%zu run %d sharded=%d total=%zu blocks: root %zu children:", T, run, (int)st.sharded(), total, caps[0]);
    for (std::size_t i = 1; i < caps.size(); ++i) std::printf(" %zu", caps[i]);
    std::printf("\n");
  }
}
