// Host model of arena_state's single-stream allocate/deallocate over a trace.
// Mode REAL=1: uses rmm's global_arena + chunk_stream_arena (baseline check).
// Otherwise a simple map model with candidate changes (flags).
#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>
#include "/work/main/tools/replay/trace.hpp"
#include <cstdio>
#include <map>
#include <cstring>
using namespace rmm::mr::detail::arena;
using u = std::uintptr_t;
static const std::size_t MiB = 1 << 20, SB = superblock_size;
static const u BASE = u{1} << 40;

struct Opts {
  int real = 0;          // use the rmm headers
  double batch_k = 1;    // batch only if global largest >= batch_k * batch
  int best_fit = 0;      // best fit in the global arena
  int trim = 0;          // on OOM: 1 = release free 2 MiB-aligned tails; 2 = any free aligned 2 MiB chunks (split)
  int merge = 0;         // on OOM: merge address-adjacent stream superblocks
  int nobatch = 0;       // no batches at all
  int exact_on_oom = 0;  // after reclaim, retry with exact-size acquisition (no batch)
  int verbose = 0;
  int release_large = 0; // release a free superblock larger than the batch at once
  int cache0 = 0;        // release every entirely free superblock at once
  int exact_large = 0;   // requests >= batch: superblock of exactly the request (no 2 MiB round)
  int trim_free = 0;
  int hi_large = 0;      // global: superblocks for requests >= batch from the top (last fit, carved from the high end); 2 = best fit among ranges, high end
  int s_best = 0;        // stream arena: best fit over all its free blocks (NOT the documented first fit)
  double direct = 0;     // MiB: requests >= this go straight to the global arena (exact 256-rounded, returned on free), RMM-style
  int direct_round = 0;  // with direct: round those to 2 MiB
  double own = 0;        // MiB: requests >= own (instead of >= batch) take their own 2 MiB-rounded superblock
  int direct_try = 0;    // with direct: first try the stream arena's first fit
  double exact_min = 16; // exact_large applies to requests > exact_min MiB
  int pool = 0;          // reference: one coalescing free list, exact sizes (first or best fit)     // on every free: release free aligned 2 MiB chunks (mode like trim)
} O;

struct Global {  // address-ordered free list, coalescing
  std::map<u, std::size_t> f;
  std::size_t freeb = 0;
  void release(u b, std::size_t n) {
    freeb += n;
    auto it = f.lower_bound(b);
    if (it != f.end() && b + n == it->first) { n += it->second; it = f.erase(it); }
    if (it != f.begin()) { auto p = std::prev(it); if (p->first + p->second == b) { p->second += n; return; } }
    f[b] = n;
  }
  std::optional<u> take_high(std::size_t n) {
    auto best = f.end();
    for (auto it = f.end(); it != f.begin();) {
      --it;
      if (it->second < n) continue;
      if (O.hi_large == 1) { best = it; break; }
      if (best == f.end() || it->second < best->second) best = it;
    }
    if (best == f.end()) return std::nullopt;
    u b = best->first; std::size_t s = best->second;
    if (s > n) best->second = s - n; else f.erase(best);
    freeb -= n;
    return b + s - n;
  }
  bool high = false;
  std::optional<u> take(std::size_t n) {
    if (high) return take_high(n);
    auto best = f.end();
    for (auto it = f.begin(); it != f.end(); ++it) {
      if (it->second < n) continue;
      if (!O.best_fit) { best = it; break; }
      if (best == f.end() || it->second < best->second) best = it;
    }
    if (best == f.end()) return std::nullopt;
    u b = best->first; std::size_t s = best->second; f.erase(best);
    if (s > n) f[b + n] = s - n;
    freeb -= n;
    return b;
  }
  std::optional<std::pair<u, std::size_t>> acquire(std::size_t bytes) {
    std::size_t std_ = std::max(bytes, SB); std_ = (std_ + SB - 1) / SB * SB;
    if (O.exact_large && bytes > O.exact_min * MiB) std_ = bytes;
    if (auto b = take(std_)) return std::make_pair(*b, std_);
    if (auto b = take(bytes)) return std::make_pair(*b, bytes);
    return std::nullopt;
  }
  std::size_t largest() const { std::size_t m = 0; for (auto& [b, s] : f) m = std::max(m, s); return m; }
};

