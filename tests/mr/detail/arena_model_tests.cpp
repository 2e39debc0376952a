/**
 * @file arena_model_tests.cpp
 * @brief Randomised operation sequences over several stream arenas (chunk_stream_arena) and one
 * global_arena, as arena_memory_resource uses them, checked step by step against a naive
 * reference model (fixed seeds). The edge cases and misuse errors are in arena_tests.cpp.
 */
#include "arena_ticket_model.hpp"
#include "chunk_stream_arena_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

namespace arena = rmm::mr::detail::arena;
using arena::global_arena;
using stream_arena = rmm::test::test_stream_arena;  // chunk_stream_arena over a fake range

constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = 0x7f0000000000;  // fake arena base

using tickets = std::vector<arena::ticket>;

}  // namespace

namespace {

// Reference model and driver: several stream arenas over one global arena, as the CUDA layer
// uses them. The model tracks live blocks, the superblocks each arena holds, and the releases
// whose tickets are still outstanding (a naive list, subtracted on every grant).
class simulation {
 public:
  simulation(std::size_t arena_size, std::size_t streams, std::uint32_t seed)
      : size_{arena_size}, g_{B, arena_size}, rng_{seed} {
    for (std::size_t i = 0; i < streams; ++i) {
      arenas_.emplace_back((1 + i % 3) * SB);  // various cache sizes
      held_.emplace_back();
    }
  }

  void step() {
    auto const op = pick(100);
    if (op < 50) {
      allocate();
    } else if (op < 90) {
      free(op < 85);
    } else if (op < 95) {
      reclaim();
    } else if (op < 97) {
      reclaim_all();
    } else {
      misuse();
    }
    check();
  }

  void drain() {
    while (!live_.empty()) {
      free_block(live_.begin());
    }
    reclaim_all();
    check();
    REQUIRE(g_.free_bytes() == size_);
    REQUIRE(g_.free_ranges().size() == 1);
  }

  [[nodiscard]] std::size_t grants() const { return grants_; }
  [[nodiscard]] std::size_t failures() const { return failures_; }
  [[nodiscard]] std::size_t large_grants() const { return large_grants_; }
  [[nodiscard]] std::size_t kept_large() const { return kept_large_; }
  [[nodiscard]] std::size_t untracked_grants() const { return untracked_grants_; }

 private:
  struct live_block {
    std::size_t size;
    std::size_t arena;
    bool large;  // taken exactly from the global arena (acquire_exact), held by no stream arena
  };

  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>{0, n - 1}(rng_);
  }

  std::size_t request_size() {
    switch (pick(4)) {
      case 0:
        return 256 * (1 + pick(16));
      case 1:
        return 256 * (1 + pick(SB / 256));
      case 2:
        return 256 * (1 + pick(4 * SB / 256));
      default:
        return 256 * (1 + pick(size_ / 256 / 4));
    }
  }

  // Lowest free block of arena `a` that fits, by a scan of its free blocks.
  std::optional<std::uintptr_t> model_first_fit(std::size_t a, std::size_t n) const {
    for (auto const& [b, s] : arenas_[a].free_blocks()) {
      if (s >= n) {
        return b;
      }
    }
    return std::nullopt;
  }

