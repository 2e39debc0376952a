/**
 * @file arena_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of operations on the host
 * bookkeeping of arena_memory_resource (one global_arena, several chunk_stream_arenas, driven as
 * the CUDA layer drives them), checks each step against a naive reference model, and aborts on any
 * disagreement, failed validate() or unexpected exception.
 *
 * Input: byte 0 picks the arena size and the number of streams; then each operation is an opcode
 * byte and its operands. A missing byte reads as zero, so every input is a valid program.
 */
#include "../tests/mr/detail/arena_ticket_model.hpp"
#include "stream_arena_fuzz.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;
namespace arena = rmm::mr::detail::arena;

constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = 0x10000000;

class driver {
 public:
  driver(std::size_t size, std::size_t streams) : size_{size}, g_{B, size} {
    for (std::size_t i = 0; i < streams; ++i) {
      arenas_.emplace_back(B, size, (i % 3) * SB + (i % 2) * 256);  // various cache sizes
      held_.emplace_back();
    }
  }

  void step(reader& in) {
    switch (in.byte() % 8U) {
      case 0:
      case 1:
      case 2:
        allocate(in);
        break;
      case 3:
      case 4:
        free(in, true);
        break;
      case 5:
        free(in, false);
        break;
      case 6:
        reclaim(in.byte() % 2U == 0);
        break;
      default:
        misuse(in);
        break;
    }
    check();
  }

  void drain() {
    while (!live_.empty()) {
      free_block(live_.begin());
    }
    reclaim(false);
    check();
    FUZZ_CHECK(g_.free_bytes() == size_);
    FUZZ_CHECK(g_.num_free_ranges() == 1);
  }

 private:
  struct live_block {
    std::size_t size;
    std::size_t arena;
    bool large;  // taken exactly from the global arena (acquire_exact), in no stream arena
  };

  void allocate(reader& in) {
    std::size_t const a = in.byte() % arenas_.size();
    // Mostly small sizes, sometimes several superblocks.
    std::size_t const n = rmm::fuzz::block_size(in, 3 * SB);
    std::optional<std::uintptr_t> expected;
    for (auto const& [b, s] : arenas_[a].free_blocks()) {
      if (s >= n) {
        expected = b;
        break;
      }
    }
    auto p = arenas_[a].allocate(n);
    FUZZ_CHECK(p == expected);
    if (!p && n >= arena::large_request_min) {  // as the resource does: exactly, good fit
      auto const free = g_.free_ranges();
      auto grant      = acquire_large(n);
      FUZZ_CHECK(grant.has_value() == std::any_of(free.begin(), free.end(), [&](auto const& r) {
                   return r.second >= n;
                 }));
      FUZZ_CHECK(!grant || std::any_of(free.begin(), free.end(), [&](auto const& r) {
        return r.first == grant->base && r.second >= n;
      }));
      if (grant) {
        FUZZ_CHECK(grant->size == n);
        FUZZ_CHECK(g_.large_size_at(grant->base) == n);
        FUZZ_CHECK(grant->tickets == outstanding_.take(grant->base, grant->size));
        auto next = live_.lower_bound(grant->base);
        FUZZ_CHECK(next == live_.end() || next->first >= grant->base + n);
        FUZZ_CHECK(next == live_.begin() ||
                   std::prev(next)->first + std::prev(next)->second.size <= grant->base);
        live_.emplace(grant->base, live_block{n, a, true});
      }
      return;
    }
    if (!p) {
      auto grant = g_.acquire(n);
      if (!grant) {
        FUZZ_CHECK(g_.largest_free_block() < n);
        return;
      }
      FUZZ_CHECK(grant->size >= n && grant->size % 256 == 0);
      FUZZ_CHECK(grant->tickets == outstanding_.take(grant->base, grant->size));
      arenas_[a].add_superblock(grant->base, grant->size);
      held_[a].emplace(grant->base, grant->size);
      p = arenas_[a].allocate(n);
      FUZZ_CHECK(p.has_value() && *p == grant->base);
    }
    auto next = live_.lower_bound(*p);
    FUZZ_CHECK(next == live_.end() || next->first >= *p + n);
    FUZZ_CHECK(next == live_.begin() ||
               std::prev(next)->first + std::prev(next)->second.size <= *p);
    auto sb = held_[a].upper_bound(*p);
    FUZZ_CHECK(sb != held_[a].begin());
    --sb;
    FUZZ_CHECK(*p + n <= sb->first + sb->second);
    live_.emplace(*p, live_block{n, a, false});
  }

  void free(reader& in, bool own_stream) {
    if (live_.empty()) {
      return;
    }
    auto const it = rmm::fuzz::pick(live_, in);
    if (own_stream) {
      free_block(it);
      return;
    }
    auto const [p, blk] = *it;
    live_.erase(it);
    if (blk.large) {  // kept by the freeing stream's arena, or back under its ticket
      release_large(p, blk.size, static_cast<arena::ticket>(1 + in.byte() % arenas_.size()));
      return;
    }
    FUZZ_CHECK(!arenas_[blk.arena].deallocate(p, blk.size, false));
  }