struct SBk { std::size_t size, alloc; std::map<u, std::size_t> f; };
struct Stream {
  std::map<u, SBk> sbs;
  std::size_t alloc_b = 0, held = 0;
  void add(u b, std::size_t n) { sbs[b] = SBk{n, 0, {{b, n}}}; held += n; }
  std::optional<u> allocate(std::size_t n) {
    if (O.s_best) {
      SBk* br = nullptr; std::map<u, std::size_t>::iterator bi;
      for (auto& [sb, r] : sbs) for (auto it = r.f.begin(); it != r.f.end(); ++it) if (it->second >= n && (!br || it->second < bi->second)) { br = &r; bi = it; }
      if (!br) return std::nullopt;
      u p = bi->first; std::size_t s = bi->second; br->f.erase(bi);
      if (s > n) br->f[p + n] = s - n;
      br->alloc += n; alloc_b += n; return p;
    }
    for (auto& [sb, r] : sbs)
      for (auto it = r.f.begin(); it != r.f.end(); ++it)
        if (it->second >= n) {
          u p = it->first; std::size_t s = it->second; r.f.erase(it);
          if (s > n) r.f[p + n] = s - n;
          r.alloc += n; alloc_b += n; return p;
        }
    return std::nullopt;
  }
  void deallocate(u p, std::size_t n) {
    auto si = std::prev(sbs.upper_bound(p)); auto& r = si->second;
    r.alloc -= n; alloc_b -= n;
    auto it = r.f.lower_bound(p);
    if (it != r.f.end() && p + n == it->first) { n += it->second; it = r.f.erase(it); }
    if (it != r.f.begin()) { auto q = std::prev(it); if (q->first + q->second == p) { q->second += n; return; } }
    r.f[p] = n;
  }
  template <class G> void release_free(G& g) {
    for (auto it = sbs.begin(); it != sbs.end();)
      if (it->second.alloc == 0) { g.release(it->first, it->second.size); held -= it->second.size; it = sbs.erase(it); }
      else ++it;
  }
  // release free 2 MiB-aligned chunks: mode 1 only at the tail, mode 2 anywhere (splits superblocks)
  template <class G> void trim(G& g, int mode) {
    std::map<u, SBk> out;
    for (auto& [b, r] : sbs) {
      u end = b + r.size;
      if (r.alloc == 0) { g.release(b, r.size); held -= r.size; continue; }
      // pieces to cut: aligned free ranges (relative to BASE) of >= SB
      std::vector<std::pair<u, u>> cuts;
      for (auto& [fb, fs] : r.f) {
        u lo = (fb - BASE + SB - 1) / SB * SB + BASE, hi = (fb + fs - BASE) / SB * SB + BASE;
        if (fb + fs == end) hi = end;  // tail: cut to the end (an exact-size tail stays exact)
        if (hi <= lo || hi - lo < SB) continue;
        if (mode == 1 && fb + fs != end) continue;
        cuts.push_back({lo, hi});
      }
      u cur = b;
      auto emit = [&](u s, u e) {  // keep [s,e) as a superblock with its free blocks
        if (e <= s) return;
        SBk nr{e - s, 0, {}};
        for (auto& [fb, fs] : r.f) { u x = std::max<u>(fb, s), y = std::min<u>(fb + fs, e); if (x < y) nr.f[x] = y - x; }
        std::size_t fr = 0; for (auto& [x, y] : nr.f) fr += y; nr.alloc = nr.size - fr;
        if (nr.alloc == 0) { g.release(s, e - s); held -= e - s; return; }
        out[s] = std::move(nr);
      };
      for (auto [lo, hi] : cuts) { emit(cur, lo); g.release(lo, hi - lo); held -= hi - lo; cur = hi; }
      emit(cur, end);
    }
    sbs = std::move(out);
  }
  void merge() {  // merge address-adjacent superblocks
    for (auto it = sbs.begin(); it != sbs.end();) {
      auto nx = std::next(it);
      if (nx != sbs.end() && it->first + it->second.size == nx->first) {
        auto& a = it->second; auto& b = nx->second;
        a.size += b.size; a.alloc += b.alloc;
        for (auto& [fb, fs] : b.f) a.f[fb] = fs;
        // coalesce across the old edge
        u edge = nx->first;
        sbs.erase(nx);
        auto e = a.f.find(edge);
        if (e != a.f.end() && e != a.f.begin()) { auto q = std::prev(e); if (q->first + q->second == edge) { q->second += e->second; a.f.erase(e); } }
      } else it = nx;
    }
  }
  std::size_t free_b() const { return held - alloc_b; }
  std::size_t largest() const { std::size_t m = 0; for (auto& [b, r] : sbs) for (auto& [x, y] : r.f) m = std::max(m, y); return m; }
};

