// Why one thread of rmm_multithread_bench is slower per operation than rmm_random_allocations_bench
// on the same pool: the same workload (n = 10000, max 1 MiB), varied one factor at a time.
//   mt_probe VARIANT RUNS   VARIANT: legacy | created | thread | thread_local_release
#include "bench_common.hpp"

#include <condition_variable>

namespace rb = rmm::bench;

int main(int argc, char** argv) {
  std::string const v = argc > 1 ? argv[1] : "legacy";
  int const runs      = argc > 2 ? std::atoi(argv[2]) : 300;
  std::string const r = argc > 3 ? argv[3] : "pool";
  rmm::cuda_stream created{rmm::cuda_stream::flags::non_blocking};
  cudaStream_t const s = v == "legacy" ? cudaStream_t{} : created.value();
  auto run = [&](auto& mr) {
    rb::live_list live;
    live.reserve(10001);
    std::vector<double> times;
    for (int i = 0; i < runs + 3; ++i) {
      live.clear();
      rb::workload_params const params{10000, 1, 16000, 1234U};
      double t = 0;
      if (v == "legacy" || v == "created") {
        auto const start = rb::clock_type::now();
        rb::random_workload(mr, cuda::stream_ref{s}, params, live);
        rb::device_sync();
        t = rb::seconds_since(start);
        rb::release_all(mr, cuda::stream_ref{s}, live);
      } else {
        rb::clock_type::time_point rel;
        bool const own_release = v == "thread_local_release";
        rb::run_on_threads(
            1,
            [&](std::size_t) {
              rb::live_list l = std::move(live);
              rb::random_workload(mr, cuda::stream_ref{s}, params, l);
              if (own_release) {
                rb::device_sync();
                t = rb::seconds_since(rel);
                rb::release_all(mr, cuda::stream_ref{s}, l);
              }
              live = std::move(l);
            },
            &rel);
        rb::device_sync();
        if (!own_release) {
          t = rb::seconds_since(rel);
          rb::release_all(mr, cuda::stream_ref{s}, live);
        }
      }
      rb::device_sync();
      if (i >= 3) {
        times.push_back(t);
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("%-8s %-22s median %.1f ns/op  min %.1f\n", r.c_str(), v.c_str(),
                times[times.size() / 2] * 1e9 / 20000, times.front() * 1e9 / 20000);
  };
  if (r == "pool") {
    rmm::mr::pool_memory_resource mr{rmm::mr::cuda_memory_resource{}, std::size_t{0}};
    run(mr);
  } else if (r == "arena") {
    rmm::mr::arena_memory_resource mr{rmm::mr::cuda_memory_resource{}};
    run(mr);
  } else {
    rb::null_memory_resource mr;
    run(mr);
  }
}