  // As the resource takes a large block: with one arena, its base alone (every ticket dropped is
  // that arena's own), else a grant with tickets.
  std::optional<arena::superblock_grant> acquire_large(std::size_t n) {
    if (arenas_.size() > 1) {
      return g_.acquire_exact(n);
    }
    auto const taken = rmm::test::take_untracked(g_, outstanding_, n);
    FUZZ_CHECK(taken.tickets_ok);
    if (!taken.base) {
      return std::nullopt;
    }
    return arena::superblock_grant{*taken.base, n, {}};
  }

  void release_large(std::uintptr_t p, std::size_t n, arena::ticket t) {
    FUZZ_CHECK(g_.large_size_at(p) == n);
    if (arenas_.size() == 1) {  // as the resource frees one while alone: one lookup, no ticket
      FUZZ_CHECK(g_.release_large(p, n + 256) == n);  // a wrong size: refused, reported
      FUZZ_CHECK(g_.release_large(p, n) == n);
      FUZZ_CHECK(g_.large_size_at(p) == 0);
      FUZZ_CHECK(g_.release_large(p, n) == 0);
      return;
    }
    std::size_t const a = t - 1U;
    if (arenas_[a].keeps(n)) {
      // As the resource does with several arenas: the freeing arena keeps it, entirely free.
      g_.keep_large(p);
      FUZZ_CHECK(g_.large_size_at(p) == 0);
      arenas_[a].add_superblock(p, n);
      held_[a].emplace(p, n);
      return;
    }
    g_.release(p, n, t);
    FUZZ_CHECK(g_.large_size_at(p) == 0);
    outstanding_.release(arena::range{p, n}, t);
  }

  void free_block(std::map<std::uintptr_t, live_block>::iterator it) {
    auto const [p, blk] = *it;
    live_.erase(it);
    if (blk.large) {
      release_large(p, blk.size, static_cast<arena::ticket>(blk.arena + 1));
    } else if (auto r = arenas_[blk.arena].deallocate(p, blk.size); r) {
      give_back(blk.arena, *r, static_cast<arena::ticket>(blk.arena + 1));
    }
  }

  void give_back(std::size_t a, arena::range r, arena::ticket t) {
    auto const it = held_[a].find(r.base);
    FUZZ_CHECK(it != held_[a].end() && it->second == r.size);
    held_[a].erase(it);
    g_.release(r.base, r.size, t);
    if (t != arena::no_ticket) {
      outstanding_.release(r, t);
    }
  }

  void reclaim(bool with_tickets) {
    for (std::size_t a = 0; a < arenas_.size(); ++a) {
      for (auto const& r : arenas_[a].release_free_superblocks()) {
        give_back(a, r, with_tickets ? static_cast<arena::ticket>(a + 1) : arena::no_ticket);
      }
    }
    if (!with_tickets) {
      g_.clear_tickets();
      outstanding_.clear();
    }
  }

  void misuse(reader& in) {
    std::size_t const which = in.byte() % 3U;
    if (which == 0 && !live_.empty()) {
      auto const [p, blk]     = *live_.begin();
      std::size_t const other = (blk.arena + 1) % arenas_.size();
      if (!arenas_[other].owns(p)) {
        expect_invalid(
            [&, p = p, n = blk.size] { static_cast<void>(arenas_[other].deallocate(p, n)); });
      }
    } else if (which == 1) {
      auto const free = g_.free_ranges();
      if (!free.empty()) {
        expect_invalid([&] { g_.release(free.front().first, 256, 1); });
      }
    } else {
      expect_invalid([&] { static_cast<void>(g_.acquire(1 + in.byte() % 255U)); });
      expect_invalid([&] { static_cast<void>(g_.acquire_exact(SB + 1 + in.byte() % 255U)); });
    }
  }

  void check() {
    rmm::fuzz::validated([&] {
      g_.validate();
      for (auto const& a : arenas_) {
        a.validate();
      }
    });
    std::size_t in_arenas = 0;
    std::size_t allocated = 0;
    for (std::size_t a = 0; a < arenas_.size(); ++a) {
      FUZZ_CHECK(arenas_[a].held_bytes() == rmm::test::sum_of_sizes(held_[a]));
      in_arenas += arenas_[a].free_bytes();
      allocated += arenas_[a].allocated_bytes();
    }
    auto const [live, large] = rmm::test::live_bytes(live_);
    FUZZ_CHECK(allocated == live);
    FUZZ_CHECK(g_.large_bytes() == large);
    FUZZ_CHECK(g_.free_bytes() + in_arenas + live + large == size_);
  }

  std::size_t size_;
  arena::global_arena g_;
  std::vector<arena::chunk_stream_arena> arenas_;
  std::vector<std::map<std::uintptr_t, std::size_t>> held_;
  std::map<std::uintptr_t, live_block> live_;
  rmm::test::arena_ticket_model outstanding_;  // releases no grant has taken yet
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  std::uint8_t const head   = in.byte();
  std::size_t const superbs = 1 + (head & 0x0FU);           // 1..16 superblocks
  std::size_t const tail    = 256 * ((head >> 4U) & 0x3U);  // and a short tail
  std::size_t const streams = 1 + ((head >> 6U) & 0x3U);    // 1..4 stream arenas
  rmm::fuzz::abort_on_exception([&] {
    driver d{superbs * SB + tail, streams};
    rmm::fuzz::run_steps(d, in, 2048);
    d.drain();
  });
  return 0;
}