struct Fail { std::size_t req, arena; std::size_t live_raw, live_rounded, s_held, s_free, s_largest, g_free, g_largest, n_sb; size_t event; };

struct tlsf_global {
  rmm::mr::detail::tlsf_free_list f{256};
  tlsf_global(std::uintptr_t base, std::size_t size) { f.insert_region(base, size); }
  struct grant { std::uintptr_t base; std::size_t size; };
  std::optional<grant> acquire(std::size_t n) {
    if (auto s = rmm::mr::detail::arena::global_arena::superblock_size_for(n)) if (auto p = f.allocate(*s)) return grant{*p, *s};
    if (auto p = f.allocate(n)) return grant{*p, n};
    return std::nullopt;
  }
  std::optional<grant> acquire_exact(std::size_t n) { if (auto p = f.allocate(n)) return grant{*p, n}; return std::nullopt; }
  void release(std::uintptr_t b, std::size_t s, rmm::mr::detail::arena::ticket) { f.deallocate(b, s); }
  std::size_t largest_free_block() const { return f.largest_free_block(); }
  std::size_t free_bytes() const { return f.free_bytes(); }
};
template <class G> struct is_real_g : std::is_same<G, global_arena> {};
template <> struct is_real_g<tlsf_global> : std::true_type {};
template <class G, class S>
struct Model {
  std::size_t size, batch; G g; S s; std::size_t live_raw = 0; std::map<u, std::size_t> direct_;
  Model(std::size_t sz, G gg, S ss) : size(sz), g(std::move(gg)), s(std::move(ss)) {
    std::size_t keep_floor = std::max(default_cache_bytes, size / 64);
    batch = std::max(SB, std::min(8 * SB, keep_floor / SB * SB));
  }
  std::size_t glargest() { if constexpr (is_real_g<G>::value) return g.largest_free_block(); else return g.largest(); }
  bool try_alloc(std::size_t n, u& p, bool allow_batch) {
    if (auto q = s.allocate(n)) { p = *q; return true; }
    std::optional<std::pair<u, std::size_t>> gr;
    if (allow_batch && !O.nobatch && n < (O.own > 0 ? std::min<std::size_t>(O.own * MiB, batch) : batch) && glargest() >= O.batch_k * batch) {
      if constexpr (is_real_g<G>::value) { if (auto x = g.acquire(batch)) gr = std::make_pair(x->base, x->size); }
      else gr = g.acquire(batch);
    }
    if (!gr) {
      if constexpr (is_real_g<G>::value) { if (auto x = g.acquire(n)) gr = std::make_pair(x->base, x->size); }
      else { g.high = O.hi_large && n >= batch; gr = g.acquire(n); g.high = false; }
    }
    if (!gr) return false;
    if constexpr (std::is_same_v<S, chunk_stream_arena>) s.add_superblock(gr->first, gr->second); else s.add(gr->first, gr->second);
    p = *s.allocate(n); return true;
  }
  void release_free() {
    if constexpr (std::is_same_v<S, chunk_stream_arena>) { for (auto r : s.release_free_superblocks()) g.release(r.base, r.size, no_ticket); }
    else s.release_free(g);
  }
  bool alloc(std::size_t n, u& p) {
    if (n > size) return false;
    if constexpr (std::is_same_v<S, chunk_stream_arena>) if (O.direct > 0 && n >= O.direct * MiB) {
      if (auto q = s.allocate(n)) { p = *q; return true; }
      auto q = g.acquire_exact(n); if (!q) { release_free(); q = g.acquire_exact(n); } if (!q) return false; p = q->base; direct_[p] = n; return true; }
    if constexpr (!std::is_same_v<S, chunk_stream_arena>) if (O.direct > 0 && n >= O.direct * MiB) {
      std::size_t m = O.direct_round ? (n + SB - 1) / SB * SB : n;
      if (O.direct_try) { if (auto q = s.allocate(n)) { p = *q; return true; } }
      auto q = g.take(m); if (!q) { release_free(); q = g.take(m); } if (!q) return false; p = *q; direct_[p] = m; return true; }
    if constexpr (!std::is_same_v<S, chunk_stream_arena>) if (O.pool) { auto q = g.take(n); if (!q) return false; p = *q; return true; }
    if (try_alloc(n, p, true)) return true;
    release_free();
    if (try_alloc(n, p, true)) return true;
    if constexpr (!std::is_same_v<S, chunk_stream_arena>) {
      if (O.trim) s.trim(g, O.trim);
      if (O.merge) s.merge();
    }
    release_free();
    return try_alloc(n, p, !O.exact_on_oom);
  }
};

