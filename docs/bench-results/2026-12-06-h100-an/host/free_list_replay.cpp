// Standalone: tlsf_free_list with R regions over 324 MiB, the random_allocations workload.
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <x86intrin.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <string>
using rmm::mr::detail::tlsf_free_list;
static std::size_t g_miss1 = 0;
static std::size_t g_ah = 0;
template <class... A> void dump(A const&... a) { ((std::printf("%s ", std::to_string(a).c_str())), ...); std::printf("\n"); }
int main(int argc, char** argv) {
  std::size_t const split = std::strtoull(argv[1], nullptr, 10) << 20;
  int const reps = std::atoi(argv[2]);
  bool const pertime = argc > 3;
  tlsf_free_list fl{256};
  std::uintptr_t const base = std::uintptr_t{1} << 40;
  std::size_t const total = std::size_t{324} << 20;
  std::vector<std::uintptr_t> starts;
  if (char const* k = std::getenv("K")) {
    fl.insert_region(std::uintptr_t{1} << 45, std::size_t{1} << 30, 5);
    for (int i = 0; i < std::atoi(k); ++i) (void)fl.allocate(256, 5);
  }
  for (std::size_t off = 0; off < total;) {
    std::size_t len = std::min(split, total - off);
    if (total - off - len < split) len = total - off;
    fl.insert_region(base + off, len, 0);
    starts.push_back(base + off);
    off += len;
  }
  std::size_t const num = 1000, max_mib = 1;
  std::vector<std::pair<std::uintptr_t, std::size_t>> live;
  live.reserve(num + 1);
  std::vector<double> times;
  std::vector<std::uint64_t> tal(2 * num), tfr(2 * num);
  std::vector<double> sa, sf;
  for (int r = 0; r <= reps; ++r) {
    std::default_random_engine gen(std::getenv("VARY") ? unsigned(r % std::atoi(std::getenv("VARY")) + 1) : std::default_random_engine::default_seed);
    std::uniform_int_distribution<int> op(0, 99);
    std::uniform_int_distribution<std::size_t> idx(0, num - 1);
    std::uniform_int_distribution<std::size_t> sz(1, max_mib << 20);
    std::size_t active = 0, count = 0, na = 0, nf = 0;
    std::uint64_t ca = 0, cf = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < num * 2; ++i) {
      bool do_alloc = true;
      auto size = sz(gen);
      if (active > 0) { int c = op(gen); do_alloc = c < 73 && count < num; }
      std::uintptr_t ptr = 0;
      std::size_t const rs = (size + 255) / 256 * 256;
      if (do_alloc) {
        std::uint64_t a = pertime ? __rdtsc() : 0;
        auto p = fl.allocate(rs, 1);
        if (!p) ++g_miss1;
        if (!p && fl.free_bytes(0) != 0) { p = fl.allocate(rs, 0); if (!p) { fl.retag(0, 1); p = fl.allocate(rs, 1); } }
        if (pertime) ca += __rdtsc() - a, ++na;
        if (p) { ptr = *p; g_ah = (g_ah ^ ptr) * 1099511628211ULL; } else do_alloc = false;
      }
      if (do_alloc) { live.emplace_back(ptr, rs); ++active; ++count; }
      else if (active > 0) {
        std::size_t k = idx(gen) % active; --active;
        auto v = live[k];
        if (live.size() > 1 && k < live.size() - 1) std::swap(live[k], live.back());
        live.pop_back();
        std::uint64_t a = pertime ? __rdtsc() : 0;
        fl.deallocate(v.first, v.second, 1);
        if (pertime) cf += __rdtsc() - a, ++nf;
      }
    }
    double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& v : live) fl.deallocate(v.first, v.second, 1);
    live.clear();
    if (std::getenv("HASH") && r < 12) { std::printf("[%zx] ", g_ah & 0xffff); g_ah = 0; }
    if (std::getenv("HASH2") && r < 12) {
      std::size_t h = 1469598103934665603ULL;
      auto mix = [&](std::size_t v) { h = (h ^ v) * 1099511628211ULL; };
      fl.for_each_block([&](std::uintptr_t b, std::size_t sz, bool f, auto rid, auto tag) { mix(b); mix(sz); mix(f); mix(rid); mix(tag); });
      std::printf("%zx ", h & 0xffff);
    }
    if (std::getenv("DUMP") && r == 0) {
      fl.for_each_block([&](auto const&... a) { dump(a...); });
    }
    if (std::getenv("RETAG") && r == 0) {
      fl.retag(0, 1);
      if (char const* b = std::getenv("BAR")) {
        std::size_t const bsz = std::strtoull(std::getenv("BSZ") ? std::getenv("BSZ") : "819200", nullptr, 10);
        for (std::size_t i = 0; i < starts.size(); ++i) {
          std::uintptr_t end = i + 1 < starts.size() ? starts[i + 1] : base + total;
          fl.allocate_range(starts[i], end - bsz, bsz);
          if (b[0] != 'a') fl.deallocate(end - bsz, bsz, b[0] == '0' ? 0 : 2);
        }
      }
    }
    if (std::getenv("DBG") && r < 5) std::printf("run %d: tag0 %zu blocks %zu MiB, tag1 %zu blocks %zu MiB\n", r, fl.num_free_blocks(0), fl.free_bytes(0) >> 20, fl.num_free_blocks(1), fl.free_bytes(1) >> 20);
    if (r > 0) { times.push_back(e * 1e9 / (2.0 * num)); if (pertime) { sa.push_back(double(ca)/na); sf.push_back(double(cf)/nf);} }
  }
  std::sort(times.begin(), times.end());
  std::printf("split %zu MiB: median %.1f ns/op (min %.1f)", split >> 20, times[times.size()/2], times[0]);
  if (pertime) { std::sort(sa.begin(), sa.end()); std::sort(sf.begin(), sf.end()); std::printf("  alloc %.0f cyc, free %.0f cyc", sa[sa.size()/2], sf[sf.size()/2]); }
  std::printf(" miss1 %zu per run\n", g_miss1 / (reps + 1));

}
