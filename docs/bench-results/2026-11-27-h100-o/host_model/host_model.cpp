// Host model of arena_memory_resource's one-stream hot path (arena_state with one stream arena:
// its spin locks, the stream arena, the global arena) driven by the random_allocations
// benchmark's workload, statement for statement, with no CUDA. For instruction counts under
// callgrind and quiet timings on a machine without a GPU. -DBEFORE builds arena_state's logic
// before session o (build it against the headers of that commit, 61c908a).
//
//   g++ -std=c++17 -O3 -DNDEBUG -I<repo>/include host_model.cpp -o after
//   g++ -std=c++17 -O3 -DNDEBUG -DBEFORE -I<61c908a>/include host_model.cpp -o before
//   ./after <null|arena> n max_mib repetitions      # median ns per operation
//   valgrind --tool=callgrind ./after arena 10000 64 1
#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>
#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <vector>
#include <array>
namespace arena = rmm::mr::detail::arena;
using rmm::mr::detail::spin_mutex;
using u = std::uintptr_t;
constexpr u base = u{1} << 40U;
struct model {
  arena::global_arena g;
  arena::chunk_stream_arena s;
  spin_mutex sm, gm;
  std::size_t batch;
  explicit model(std::size_t size) : g{base, size}, s{base, size, size} {
    std::size_t const floor = std::max(arena::default_cache_bytes, size / 64);
    batch = std::max(arena::superblock_size, std::min(8 * arena::superblock_size, floor / arena::superblock_size * arena::superblock_size));
  }
#ifdef BEFORE
  // arena_state before session o: the stream arena's lock first on every path.
  void* allocate(std::size_t bytes) {
    auto const n = *arena::round_up(bytes, arena::allocation_granularity);
    std::lock_guard<spin_mutex> l{sm};
    if (auto p = s.allocate(n)) return reinterpret_cast<void*>(*p);
    bool const large = n >= arena::large_request_min;
    std::optional<arena::superblock_grant> grant;
    {
      std::lock_guard<spin_mutex> gl{gm};
      if (large) grant = g.acquire_exact(n);
      else if (n < batch) grant = g.acquire(batch);
      if (!grant && !large) grant = g.acquire(n);
      if (!grant) return nullptr;
    }
    if (large) return reinterpret_cast<void*>(grant->base);
    s.add_superblock(grant->base, grant->size);
    return reinterpret_cast<void*>(*s.allocate(n));
  }
  void deallocate(void* ptr, std::size_t bytes) {
    auto const p = reinterpret_cast<u>(ptr);
    auto const n = *arena::round_up(bytes, arena::allocation_granularity);
    std::lock_guard<spin_mutex> l{sm};
    if (s.cache_bytes() != g.size()) s.set_cache_bytes(g.size());
    if (s.owns(p)) {
      if (auto r = s.deallocate(p, n)) {
        std::lock_guard<spin_mutex> gl{gm};
        g.release(r->base, r->size, arena::no_ticket);
      }
      return;
    }
    std::lock_guard<spin_mutex> gl{gm};
    if (g.large_size_at(p) != n) std::abort();
    g.release(p, n, arena::no_ticket);
  }
#else
  // arena_state after session o (arena_state_grants.hpp, arena_state.hpp deallocate).
  void* allocate(std::size_t bytes) {
    auto const n = *arena::round_up(bytes, arena::allocation_granularity);
    bool const large = n >= arena::large_request_min;
    bool const fits  = s.largest_free_block_hint() >= n;
    if (!large | fits) {
      std::lock_guard<spin_mutex> l{sm};
      if (auto p = s.allocate(n)) return reinterpret_cast<void*>(*p);
      if (!large) {
        std::optional<arena::superblock_grant> grant;
        {
          std::lock_guard<spin_mutex> gl{gm};
          if (n < batch) grant = g.acquire(batch);
          if (!grant) grant = g.acquire(n);
          if (!grant) return nullptr;
        }
        s.add_superblock(grant->base, grant->size);
        return reinterpret_cast<void*>(*s.allocate(n));
      }
    }
    std::lock_guard<spin_mutex> gl{gm};
    auto grant = g.acquire_exact(n);
    return grant ? reinterpret_cast<void*>(grant->base) : nullptr;
  }
  void deallocate(void* ptr, std::size_t bytes) {
    auto const p = reinterpret_cast<u>(ptr);
    auto const n = *arena::round_up(bytes, arena::allocation_granularity);
    bool const large  = n >= arena::large_request_min;
    bool const beyond = n > s.largest_superblock_hint();
    if (large & beyond) {
      std::lock_guard<spin_mutex> gl{gm};
      if (std::size_t const m = g.large_size_at(p); m != 0) {
        if (m != n) std::abort();
        g.release(p, n, arena::no_ticket);
        return;
      }
    }
    std::lock_guard<spin_mutex> l{sm};
    if (s.cache_bytes() != g.size()) s.set_cache_bytes(g.size());
    auto r = s.deallocate_if_owned(p, n);
    if (!r.owned) {
      std::lock_guard<spin_mutex> gl{gm};
      if (g.large_size_at(p) != n) std::abort();
      g.release(p, n, arena::no_ticket);
      return;
    }
    if (r.released) {
      std::lock_guard<spin_mutex> gl{gm};
      g.release(r.released->base, r.released->size, arena::no_ticket);
    }
  }
#endif
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
int main(int argc, char** argv) {
  // hb <null|arena> n max reps
  bool const null = argv[1][0] == 'n';
  std::size_t n = std::strtoul(argv[2], nullptr, 10), mx = std::strtoul(argv[3], nullptr, 10);
  int reps = std::atoi(argv[4]);
  std::vector<std::pair<void*, std::size_t>> live; live.reserve(n + 1);
  std::size_t const size = std::size_t{40} << 30;
  model m{size}; nullr nr;
  std::vector<double> v;
  for (int r = 0; r < reps + 1; ++r) v.push_back(null ? run(nr, n, mx, live) : run(m, n, mx, live));
  v.erase(v.begin());
  std::sort(v.begin(), v.end());
  std::printf("%s n=%zu max=%zu median %.1f ns/op (min %.1f)\n", argv[1], n, mx, v[v.size() / 2], v[0]);
}