std::size_t rup(std::size_t n) { return (n + 255) / 256 * 256; }

template <class M>
bool replay(const rmm::replay::trace& t, M& m, Fail* f, std::vector<u>* addrs) {
  std::vector<u> ptr(t.slot_size.size());
  std::size_t live_r = 0;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    auto& e = t.events[i];
    if (e.alloc) {
      u p;
      if (!m.alloc(rup(e.size), p)) {
        if (f) {
          *f = Fail{e.size, m.size, m.live_raw, live_r, 0, 0, 0, 0, 0, 0, i};
          if constexpr (std::is_same_v<decltype(m.s), chunk_stream_arena>) {
            f->s_held = m.s.held_bytes(); f->s_free = m.s.free_bytes(); f->s_largest = m.s.largest_free_block(); f->n_sb = m.s.num_superblocks();
            f->g_free = m.g.free_bytes(); f->g_largest = m.g.largest_free_block();
          } else {
            f->s_held = m.s.held; f->s_free = m.s.free_b(); f->s_largest = m.s.largest(); f->n_sb = m.s.sbs.size();
            f->g_free = m.g.freeb; f->g_largest = m.g.largest();
            if (O.verbose) {
              std::size_t fb_batch = 0, fb_large = 0, tails = 0, nb = 0, nl = 0, small_in_large = 0;
              for (auto& [b, r] : m.s.sbs) {
                std::size_t fr = r.size - r.alloc; bool batch = r.size == m.batch;
                (batch ? fb_batch : fb_large) += fr; (batch ? nb : nl)++;
                auto last = r.f.empty() ? r.f.end() : std::prev(r.f.end());
                if (last != r.f.end() && last->first + last->second == b + r.size && last->second < SB) tails += last->second;
                std::printf("  sb %#zx size %7.2f alloc %7.2f free %6.2f blocks %zu largest %6.2f\n", (size_t)(b - BASE), r.size / double(MiB), r.alloc / double(MiB), fr / double(MiB), r.f.size(),
                            [&] { std::size_t x = 0; for (auto& [p, q] : r.f) x = std::max(x, q); return x; }() / double(MiB));
              }
              std::printf("  stream free in %zu batch superblocks %.1f MiB, in %zu other superblocks %.1f MiB; free tails < 2 MiB at superblock ends %.1f MiB\n", nb, fb_batch / double(MiB), nl, fb_large / double(MiB), tails / double(MiB));
              for (auto& [b, sz] : m.g.f) std::printf("  global free %#zx %.2f MiB\n", (size_t)(b - BASE), sz / double(MiB));
            }
          }
        }
        return false;
      }
      ptr[e.slot] = p; m.live_raw += e.size; live_r += rup(e.size);
      if (addrs) addrs->push_back(p);
    } else {
      if constexpr (std::is_same_v<decltype(m.s), chunk_stream_arena>) { if (auto d = m.direct_.find(ptr[e.slot]); d != m.direct_.end()) { m.g.release(d->first, d->second, no_ticket); m.direct_.erase(d); } else m.s.deallocate(ptr[e.slot], rup(e.size)); }
      else if (O.pool) m.g.release(ptr[e.slot], rup(e.size));
      else if (auto d = m.direct_.find(ptr[e.slot]); d != m.direct_.end()) { m.g.release(d->first, d->second); m.direct_.erase(d); }
      else {
        m.s.deallocate(ptr[e.slot], rup(e.size));
        if (O.cache0 || O.release_large) {
          auto si = std::prev(m.s.sbs.upper_bound(ptr[e.slot]));
          if (si->second.alloc == 0 && (O.cache0 || (O.release_large == 2 ? si->second.size != m.batch : si->second.size > m.batch))) { m.g.release(si->first, si->second.size); m.s.held -= si->second.size; m.s.sbs.erase(si); }
        }
        if (O.trim_free) m.s.trim(m.g, O.trim_free);
      }
      m.live_raw -= e.size; live_r -= rup(e.size);
    }
  }
  return true;
}

