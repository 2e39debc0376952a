// Scratch: is a free-block index filed by 2 MiB cell (no per-superblock arrays) cheaper than
// chunk_stream_arena on the random_allocations workload's small rows? Both structures replay the
// same operation sequence (rb::random_workload's generator, sizes rounded to 256 bytes, 16 MiB
// superblocks added at aligned addresses when a request does not fit, nothing ever released);
// every address is compared. Only the structure is timed (no resource, no lock).
//   ./proto <chunk|cell|null> n max_mib reps      (null: the replay loop alone)
//   ./proto check n max_mib 1                     (both structures return the same addresses)
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {
constexpr std::uintptr_t B  = std::uintptr_t{1} << 40U;
constexpr std::size_t RANGE = std::size_t{40448} << 20U;
constexpr std::size_t SBSZ  = std::size_t{16} << 20U;

struct op {
  bool alloc;
  std::size_t bytes;
  std::size_t victim;  // index into the live list (free)
};

// The benchmark's generator, statement for statement (no failures: the structures grow).
std::vector<op> make_ops(std::size_t num, std::size_t max_mib) {
  std::default_random_engine gen;
  std::size_t const max_usage = std::size_t{16000} << 20U;
  std::uniform_int_distribution<int> opd(0, 99);
  std::uniform_int_distribution<std::size_t> idx(0, num - 1);
  std::uniform_int_distribution<std::size_t> sz(1, max_mib << 20U);
  std::vector<op> ops;
  std::size_t active = 0, count = 0, bytes = 0;
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < num * 2; ++i) {
    bool do_alloc = true;
    auto size     = sz(gen);
    if (active > 0) {
      int c    = opd(gen);
      do_alloc = c < 73 && count < num && bytes + size < max_usage;
    }
    if (do_alloc) {
      ops.push_back({true, (size + 255) / 256 * 256, 0});
      live.push_back(size);
      ++active; ++count; bytes += size;
    } else if (active > 0) {
      std::size_t k = idx(gen) % active;
      --active;
      bytes -= live[k];
      ops.push_back({false, 0, k});
      if (live.size() > 1 && k < live.size() - 1) std::swap(live[k], live.back());
      live.pop_back();
    }
  }
  return ops;
}

// ---- the prototype: free blocks filed by the 2 MiB cell where they start -------------------
class cell_arena {
 public:
  static constexpr unsigned cell_shift = 21;
  static constexpr std::size_t fan     = 8;
  struct blk { std::uintptr_t base; std::size_t size; };

  cell_arena() {
    std::size_t const cells = RANGE >> cell_shift;
    cells_.resize(cells);
    cmax_.assign(cells, 0);
    groups_.assign(cells / 8 + 1, 0);
    std::size_t n = cells;
    do { n = (n + fan - 1) / fan * fan; levels_.emplace_back(n, 0); n /= fan; } while (n > fan);
    levels_.emplace_back(n, 0);
  }
  void add_superblock(std::uintptr_t base, std::size_t size) {  // 16 MiB aligned, 16 MiB
    std::size_t const c = cell(base);
    cells_[c].insert(cells_[c].begin(), blk{base, size});
    mark(c);
    update(c);
  }
  std::uintptr_t allocate(std::size_t bytes) {  // 0: none fits
    std::size_t const c = first_fitting(bytes);
    if (c == npos) return 0;
    auto& v = cells_[c];
    auto it = v.begin();
    while (it->size < bytes) ++it;
    std::uintptr_t const p = it->base;
    if (it->size == bytes) {
      v.erase(it);
      if (v.empty()) unmark(c);
      update(c);
      return p;
    }
    blk const r{p + bytes, it->size - bytes};
    std::size_t const cr = cell(r.base);
    if (cr == c) {
      *it = r;
      update(c);
      return p;
    }
    v.erase(it);
    if (v.empty()) unmark(c);
    update(c);
    cells_[cr].insert(cells_[cr].begin(), r);  // the lowest block of its cell
    mark(cr);
    update(cr);
    return p;
  }
  void deallocate(std::uintptr_t p, std::size_t bytes) {
    std::size_t const c = cell(p);
    auto& v             = cells_[c];
    std::size_t i       = 0;
    while (i < v.size() && v[i].base < p) ++i;  // few blocks per cell
    std::size_t const g0 = c & ~std::size_t{7};  // the 16 MiB superblock's 8 cells
    // previous free block: v[i-1], or the last block of the nearest non-empty cell below c in g0
    std::size_t pc = c;
    blk* prev      = nullptr;
    if (i > 0) { prev = &v[i - 1]; }
    else if (unsigned m = groups_[c >> 3U] & ((1U << (c & 7U)) - 1U); m != 0) {
      pc = g0 + (31 - static_cast<std::size_t>(__builtin_clz(m)));
      prev = &cells_[pc].back();
    }
    std::size_t nc = c;
    std::size_t ni = i;
    blk* next      = nullptr;
    if (i < v.size()) { next = &v[i]; }
    else if (unsigned m = groups_[c >> 3U] & ~((2U << (c & 7U)) - 1U) & 0xFFU; m != 0) {
      nc = g0 + static_cast<std::size_t>(__builtin_ctz(m));
      ni = 0;
      next = &cells_[nc].front();
    }
    bool const jp = prev != nullptr && prev->base + prev->size == p;
    bool const jn = next != nullptr && next->base == p + bytes;
    if (jp && jn) {
      prev->size += bytes + next->size;
      cells_[nc].erase(cells_[nc].begin() + static_cast<std::ptrdiff_t>(ni));
      if (cells_[nc].empty()) unmark(nc);
      update(pc);
      if (nc != pc) update(nc);
    } else if (jp) {
      prev->size += bytes;
      update(pc);
    } else if (jn) {
      std::size_t const s = next->size + bytes;
      if (nc == c) { next->base = p; next->size = s; }
      else {
        cells_[nc].erase(cells_[nc].begin());
        if (cells_[nc].empty()) unmark(nc);
        update(nc);
        v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), blk{p, s});
        mark(c);
      }
      update(c);
    } else {
      v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), blk{p, bytes});
      mark(c);
      update(c);
    }
  }

 private:
  static constexpr std::size_t npos = ~std::size_t{0};
  static std::size_t cell(std::uintptr_t a) { return (a - B) >> cell_shift; }
  void mark(std::size_t c) { groups_[c >> 3U] |= 1U << (c & 7U); }
  void unmark(std::size_t c) { groups_[c >> 3U] &= ~(1U << (c & 7U)); }
  void update(std::size_t c) {  // the cell's maximum, then the tree (as refresh_leaf)
    std::size_t v = 0;
    for (auto const& b : cells_[c]) v = std::max(v, b.size);
    std::size_t old = levels_[0][c];
    if (old == v) return;
    levels_[0][c] = v;
    for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
      std::size_t const g = c / fan;
      std::size_t& up     = levels_[l + 1][g];
      std::size_t const uo = up;
      std::size_t m        = v;
      if (v < uo) {
        if (old < uo) return;
        std::size_t const* q = &levels_[l][g * fan];
        m = *std::max_element(q, q + fan);
      }
      if (m == uo) return;
      up = m; old = uo; v = m; c = g;
    }
  }
  std::size_t first_fitting(std::size_t bytes) const {
    auto const& top = levels_.back();
    std::size_t i   = 0;
    while (i < top.size() && top[i] < bytes) ++i;
    if (i == top.size()) return npos;
    for (std::size_t l = levels_.size() - 1; l-- > 0;) {
      std::size_t const* q = &levels_[l][i * fan];
      std::size_t j        = 0;
      while (q[j] < bytes) ++j;
      i = i * fan + j;
    }
    return i;
  }
  std::vector<std::vector<blk>> cells_;
  std::vector<std::size_t> cmax_;
  std::vector<unsigned> groups_;  // per 8 cells: which are non-empty
  std::vector<std::vector<std::size_t>> levels_;
};

