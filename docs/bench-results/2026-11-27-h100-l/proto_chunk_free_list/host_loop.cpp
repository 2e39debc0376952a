#include <rmm/mr/detail/algorithms/arena.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
namespace arena = rmm::mr::detail::arena;
int main(int argc, char** argv) {
  std::size_t const max = std::size_t(atoi(argv[1])) << 20;
  std::size_t const size = std::size_t(40) << 30;
  arena::global_arena g{0x10000000000, size};
  std::mt19937_64 rng{1};
  std::vector<std::pair<std::uintptr_t, std::size_t>> live;
  std::size_t ops = 0, fails = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200000; ++i) {
    bool alloc = live.empty() || rng() % 2 == 0;
    if (alloc) {
      std::size_t n = (1 + rng() % max + 255) / 256 * 256;
      if (n < (2u << 20)) n = 2u << 20;
      auto gr = g.acquire_exact(n);
      if (!gr) { ++fails; continue; }
      live.push_back({gr->base, n});
    } else {
      std::size_t k = rng() % live.size();
      g.release(live[k].first, live[k].second, arena::no_ticket);
      live[k] = live.back(); live.pop_back();
    }
    ++ops;
  }
  auto t1 = std::chrono::steady_clock::now();
  std::printf("max %zu MiB: %.1f ns/op, live %zu, free ranges %zu, fails %zu\n", max >> 20,
              std::chrono::duration<double, std::nano>(t1 - t0).count() / ops, live.size(), g.num_free_ranges(), fails);
}