bool fits(const rmm::replay::trace& t, std::size_t cap, Fail* f, std::vector<u>* addrs = nullptr) {
  std::size_t size = cap / 256 * 256;
  if (O.real) {
    if (O.real == 2) {
      Model<tlsf_global, chunk_stream_arena> m(size, tlsf_global(BASE, size), chunk_stream_arena(BASE, size, size));
      return replay(t, m, f, addrs);
    }
    Model<global_arena, chunk_stream_arena> m(size, global_arena(BASE, size), chunk_stream_arena(BASE, size, size));
    return replay(t, m, f, addrs);
  }
  Global g; g.release(BASE, size);
  Model<Global, Stream> m(size, std::move(g), Stream{});
  return replay(t, m, f, addrs);
}

int main(int argc, char** argv) {
  auto t = rmm::replay::load_trace(argv[1]);
  for (int i = 2; i < argc; ++i) {
    char k[64]; double v;
    if (sscanf(argv[i], "%63[^=]=%lf", k, &v) != 2) continue;
    std::string s = k;
    if (s == "real") O.real = v; else if (s == "batch_k") O.batch_k = v; else if (s == "best_fit") O.best_fit = v;
    else if (s == "trim") O.trim = v; else if (s == "merge") O.merge = v; else if (s == "nobatch") O.nobatch = v;
    else if (s == "release_large") O.release_large = v; else if (s == "cache0") O.cache0 = v; else if (s == "exact_large") O.exact_large = v; else if (s == "trim_free") O.trim_free = v;
    else if (s == "pool") O.pool = v; else if (s == "hi_large") O.hi_large = v; else if (s == "s_best") O.s_best = v; else if (s == "direct") O.direct = v; else if (s == "own") O.own = v; else if (s == "direct_try") O.direct_try = v; else if (s == "exact_min") O.exact_min = v; else if (s == "direct_round") O.direct_round = v;
    else if (s == "scan") {  // linear scan of capacities: which pass
      std::size_t lo = (t.peak_live + 2 * MiB - 1) / (2 * MiB) * 2 * MiB; int first = 0;
      for (std::size_t c = lo; c <= std::size_t(v) * MiB; c += 2 * MiB) { bool ok = fits(t, c, nullptr); if (ok && !first) { std::printf("scan: smallest passing %zu MiB (eff %.4f); ", c / MiB, t.peak_live / double(c)); first = 1; } if (first) std::printf("%c", ok ? '+' : '-'); }
      std::printf("\n"); return 0;
    }
    else if (s == "exact_on_oom") O.exact_on_oom = v; else if (s == "verbose") O.verbose = v;
    else if (s == "check") {  // compare addresses of real vs model at a capacity
      std::vector<u> a, b; O.real = 1; bool x = fits(t, std::size_t(v) * MiB, nullptr, &a); O.real = 0; bool y = fits(t, std::size_t(v) * MiB, nullptr, &b);
      std::printf("check %g MiB: real %d (%zu allocs) model %d (%zu allocs) same=%d\n", v, x, a.size(), y, b.size(), a == b);
      return 0;
    }
  }
  std::size_t gran = 2 * MiB, peak = t.peak_live;
  std::size_t lo = (peak + gran - 1) / gran * gran, hi = (4 * peak + gran - 1) / gran * gran;
  std::size_t cap = 0;
  if (fits(t, lo, nullptr)) cap = lo;
  else {
    while (hi - lo > gran) { std::size_t mid = lo + (hi - lo) / gran / 2 * gran; (fits(t, mid, nullptr) ? hi : lo) = mid; }
    cap = hi;
  }
  // also: linear check for non-monotonicity around cap
  Fail f{};
  bool below = cap > gran && !fits(t, cap - gran, &f);
  std::printf("peak %.1f MiB  events %zu  bisected capacity %zu MiB  efficiency %.4f\n", peak / double(MiB), t.events.size(), cap / MiB, peak / double(cap));
  if (below)
    std::printf("  fail at %zu MiB: event %zu request %.2f MiB; live raw %.1f rounded %.1f MiB; stream held %.1f free %.1f largest %.2f MiB (%zu superblocks); global free %.1f largest %.2f MiB; batch %zu MiB\n",
                f.arena / MiB, f.event, f.req / double(MiB), f.live_raw / double(MiB), f.live_rounded / double(MiB), f.s_held / double(MiB), f.s_free / double(MiB),
                f.s_largest / double(MiB), f.n_sb, f.g_free / double(MiB), f.g_largest / double(MiB), std::size_t(16));
}