  void allocate() {
    std::size_t const a = pick(arenas_.size());
    std::size_t const n = request_size();
    auto expected       = model_first_fit(a, n);
    auto p              = arenas_[a].allocate(n);
    REQUIRE(p == expected);
    bool const large = !p && n >= arena::large_request_min;
    if (!p) {
      // As the resource does: a large request takes exactly its size, a small one a superblock;
      // on a miss, reclaim (event-ordered) and retry; then fail.
      auto take = [&]() -> std::optional<arena::superblock_grant> {
        auto const free = g_.free_ranges();
        auto grant      = large ? acquire_large(n) : g_.acquire(n);
        // Taken from the front of a free range that holds it; none only if no range does.
        bool const fits =
            std::any_of(free.begin(), free.end(), [&](auto const& r) { return r.second >= n; });
        REQUIRE(grant.has_value() == fits);
        if (grant) {
          REQUIRE(std::any_of(free.begin(), free.end(), [&](auto const& r) {
            return r.first == grant->base && r.second >= grant->size;
          }));
        }
        return grant;
      };
      auto grant = take();
      if (!grant) {
        reclaim();
        grant = take();
      }
      if (!grant) {
        REQUIRE(g_.largest_free_block() < n);
        ++failures_;
        return;
      }
      ++grants_;
      REQUIRE(grant->size >= n);
      REQUIRE(grant->tickets == outstanding_.take(grant->base, grant->size));
      REQUIRE(g_.large_size_at(grant->base) == (large ? n : 0));
      if (large) {
        REQUIRE(grant->size == n);
        ++large_grants_;
        p = grant->base;
      } else {
        arenas_[a].add_superblock(grant->base, grant->size);
        held_[a].emplace(grant->base, grant->size);
        p = arenas_[a].allocate(n);
        REQUIRE(p);
      }
    }
    // No overlap with any live block.
    auto next = live_.lower_bound(*p);
    REQUIRE((next == live_.end() || next->first >= *p + n));
    REQUIRE((next == live_.begin() || std::prev(next)->first + std::prev(next)->second.size <= *p));
    if (!large) {  // inside a superblock of its arena
      auto sb = held_[a].upper_bound(*p);
      REQUIRE(sb != held_[a].begin());
      --sb;
      REQUIRE(*p + n <= sb->first + sb->second);
    }
    live_.emplace(*p, live_block{n, a, large});
  }

  void free(bool own_stream) {
    if (live_.empty()) {
      return;
    }
    auto it = std::next(live_.begin(), static_cast<std::ptrdiff_t>(pick(live_.size())));
    if (own_stream) {
      free_block(it);
      return;
    }
    auto const [p, blk] = *it;
    if (blk.large) {  // a large block goes back at once under the freeing stream's ticket
      live_.erase(it);
      release_large(p, blk.size, pick(arenas_.size()));
      return;
    }
    // Cross-stream free: goes to the owner, which must not release (allow_release = false).
    live_.erase(it);
    REQUIRE_FALSE(arenas_[blk.arena].deallocate(p, blk.size, false));
  }

  void free_block(std::map<std::uintptr_t, live_block>::iterator it) {
    auto const [p, blk] = *it;
    live_.erase(it);
    if (blk.large) {
      release_large(p, blk.size, blk.arena);
    } else if (auto r = arenas_[blk.arena].deallocate(p, blk.size); r) {
      give_back(blk.arena, *r);
    }
  }

  // As the resource takes a large block: with one arena, acquire_exact_untracked (the base alone;
  // every ticket it drops is that arena's own), else acquire_exact.
  std::optional<arena::superblock_grant> acquire_large(std::size_t n) {
    if (arenas_.size() > 1) {
      return g_.acquire_exact(n);
    }
    auto const taken = rmm::test::take_untracked(g_, outstanding_, n);
    REQUIRE(taken.tickets_ok);
    if (!taken.base) {
      return std::nullopt;
    }
    ++untracked_grants_;
    return arena::superblock_grant{*taken.base, n, {}};
  }

  void release_large(std::uintptr_t p, std::size_t n, std::size_t freeing_arena) {
    auto const t = static_cast<arena::ticket>(freeing_arena + 1);
    REQUIRE(g_.large_size_at(p) == n);
    if (arenas_.size() == 1) {
      // As the resource frees one while alone: at once, no ticket, one lookup.
      REQUIRE(g_.release_large(p, n + 256) == n);  // a wrong size first: refused, reported
      REQUIRE(g_.release_large(p, n) == n);
      REQUIRE(g_.large_size_at(p) == 0);
      return;
    }
    auto& a = arenas_[freeing_arena];
    if (a.keeps(n)) {
      // As the resource does with several arenas: the freeing arena keeps it as a free superblock.
      g_.keep_large(p);
      REQUIRE(g_.large_size_at(p) == 0);
      a.add_superblock(p, n);
      held_[freeing_arena].emplace(p, n);
      ++kept_large_;
      return;
    }
    g_.release(p, n, t);
    REQUIRE(g_.large_size_at(p) == 0);
    outstanding_.release(arena::range{p, n}, t);
  }

