// Host model of pool_memory_resource and arena_memory_resource themselves (the real classes, one
// stream, over a fake upstream that hands out addresses from 1 TiB and is never dereferenced),
// driven by the random_allocations benchmark's workload statement for statement, for instruction
// counts under cachegrind and quiet timings on a machine without a GPU. The CUDA calls the
// resources make once (an event per stream slot in 37d4a84's pool; the arena's synchronisations)
// are stubbed (stubs.cpp). Build and count: build.sh, counts.sh.
//
//   ./model <null|pool|arena> n max_mib repetitions     median ns per operation
//   ./model pairs count kib repetitions                 pool allocate-free pairs of kib KiB
// The workload is the benchmark's own (rb::random_workload in benchmarks/bench_common.hpp, where
// the null resource comes from too): build with -I<repo>/benchmarks.
//   FRESH=1 ./model pool n max reps                     a new pool per repetition (the bench's regime)
#include "bench_common.hpp"  // rb::random_workload, rb::release_all, rb::null_memory_resource

#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <cuda/stream_ref>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace rb = rmm::bench;

namespace {

// Hands out addresses from 1 TiB, never dereferenced; frees are ignored.
struct fake_upstream {
  struct state {
    std::uintptr_t cursor = std::uintptr_t{1} << 40U;
  };
  std::shared_ptr<state> s = std::make_shared<state>();
  void* allocate(cuda::stream_ref, std::size_t b, std::size_t a) { return allocate_sync(b, a); }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  void* allocate_sync(std::size_t b, std::size_t = 256) {
    auto const p = s->cursor;
    s->cursor += (b + 255) / 256 * 256;
    return reinterpret_cast<void*>(p);
  }
  void deallocate_sync(void*, std::size_t, std::size_t = 256) noexcept {}
  bool operator==(fake_upstream const& o) const noexcept { return s == o.s; }
  bool operator!=(fake_upstream const& o) const noexcept { return s != o.s; }
  friend void get_property(fake_upstream const&, cuda::mr::device_accessible) noexcept {}
};

cuda::stream_ref const stream{cudaStream_t{nullptr}};

// The resource behind calls that callgrind can attribute (noinline).
template <class Resource>
struct measured {
  Resource r;
  [[gnu::noinline]] void* allocate(cuda::stream_ref s, std::size_t b, std::size_t a) {
    return r.allocate(s, b, a);
  }
  [[gnu::noinline]] void deallocate(cuda::stream_ref s, void* p, std::size_t b, std::size_t a) {
    r.deallocate(s, p, b, a);
  }
};
using pool_t  = measured<rmm::mr::pool_memory_resource>;
using arena_t = measured<rmm::mr::arena_memory_resource>;

// One run of the benchmark's own workload and the release of what it left; ns per operation.
template <class R>
double run(R& mr, std::size_t num, std::size_t max_mib, rb::live_list& live) {
  auto const t0 = std::chrono::steady_clock::now();
  rb::random_workload(mr, stream, rb::workload_params{num, max_mib}, live);
  double const e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rb::release_all(mr, stream, live);
  return e * 1e9 / (2.0 * static_cast<double>(num));
}

// rmm_pinned_bench's loop without the synchronisation: allocate-free pairs of one size.
template <class R>
double pairs(R& mr, std::size_t bytes, std::size_t count) {
  auto const t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    void* q = mr.allocate(stream, bytes, 256);
    mr.deallocate(stream, q, bytes, 256);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 /
         static_cast<double>(count);
}

template <class Once>
void report(char const* what, std::size_t n, std::size_t mx, int reps, Once once) {
  std::vector<double> v;
  for (int r = 0; r < reps + 1; ++r) {
    v.push_back(once());
  }
  v.erase(v.begin());  // the first grows the resource
  std::vector<double> const every = v;
  std::sort(v.begin(), v.end());
  std::printf("%s n=%zu max=%zu median %.1f ns/op (min %.1f)", what, n, mx, v[v.size() / 2], v[0]); if (std::getenv("EVERY")) { for (double x : every) std::printf(" %.0f", x); } std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s <null|pool|arena|pairs> n max_mib repetitions\n", argv[0]);
    return 2;
  }
  std::string const mode = argv[1];
  std::size_t const n    = std::strtoul(argv[2], nullptr, 10);
  std::size_t const mx   = std::strtoul(argv[3], nullptr, 10);
  int const reps         = std::atoi(argv[4]);
  rb::live_list live;
  live.reserve(n + 1);
  if (mode == "null") {
    rb::null_memory_resource nr;
    report("null", n, mx, reps, [&] { return run(nr, n, mx, live); });
  } else if (mode == "arena") {
    arena_t a{rmm::mr::arena_memory_resource{fake_upstream{}, std::size_t{40} << 30}};
    report("arena", n, mx, reps, [&] { return run(a, n, mx, live); });
  } else if (mode == "pairs") {
    pool_t p{rmm::mr::pool_memory_resource{fake_upstream{}, std::size_t{0}}};
    report("pairs", n, mx, reps, [&] { return pairs(p, mx << 10, n); });
  } else if (std::getenv("FRESH") != nullptr) {  // the bench's regime: a new pool, a warm-up run
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
      pool_t p{rmm::mr::pool_memory_resource{fake_upstream{}, std::size_t{0}}};
      run(p, n, mx, live);
      v.push_back(run(p, n, mx, live));
    }
    std::sort(v.begin(), v.end());
    std::printf("pool n=%zu max=%zu median %.1f ns/op (min %.1f) fresh\n", n, mx, v[v.size() / 2], v[0]);
  } else {
    pool_t p{rmm::mr::pool_memory_resource{fake_upstream{}, std::size_t{0}}};
    report("pool", n, mx, reps, [&] { return run(p, n, mx, live); });
  }
}