// The harness alone: a bump pointer, frees ignored (the cost of the replay loop and its list).
struct null_driver {
  std::uintptr_t next = B;
  void add_superblock(std::uintptr_t, std::size_t) {}
  std::uintptr_t allocate(std::size_t n) { std::uintptr_t p = next; next += n; return p; }
  void deallocate(std::uintptr_t, std::size_t) {}
};

struct chunk_driver {
  rmm::mr::detail::arena::chunk_stream_arena a{B, RANGE, RANGE};
  void add_superblock(std::uintptr_t b, std::size_t s) { a.add_superblock(b, s); }
  std::uintptr_t allocate(std::size_t n) { auto p = a.allocate(n); return p ? *p : 0; }
  void deallocate(std::uintptr_t p, std::size_t n) { (void)a.deallocate(p, n); }
};

template <class S>
double run(S& s, std::vector<op> const& ops, std::uintptr_t& next_sb, std::vector<std::uintptr_t>* out) {
  std::vector<std::pair<std::uintptr_t, std::size_t>> live;
  live.reserve(ops.size());
  auto const t0 = std::chrono::steady_clock::now();
  for (auto const& o : ops) {
    if (o.alloc) {
      std::uintptr_t p = s.allocate(o.bytes);
      if (p == 0) { s.add_superblock(next_sb, SBSZ); next_sb += SBSZ; p = s.allocate(o.bytes); }
      if (out) out->push_back(p);
      live.emplace_back(p, o.bytes);
    } else {
      auto const v = live[o.victim];
      if (live.size() > 1 && o.victim < live.size() - 1) std::swap(live[o.victim], live.back());
      live.pop_back();
      s.deallocate(v.first, v.second);
    }
  }
  double const e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto const& [p, n] : live) s.deallocate(p, n);
  return e * 1e9 / static_cast<double>(ops.size());
}
}  // namespace

int main(int argc, char** argv) {
  std::string const mode = argv[1];
  std::size_t const n = std::strtoul(argv[2], nullptr, 10), mx = std::strtoul(argv[3], nullptr, 10);
  int const reps = std::atoi(argv[4]);
  auto const ops = make_ops(n, mx);
  if (mode == "check") {
    chunk_driver c; cell_arena x; std::uintptr_t nc = B, nx = B;
    std::vector<std::uintptr_t> ac, ax;
    for (int r = 0; r < 3; ++r) { run(c, ops, nc, &ac); run(x, ops, nx, &ax); }
    std::printf("addresses %s (%zu), superblocks %zu / %zu\n", ac == ax ? "equal" : "DIFFER", ac.size(),
                (nc - B) / SBSZ, (nx - B) / SBSZ);
    c.a.validate();
    return ac == ax ? 0 : 1;
  }
  std::vector<double> v;
  std::uintptr_t next = B;
  if (mode == "chunk") { chunk_driver s; for (int r = 0; r <= reps; ++r) v.push_back(run(s, ops, next, nullptr)); }
  else if (mode == "null") { null_driver s; for (int r = 0; r <= reps; ++r) v.push_back(run(s, ops, next, nullptr)); }
  else { cell_arena s; for (int r = 0; r <= reps; ++r) v.push_back(run(s, ops, next, nullptr)); }
  v.erase(v.begin());
  std::sort(v.begin(), v.end());
  std::printf("%s n=%zu max=%zu median %.1f ns/op\n", mode.c_str(), n, mx, v[v.size() / 2]);
}
