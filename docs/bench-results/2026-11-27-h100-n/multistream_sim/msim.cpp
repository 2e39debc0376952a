// Host model of arena_memory_resource over a trace replayed on k streams, to measure what the keep
// rule for freed large blocks (arena.md, "Large requests") costs in memory. It drives the real
// global_arena and chunk_stream_arena as arena_state does (batches, shares, large blocks, the
// out-of-memory path: the stream's own free superblocks, then everyone's), with no CUDA.
// Two schedules (below, `schedule`). The table gives the smallest arena (a
// multiple of 2 MiB) that replays the trace with no failure, scanning up from the peak.
//
//   g++ -O2 -std=c++17 -I<repo>/include -I<repo>/tools/replay msim.cpp -o msim
//   ./msim ../../../../../shared/traces/resnet50_train.csv
#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <trace.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

namespace arena = rmm::mr::detail::arena;
using u         = std::uintptr_t;

namespace {

constexpr u base          = u{1} << 40U;
constexpr std::size_t MiB = std::size_t{1} << 20U;
constexpr std::size_t SB  = arena::superblock_size;

struct model {
  model(std::size_t size, std::size_t k, int keep) : g{base, size}, keep_large{keep} {
    std::size_t const floor = std::max(arena::default_cache_bytes, size / 64);
    batch                   = std::max(SB, std::min(8 * SB, floor / SB * SB));
    share                   = std::max(floor, size / k);
    for (std::size_t i = 0; i < k; ++i) {
      s.emplace_back(base, size, share);
      l.emplace_back(base, size, share);
    }
    cache.resize(k);
    cached.resize(k);
  }

  std::optional<u> try_allocate(std::size_t a, std::size_t n) {
    if (auto p = s[a].allocate(n)) {
      return p;
    }
    std::optional<arena::superblock_grant> grant;
    bool const large = n >= arena::large_request_min;
    if (large && (keep_large == 4 ||
                  keep_large == 7)) {  // the smallest cached block in [n, n + n / 8], whole
      auto& c   = cache[a];
      auto best = c.end();
      for (auto it = c.begin(); it != c.end(); ++it) {
        if (it->size >= n && it->size - n <= (keep_large == 7 ? 0 : n / 8) &&
            (best == c.end() || it->size < best->size)) {
          best = it;
        }
      }
      if (best != c.end()) {
        u const p = best->base;
        held[p]   = best->size;
        cached[a] -= best->size;
        c.erase(best);
        return p;
      }
    }
    if (large && keep_large == 2) {
      if (auto p = l[a].allocate(n)) {
        return p;
      }
    }
    if (large) {
      grant = g.acquire_exact(n);
    } else if (n < batch) {
      grant = g.acquire(batch);
    }
    if (!grant && !large) {
      grant = g.acquire(n);
    }
    if (!grant) {
      return std::nullopt;
    }
    if (large) {
      held[grant->base] = grant->size;
      return grant->base;
    }
    s[a].add_superblock(grant->base, grant->size);
    return s[a].allocate(n);
  }

  void drop_cache(std::size_t a) {
    for (auto const& r : cache[a]) {
      g.release(r.base, r.size, arena::no_ticket);
    }
    cache[a].clear();
    cached[a] = 0;
  }

  void give_back(std::vector<arena::range> const& ranges) {
    for (auto const& r : ranges) {
      g.release(r.base, r.size, arena::no_ticket);
    }
  }

