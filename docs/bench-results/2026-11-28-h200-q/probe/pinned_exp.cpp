// Experiment: where does the pinned pool pair's bimodal time come from?
// Per fresh fixture (stream + pool over pinned host memory, as rmm_pinned_bench builds them):
//   sync_us   median cudaStreamSynchronize of the idle stream
//   b256      ns/pair of batches of 256 pairs + sync (the benchmark's measure)
//   nosync    ns/pair of batches of 256 pairs without sync
//   b4096     ns/pair of batches of 4096 pairs + sync
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <cuda_runtime_api.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>
using clk = std::chrono::steady_clock;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
struct fx { rmm::cuda_stream s; std::unique_ptr<rmm::mr::pool_memory_resource> mr; };
template <class F> double time_ns(F f) { auto t = clk::now(); f(); return std::chrono::duration<double, std::nano>(clk::now() - t).count(); }
static double calib() {  // ns per iteration of a dependent multiply-add chain (latency bound)
  volatile unsigned long seed = 1; unsigned long x = seed;
  auto t = clk::now();
  for (int i = 0; i < 2000000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  double ns = std::chrono::duration<double, std::nano>(clk::now() - t).count() / 2000000;
  seed = x; return ns;
}
int main(int argc, char** argv) {
  std::size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 4096;
  int nfx = argc > 2 ? std::atoi(argv[2]) : 12;
  std::vector<std::unique_ptr<fx>> keep;
  for (int k = 0; k < nfx; ++k) {
    auto f = std::make_unique<fx>();
    f->mr = std::make_unique<rmm::mr::pool_memory_resource>(rmm::mr::pinned_host_memory_resource{}, std::size_t{0});
    auto pairs = [&](int n) { for (int i = 0; i < n; ++i) { void* p = f->mr->allocate(f->s, bytes, 256); f->mr->deallocate(f->s, p, bytes, 256); } };
    pairs(256); f->s.synchronize();
    std::vector<double> sy, b256, ns, b4k;
    for (int r = 0; r < 200; ++r) sy.push_back(time_ns([&] { f->s.synchronize(); }));
    for (int r = 0; r < 200; ++r) b256.push_back(time_ns([&] { pairs(256); f->s.synchronize(); }) / 256);
    for (int r = 0; r < 200; ++r) ns.push_back(time_ns([&] { pairs(256); }) / 256);
    for (int r = 0; r < 30; ++r) b4k.push_back(time_ns([&] { pairs(4096); f->s.synchronize(); }) / 4096);
    double c = calib(); std::printf("calib %.3f ns/iter  bytes %zu fixture %2d: sync %.2f us  b256 %.1f  nosync %.1f  b4096 %.1f ns/pair\n", c, bytes, k, med(sy) / 1000, med(b256), med(ns), med(b4k));
    keep.push_back(std::move(f));
  }
}
