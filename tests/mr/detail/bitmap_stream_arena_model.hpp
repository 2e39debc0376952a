// Shared by bitmap_stream_arena_tests.cpp and fuzz/bitmap_stream_arena_fuzz.cpp: a naive model of
// a stream arena (one byte per 256-byte unit, every query by a plain scan) and a snapshot of an
// arena's observable state, to compare arenas with each other and with the model. No Catch2 here.
#pragma once

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace rmm::test {

/// Everything an arena shows through its const members.
struct arena_snapshot {
  std::vector<std::pair<std::uintptr_t, std::size_t>> free_blocks;
  std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>> superblocks;
  std::size_t allocated{};
  std::size_t held{};
  std::size_t free{};
  std::size_t largest{};
  std::size_t num_superblocks{};
  std::size_t num_free_superblocks{};
  std::size_t cached{};

  friend bool operator==(arena_snapshot const& a, arena_snapshot const& b) {
    return a.free_blocks == b.free_blocks && a.superblocks == b.superblocks &&
           a.allocated == b.allocated && a.held == b.held && a.free == b.free &&
           a.largest == b.largest && a.num_superblocks == b.num_superblocks &&
           a.num_free_superblocks == b.num_free_superblocks && a.cached == b.cached;
  }
  friend bool operator!=(arena_snapshot const& a, arena_snapshot const& b) { return !(a == b); }
};

template <typename Arena>
arena_snapshot snapshot_of(Arena const& a) {
  arena_snapshot s;
  s.free_blocks = a.free_blocks();
  a.for_each_superblock([&](std::uintptr_t b, std::size_t size, std::size_t allocated) {
    s.superblocks.emplace_back(b, size, allocated);
  });
  s.allocated            = a.allocated_bytes();
  s.held                 = a.held_bytes();
  s.free                 = a.free_bytes();
  s.largest              = a.largest_free_block();
  s.num_superblocks      = a.num_superblocks();
  s.num_free_superblocks = a.num_free_superblocks();
  s.cached               = a.cached_bytes();
  return s;
}

/// The documented behaviour of a stream arena, written as plainly as possible. Preconditions
/// (valid superblocks, valid frees) are the caller's: can_deallocate says whether a free is valid.
class reference_stream_arena {
 public:
  static constexpr std::size_t unit = rmm::mr::detail::arena::allocation_granularity;
  using range                       = rmm::mr::detail::arena::range;

  explicit reference_stream_arena(std::size_t cache_bytes) : cache_bytes_{cache_bytes} {}

  void set_cache_bytes(std::size_t bytes) { cache_bytes_ = bytes; }

  void add_superblock(std::uintptr_t base, std::size_t size) {
    sbs_.emplace(base, sb{size, 0, std::vector<std::uint8_t>(size / unit, 1)});
  }

  /// Lowest address, over the superblocks in address order, where bytes / unit free units start.
  std::optional<std::uintptr_t> allocate(std::size_t bytes) {
    std::size_t const n = bytes / unit;
    for (auto& [base, s] : sbs_) {
      for (auto run = s.free.begin(); run != s.free.end();) {  // each free run in order
        run      = find_unit(run, s.free.end(), 1);
        auto end = find_unit(run, s.free.end(), 0);
        if (end - run >= static_cast<std::ptrdiff_t>(n)) {
          std::fill_n(run, n, std::uint8_t{0});
          s.allocated += bytes;
          return base + static_cast<std::size_t>(run - s.free.begin()) * unit;
        }
        run = end;
      }
    }
    return std::nullopt;
  }

  [[nodiscard]] bool owns(std::uintptr_t p) const { return find(p) != sbs_.end(); }

  /// True if [base, base + size) shares a byte with a superblock held.
  [[nodiscard]] bool overlaps(std::uintptr_t base, std::size_t size) const {
    for (auto const& [b, s] : sbs_) {
      if (b < base + size && base < b + s.size) {
        return true;
      }
    }
    return false;
  }

  /// Valid: non-zero, aligned, inside one superblock, not above its allocated bytes, all live.
  [[nodiscard]] bool can_deallocate(std::uintptr_t p, std::size_t bytes) const {
    auto it = find(p);
    if (it == sbs_.end() || bytes == 0 || bytes % unit != 0 || p % unit != 0 ||
        bytes > it->second.allocated || p - it->first + bytes > it->second.size) {
      return false;
    }
    std::size_t const from = (p - it->first) / unit;
    for (std::size_t i = from; i < from + bytes / unit; ++i) {
      if (it->second.free[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /// Precondition: can_deallocate(p, bytes). Cache rule: a superblock that becomes entirely free
  /// goes back if allowed and if the entirely free ones held before would leave less room than
  /// its size in the cache.
  std::optional<range> deallocate(std::uintptr_t p, std::size_t bytes, bool allow_release) {
    std::size_t const cached_before = cached_bytes();
    auto it                         = find(p);
    std::size_t const from          = (p - it->first) / unit;
    std::fill_n(
        it->second.free.begin() + static_cast<std::ptrdiff_t>(from), bytes / unit, std::uint8_t{1});
    it->second.allocated -= bytes;
    if (it->second.allocated != 0 || !allow_release ||
        cached_before + it->second.size <= cache_bytes_) {
      return std::nullopt;
    }
    range const r{it->first, it->second.size};
    sbs_.erase(it);
    return r;
  }

  std::vector<range> release_free_superblocks() {
    std::vector<range> out;
    for (auto it = sbs_.begin(); it != sbs_.end();) {
      if (it->second.allocated == 0) {
        out.push_back(range{it->first, it->second.size});
        it = sbs_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> free_blocks() const {
    std::vector<std::pair<std::uintptr_t, std::size_t>> out;
    for (auto const& [base, s] : sbs_) {
      for (auto run = s.free.begin(); run != s.free.end();) {
        run      = find_unit(run, s.free.end(), 1);
        auto end = find_unit(run, s.free.end(), 0);
        if (run != end) {
          out.emplace_back(base + static_cast<std::size_t>(run - s.free.begin()) * unit,
                           static_cast<std::size_t>(end - run) * unit);
        }
        run = end;
      }
    }
    return out;
  }

  template <typename F>
  void for_each_superblock(F&& f) const {
    for (auto const& [base, s] : sbs_) {
      f(base, s.size, s.allocated);
    }
  }

  [[nodiscard]] std::size_t allocated_bytes() const {
    return sum([](sb const& s) { return s.allocated; });
  }
  [[nodiscard]] std::size_t held_bytes() const {
    return sum([](sb const& s) { return s.size; });
  }
  [[nodiscard]] std::size_t free_bytes() const { return held_bytes() - allocated_bytes(); }
  [[nodiscard]] std::size_t largest_free_block() const {
    std::size_t best = 0;
    for (auto const& b : free_blocks()) {
      best = std::max(best, b.second);
    }
    return best;
  }
  [[nodiscard]] std::size_t num_superblocks() const { return sbs_.size(); }
  [[nodiscard]] std::size_t num_free_superblocks() const {
    return sum([](sb const& s) -> std::size_t { return s.allocated == 0 ? 1 : 0; });
  }
  [[nodiscard]] std::size_t cached_bytes() const {
    return sum([](sb const& s) { return s.allocated == 0 ? s.size : 0; });
  }

 private:
  struct sb {
    std::size_t size;
    std::size_t allocated;
    std::vector<std::uint8_t> free;  // per unit, 1 = free
  };
  using map_t = std::map<std::uintptr_t, sb>;

  /// std::find for a unit byte, through memchr: the scans are most of the property tests' time,
  /// and std::find is unrolled but not vectorised (15 of the host suite's 18 s at -O2, minutes at
  /// -O0 and under the sanitizers), where glibc's memchr is vectorised in every build type.
  template <typename It>
  static It find_unit(It first, It last, std::uint8_t value) {
    if (first == last) {
      return last;
    }
    auto const* const begin = &*first;
    auto const* const hit   = static_cast<std::uint8_t const*>(
        std::memchr(begin, value, static_cast<std::size_t>(last - first)));
    return hit == nullptr ? last : first + (hit - begin);
  }

  [[nodiscard]] map_t::const_iterator find(std::uintptr_t p) const {
    for (auto it = sbs_.begin(); it != sbs_.end(); ++it) {
      if (p >= it->first && p - it->first < it->second.size) {
        return it;
      }
    }
    return sbs_.end();
  }
  map_t::iterator find(std::uintptr_t p) {
    auto const it = static_cast<reference_stream_arena const&>(*this).find(p);
    return sbs_.erase(it, it);  // the same position as a mutable iterator
  }

  template <typename F>
  [[nodiscard]] std::size_t sum(F f) const {
    std::size_t total = 0;
    for (auto const& [base, s] : sbs_) {
      total += f(s);
    }
    return total;
  }

  std::size_t cache_bytes_;
  map_t sbs_;
};

}  // namespace rmm::test