  std::optional<u> allocate(std::size_t a, std::size_t n) {
    if (auto p = try_allocate(a, n)) {
      return p;
    }
    give_back(s[a].release_free_superblocks());  // step 1 (and the legacy stream's: none here)
    give_back(l[a].release_free_superblocks());
    drop_cache(a);
    if (auto p = try_allocate(a, n)) {
      return p;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {  // step 2: every arena, after a device sync
      give_back(s[i].release_free_superblocks());
      give_back(l[i].release_free_superblocks());
      drop_cache(i);
    }
    ++reclaims;
    if (auto p = try_allocate(a, n)) {
      return p;
    }
    if (keep_large == 3) {  // after the synchronisation every free block may serve any stream
      for (std::size_t b = 0; b < s.size(); ++b) {
        for (auto* x : {&s[b], &l[b]}) {
          if (auto p = x->allocate(n)) {
            borrowed[*p] = x;
            ++borrows;
            return p;
          }
        }
      }
    }
    return std::nullopt;
  }

  void deallocate(std::size_t a, u p, std::size_t n) {
    if (auto it = borrowed.find(p); it != borrowed.end()) {  // back to its owner, kept there
      static_cast<void>(it->second->deallocate(p, n, false));
      borrowed.erase(it);
      return;
    }
    if (s[a].owns(p)) {
      if (auto r = s[a].deallocate(p, n)) {
        g.release(r->base, r->size, arena::no_ticket);
      }
      return;
    }
    if (l[a].owns(p)) {  // keep_large == 2: the stream's large blocks, within the share
      l[a].set_cache_bytes(share - std::min(share, s[a].cached_bytes()));
      if (auto r = l[a].deallocate(p, n)) {
        g.release(r->base, r->size, arena::no_ticket);
      }
      return;
    }
    std::size_t const m = held.at(p);  // the block's size (mode 4 hands out whole blocks)
    held.erase(p);
    if (keep_large == 8) {  // pending, not reusable; back to the global arena 8 at a time
      cache[a].push_back(arena::range{p, m});
      if (s.size() == 1 || cache[a].size() >= 8) {
        drop_cache(a);
      }
      return;
    }
    if (keep_large == 4 || keep_large == 7) {
      if (s.size() > 1 && s[a].cached_bytes() + cached[a] + m <= share) {
        cache[a].push_back(arena::range{p, m});
        cached[a] += m;
        ++kept;
        return;
      }
      g.release(p, m, arena::no_ticket);
      return;
    }
    bool const room       = s[a].cached_bytes() + l[a].cached_bytes() + n <= share;
    std::size_t const cap = keep_large == 5 ? share / 4 : keep_large == 6 ? share / 16 : share;
    if (s.size() > 1 && keep_large != 0 && room && s[a].cached_bytes() + n <= cap) {
      g.keep_large(p);
      (keep_large == 2 ? l[a] : s[a]).add_superblock(p, n);
      ++kept;
      return;
    }
    g.release(p, n, arena::no_ticket);
  }

  arena::global_arena g;
  std::vector<arena::chunk_stream_arena> s;
  std::vector<arena::chunk_stream_arena>
      l;  // keep_large == 2: kept large blocks, for large requests
  std::size_t batch{};
  std::size_t share{};
  // 0: large blocks go back at once; 1: kept as superblocks (the resource); 2: kept apart, for
  // large requests only; 3: as 1, and the last resort takes a free block of any arena; 4: a
  // per-stream cache of whole large blocks, reused whole by a request at most 1/8 smaller; 5, 6:
  // as 1 while the stream's free superblocks stay within 1/4 (1/16) of its share; 7: as 4, reused
  // only by a request of the same size; 8: not kept, returned to the global arena 8 at a time.
  int keep_large;
  std::map<u, arena::chunk_stream_arena*> borrowed;  // keep_large == 3: blocks of other arenas
  std::size_t borrows{};
  std::map<u, std::size_t> held;                 // large blocks handed out -> their size
  std::vector<std::vector<arena::range>> cache;  // keep_large == 4: whole blocks per stream
  std::vector<std::size_t> cached;
  std::size_t reclaims{};
  std::size_t kept{};
};

struct outcome {
  bool ok;
  std::size_t reclaims;
  std::size_t kept;
};

// One event on stream a: allocation `slot` of copy `c`.
struct step {
  std::uint32_t slot;
  std::uint32_t a;
  std::uint32_t c;
  bool alloc;
  std::size_t size;
};

// split: allocation i of the one trace on stream i % k. copies: k copies of the trace, copy j on
// stream j, their events interleaved one by one (k requests of one model served at once).
std::vector<step> schedule(rmm::replay::trace const& t, std::size_t k, bool copies) {
  std::vector<step> out;
  if (!copies) {
    for (auto const& e : t.events) {
      out.push_back({e.slot, static_cast<std::uint32_t>(e.slot % k), 0, e.alloc, e.size});
    }
    return out;
  }
  for (auto const& e : t.events) {
    for (std::uint32_t j = 0; j < k; ++j) {
      out.push_back({e.slot, j, j, e.alloc, e.size});
    }
  }
  return out;
}

std::size_t peak_of(std::vector<step> const& steps) {
  std::size_t live = 0, peak = 0;
  for (auto const& e : steps) {
    live = e.alloc ? live + e.size : live - e.size;
    peak = std::max(peak, live);
  }
  return peak;
}

outcome replay(std::vector<step> const& steps,
               std::size_t slots,
               std::size_t copies,
               std::size_t size,
               std::size_t k,
               int keep) {
  model m{size, k, keep};
  std::vector<u> ptr(slots * copies);
  for (auto const& e : steps) {
    std::size_t const n = (e.size + 255) / 256 * 256;
    std::size_t const i = e.c * slots + e.slot;
    if (e.alloc) {
      auto p = m.allocate(e.a, n);
      if (!p) {
        return {false, m.reclaims, m.kept};
      }
      ptr[i] = *p;
    } else {
      m.deallocate(e.a, ptr[i], n);
    }
  }
  return {true, m.reclaims, m.kept};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: msim trace.csv\n");
    return 2;
  }
  std::ifstream in{argv[1]};
  auto const t = rmm::replay::parse_trace(in, argv[1]);
  std::printf(
      "trace: peak live %.1f MiB, %zu events\n", double(t.peak_live) / MiB, t.events.size());
  char const* const names[] = {"off",
                               "on",
                               "apart",
                               "on + borrow",
                               "whole blocks",
                               "on, 1/4 share",
                               "on, 1/16 share",
                               "whole, same size",
                               "batched returns"};
  for (bool copies : {false, true}) {
    std::printf("\n%s\n\n",
                copies ? "k copies of the trace, copy j on stream j, events interleaved"
                       : "one trace, allocation i on stream i % k");
    std::printf(
        "| streams | keep rule | peak live (MiB) | smallest arena (MiB) | peak / arena "
        "| out-of-memory reclaims | large blocks kept |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (std::size_t k : {1, 2, 4, 8, 16}) {
      auto const steps        = schedule(t, k, copies);
      std::size_t const peak  = peak_of(steps);
      std::size_t const ncopy = copies ? k : 1;
      for (int keep : {0, 1, 2, 3, 4, 7, 5, 6, 8}) {
        if (k == 1 && keep != 0) {
          continue;  // one arena: a large block goes back at once either way
        }
        auto ok = [&](std::size_t sbs) {
          return replay(steps, t.slot_size.size(), ncopy, sbs * SB, k, keep);
        };
        // Success is not monotonic in the size (placement changes with it), so bisection's
        // answer depends on its start: scan up from the peak in 2 MiB steps instead.
        std::size_t hi = peak / SB;
        while (!ok(hi).ok) {
          ++hi;
        }
        auto const r = ok(hi);
        std::printf("| %zu | %s | %zu | %zu | %.3f | %zu | %zu |\n",
                    k,
                    names[keep],
                    peak / MiB,
                    hi * SB / MiB,
                    double(peak) / double(hi * SB),
                    r.reclaims,
                    r.kept);
        std::fflush(stdout);
      }
    }
  }
}
