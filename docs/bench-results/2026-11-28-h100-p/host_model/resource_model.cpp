// Host model of pool_memory_resource and arena_memory_resource themselves (the real classes, one
// stream, over a fake upstream that hands out addresses from 1 TiB and is never dereferenced),
// driven by the random_allocations benchmark's workload statement for statement, for instruction
// counts under cachegrind and quiet timings on a machine without a GPU. The CUDA calls the
// resources make once (an event per stream slot in 37d4a84's pool; the arena's synchronisations)
// are stubbed (stubs.cpp). Build and count: build.sh, counts.sh.
//
//   ./model <null|pool|arena> n max_mib repetitions     median ns per operation
//   ./model pairs count kib repetitions                 pool allocate-free pairs of kib KiB
//   FRESH=1 ./model pool n max reps                     a new pool per repetition (the bench's regime)
#include <rmm/mr/pool_memory_resource.hpp>
#if __has_include(<rmm/mr/arena_memory_resource.hpp>)
#include <rmm/mr/arena_memory_resource.hpp>
#endif
#include <cuda/stream_ref>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>
struct fake_upstream {
  struct state { std::uintptr_t cursor = std::uintptr_t{1} << 40U; };
  std::shared_ptr<state> s = std::make_shared<state>();
  void* allocate(cuda::stream_ref, std::size_t b, std::size_t a) { return allocate_sync(b, a); }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  void* allocate_sync(std::size_t b, std::size_t = 256) {
    auto p = s->cursor; s->cursor += (b + 255) / 256 * 256; return reinterpret_cast<void*>(p); }
  void deallocate_sync(void*, std::size_t, std::size_t = 256) noexcept {}
  bool operator==(fake_upstream const& o) const noexcept { return s == o.s; }
  bool operator!=(fake_upstream const& o) const noexcept { return s != o.s; }
  friend void get_property(fake_upstream const&, cuda::mr::device_accessible) noexcept {}
};
cuda::stream_ref const stream{cudaStream_t{nullptr}};
struct poolr {
  rmm::mr::pool_memory_resource p{fake_upstream{}, std::size_t{0}};
  [[gnu::noinline]] void* allocate(std::size_t b) { return p.allocate(stream, b, 256); }
  [[gnu::noinline]] void deallocate(void* q, std::size_t b) { p.deallocate(stream, q, b, 256); }
};
struct arenar {
  rmm::mr::arena_memory_resource a{fake_upstream{}, std::size_t{40} << 30};
  [[gnu::noinline]] void* allocate(std::size_t b) { return a.allocate(stream, b, 256); }
  [[gnu::noinline]] void deallocate(void* q, std::size_t b) { a.deallocate(stream, q, b, 256); }
};
struct nullr { void* allocate(std::size_t) { return reinterpret_cast<void*>(std::uintptr_t{4096}); } void deallocate(void*, std::size_t) {} };
template <class R>
double run(R& mr, std::size_t num, std::size_t max_mib, std::vector<std::pair<void*, std::size_t>>& live) {
  live.clear();
  auto t0 = std::chrono::steady_clock::now();
  std::default_random_engine gen;
  std::size_t const max_usage = std::size_t{16000} << 20;
  std::uniform_int_distribution<int> op(0, 99);
  std::uniform_int_distribution<std::size_t> idx(0, num - 1);
  std::uniform_int_distribution<std::size_t> sz(1, max_mib << 20);
  std::size_t active = 0, count = 0, bytes = 0;
  for (std::size_t i = 0; i < num * 2; ++i) {
    bool do_alloc = true;
    auto size = sz(gen);
    if (active > 0) { int c = op(gen); do_alloc = c < 73 && count < num && bytes + size < max_usage; }
    void* ptr = nullptr;
    if (do_alloc) { ptr = mr.allocate(size); if (!ptr) do_alloc = false; }
    if (do_alloc) { live.emplace_back(ptr, size); ++active; ++count; bytes += size; }
    else if (active > 0) {
      std::size_t k = idx(gen) % active; --active; auto victim = live[k];
      if (live.size() > 1 && k < live.size() - 1) std::swap(live[k], live.back());
      live.pop_back(); mr.deallocate(victim.first, victim.second); bytes -= victim.second;
    }
  }
  double const e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& [p, s] : live) mr.deallocate(p, s);
  live.clear();
  return e * 1e9 / (2.0 * double(num));
}
// pinned: allocate-free pairs of one size (rmm_pinned_bench's loop, without the synchronisation)
template <class R>
double pairs(R& mr, std::size_t bytes, std::size_t count) {
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < count; ++i) { void* q = mr.allocate(bytes); mr.deallocate(q, bytes); }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / double(count);
}
int main(int argc, char** argv) {
  // model <null|pool|pairs> n max_mib reps     (pairs: n pairs of max_mib KiB)
  char const m = argv[1][0];
  std::size_t n = std::strtoul(argv[2], nullptr, 10), mx = std::strtoul(argv[3], nullptr, 10);
  int reps = std::atoi(argv[4]);
  std::vector<std::pair<void*, std::size_t>> live; live.reserve(n + 1);
  nullr nr;
  std::vector<double> v;
  if (std::getenv("FRESH")) {  // the benchmark's regime: a new pool, one warm-up run, one timed run
    for (int r = 0; r < reps; ++r) { poolr q; run(q, n, mx, live); v.push_back(run(q, n, mx, live)); }
    std::sort(v.begin(), v.end());
    std::printf("%s n=%zu max=%zu median %.1f ns/op (min %.1f) fresh\n", argv[1], n, mx, v[v.size() / 2], v[0]);
    return 0;
  }
  if (argv[1][0] == 'a') {
    arenar ar;
    for (int r = 0; r < reps + 1; ++r) v.push_back(run(ar, n, mx, live));
    v.erase(v.begin()); std::sort(v.begin(), v.end());
    std::printf("%s n=%zu max=%zu median %.1f ns/op (min %.1f)\n", argv[1], n, mx, v[v.size() / 2], v[0]);
    return 0;
  }
  poolr pr;
  for (int r = 0; r < reps + 1; ++r)
    v.push_back(m == 'n' ? run(nr, n, mx, live) : m == 'p' && argv[1][1] == 'o' ? run(pr, n, mx, live) : pairs(pr, mx << 10, n));
  if (std::getenv("SHOW")) { for (double x : v) std::printf("%.1f ", x); std::printf("\n"); }
  v.erase(v.begin());
  std::sort(v.begin(), v.end());
  std::printf("%s n=%zu max=%zu median %.1f ns/op (min %.1f)\n", argv[1], n, mx, v[v.size() / 2], v[0]);
}