  void give_back(std::size_t a, arena::range r) {
    REQUIRE(held_[a].count(r.base) == 1);
    REQUIRE(held_[a][r.base] == r.size);
    held_[a].erase(r.base);
    auto const t = static_cast<arena::ticket>(a + 1);
    g_.release(r.base, r.size, t);
    outstanding_.release(r, t);
  }

  void reclaim() {
    for (std::size_t a = 0; a < arenas_.size(); ++a) {
      for (auto const& r : arenas_[a].release_free_superblocks()) {
        give_back(a, r);
      }
    }
  }

  void reclaim_all() {
    for (std::size_t a = 0; a < arenas_.size(); ++a) {
      for (auto const& r : arenas_[a].release_free_superblocks()) {
        REQUIRE(held_[a].erase(r.base) == 1);
        g_.release(r.base, r.size, arena::no_ticket);
      }
    }
    g_.clear_tickets();
    outstanding_.clear();
  }

  void misuse() {
    if (live_.empty()) {
      return;
    }
    auto const& [p, blk] = *live_.begin();
    // Freeing in the wrong arena, or twice: rejected, nothing changes.
    std::size_t const other = (blk.arena + 1) % arenas_.size();
    if (!arenas_[other].owns(p)) {
      REQUIRE_THROWS_AS(arenas_[other].deallocate(p, blk.size), std::invalid_argument);
    }
    // Returning memory that is already free in the global arena: rejected.
    if (auto const free = g_.free_ranges(); !free.empty()) {
      REQUIRE_THROWS_AS(g_.release(free.front().first, 256, 1), std::invalid_argument);
    }
  }

  void check() {
    g_.validate();
    std::size_t in_arenas = 0;
    std::size_t allocated = 0;
    for (std::size_t a = 0; a < arenas_.size(); ++a) {
      arenas_[a].validate();
      REQUIRE(arenas_[a].held_bytes() == rmm::test::sum_of_sizes(held_[a]));
      REQUIRE(arenas_[a].num_superblocks() == held_[a].size());
      in_arenas += arenas_[a].free_bytes();
      allocated += arenas_[a].allocated_bytes();
    }
    auto const [live, large] = rmm::test::live_bytes(live_);
    REQUIRE(allocated == live);
    // Every byte of the arena: free in the global arena, free in a stream arena, or live.
    REQUIRE(g_.free_bytes() + in_arenas + live + large == size_);
  }

  std::size_t size_;
  global_arena g_;
  std::vector<stream_arena> arenas_;
  std::vector<std::map<std::uintptr_t, std::size_t>> held_;  // per arena: superblocks
  std::map<std::uintptr_t, live_block> live_;
  rmm::test::arena_ticket_model outstanding_;  // releases no grant has taken yet
  std::mt19937_64 rng_;
  std::size_t grants_{};
  std::size_t failures_{};
  std::size_t large_grants_{};
  std::size_t kept_large_{};        // large blocks kept by the freeing arena
  std::size_t untracked_grants_{};  // large blocks taken while alone (acquire_exact_untracked)
};

}  // namespace

TEST_CASE("arena: randomised operations over several stream arenas match the model", "[arena]") {
  std::size_t kept      = 0;
  std::size_t untracked = 0;
  for (std::uint32_t seed : {1U, 2U, 3U, 5U, 42U, 2024U, 2025U}) {  // 5 and 2025: one arena
    INFO("seed " << seed);
    std::size_t const streams = 1 + seed % 5;
    simulation sim{32 * SB + 768, streams, seed};
    for (int i = 0; i < 3000; ++i) {
      sim.step();
    }
    CHECK(sim.grants() > 0);
    CHECK(sim.failures() > 0);  // the arena is small: exhaustion paths run too
    CHECK(sim.large_grants() > 0);
    kept += sim.kept_large();
    untracked += sim.untracked_grants();
    sim.drain();
  }
  CHECK(kept > 0);       // large blocks kept by their freeing arena, then reused or returned
  CHECK(untracked > 0);  // and taken and freed by the one-arena paths
}
