/**
 * @file chunk_stream_arena_fuzz.cpp
 * @brief libFuzzer target: decodes the input into operations on a chunk_stream_arena, applies the
 * same ones to the naive byte-per-unit model (tests/mr/detail/bitmap_stream_arena_model.hpp), and
 * aborts on any disagreement (addresses, released superblocks, free blocks, counters, owns()),
 * failed validate() or unexpected exception. Superblocks land anywhere in a range of 16 MiB to
 * 1.3 GiB (1, 4, 58 or 82 of the index's 16 MiB chunks: class trees of one group of 64 chunks
 * and of two): 2 MiB multiples, odd sizes at odd 256-byte offsets (several
 * starting in one chunk), the range's last chunk; runs of small blocks switch superblocks to their
 * tree and back; the cache size changes (as the resource changes it when streams come). Misuse
 * (double, partial, misaligned, foreign frees; overlapping or out-of-range superblocks) must throw
 * std::invalid_argument and change nothing.
 *
 * Input: byte 0 picks the cache size and the range; then each operation is an opcode byte and its
 * operands. A missing byte reads as zero, so every input is a valid program.
 */
#include "../tests/mr/detail/bitmap_stream_arena_model.hpp"
#include "stream_arena_fuzz.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::block_size;
using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;
namespace arena = rmm::mr::detail::arena;

constexpr std::size_t SB   = arena::superblock_size;
constexpr std::uintptr_t B = 0x10000000;  // the arena's range: [B, B + span)

class driver {
 public:
  driver(std::size_t cache, std::size_t span)
      : span_{span}, arena_{B, span, cache}, model_{cache} {}

  void step(reader& in) {
    switch (in.byte() % 10U) {
      case 0:
      case 1:
      case 2:
        allocate(in);
        break;
      case 3:
        allocate_run(in);
        break;
      case 4:
      case 5:
        free(in);
        break;
      case 6:
        add_from(in);
        break;
      case 7:
        release();
        break;
      case 8:
        query(in);
        break;
      default:
        misuse(in);
        break;
    }
    check();
  }

  void drain() {
    while (!live_.empty()) {
      free_block(live_.begin(), true);
    }
    release();
    check();
    FUZZ_CHECK(arena_.held_bytes() == 0 && arena_.num_superblocks() == 0);
    FUZZ_CHECK(arena_.num_tree_superblocks() == 0 && arena_.largest_free_block() == 0);
  }

 private:
  // An address in the range (or just past it), 256-aligned, or 2 MiB-aligned.
  std::uintptr_t where(reader& in) {
    std::size_t const v = in.u16() | (std::size_t{in.byte()} << 16U);
    return in.byte() % 2U == 0 ? B + SB * (v % (span_ / SB + 1)) : B + 256 * (v % (span_ / 256));
  }

  void allocate(reader& in) { static_cast<void>(allocate_n(block_size(in, 3 * SB), in.byte())); }

  // Many small blocks in a row, then every other one back: up to small_block_limit + 32 free
  // blocks apart in one superblock, past the limit, so that it switches to its tree (and back as
  // they go).
  void allocate_run(reader& in) {
    std::size_t const count =
        1 + in.u16() % (2 * (arena::chunk_stream_arena::small_block_limit + 32));
    std::size_t const n = 256 * (1 + in.byte() % 4U);
    std::vector<std::uintptr_t> run;
    for (std::size_t i = 0; i < count; ++i) {
      if (auto const p = allocate_n(n, 3); p) {
        run.push_back(*p);
      }
    }
    for (std::size_t i = 0; i < run.size(); i += 2) {
      free_block(live_.find(run[i]), true);
    }
  }

  std::optional<std::uintptr_t> allocate_n(std::size_t n, std::uint8_t retry) {
    auto p = arena_.allocate(n);
    FUZZ_CHECK(model_.allocate(n) == p);
    if (!p && retry % 2U == 1) {  // as the resource does on a miss: a superblock, retry
      std::size_t const size = *arena::global_arena::superblock_size_for(n);
      if (!place(retry % 4U == 1 ? n : size)) {
        return std::nullopt;
      }
      p = arena_.allocate(n);
      FUZZ_CHECK(p.has_value());
      FUZZ_CHECK(model_.allocate(n) == p);
    }
    if (p) {
      live_.emplace(*p, n);
    }
    return p;
  }

  // The lowest free place of `size` bytes in the range, after next_; false if there is none.
  bool place(std::size_t size) {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uintptr_t at = next_; at + size <= B + span_; at += SB) {
        if (!model_.overlaps(at, size)) {
          add(at, size);
          next_ = at + size;
          return true;
        }
      }
      next_ = B;  // wrap once
    }
    return false;
  }

  void add_from(reader& in) {
    std::uintptr_t const base = where(in);
    std::size_t const size =
        in.byte() % 2U == 0 ? SB * (1 + in.byte() % 4U) : block_size(in, 4 * SB);
    add(base, size);
  }

  void add(std::uintptr_t base, std::size_t size) {
    if (base + size > B + span_ || model_.overlaps(base, size)) {
      auto const before = rmm::test::snapshot_of(arena_);
      expect_invalid([&] { arena_.add_superblock(base, size); });
      FUZZ_CHECK(rmm::test::snapshot_of(arena_) == before);
      return;
    }
    arena_.add_superblock(base, size);
    model_.add_superblock(base, size);
  }

  void free(reader& in) {
    if (live_.empty()) {
      return;
    }
    auto const it = rmm::fuzz::pick(live_, in);
    free_block(it, in.byte() % 4U != 0);
  }

  void free_block(std::map<std::uintptr_t, std::size_t>::iterator it, bool allow_release) {
    auto const [p, n] = *it;
    live_.erase(it);
    FUZZ_CHECK(model_.can_deallocate(p, n));
    std::optional<arena::range> r;
    if ((p / 256U) % 2U == 0) {  // both frees, by the block's address: deterministic per input
      r = arena_.deallocate(p, n, allow_release);
    } else {
      auto const freed = arena_.deallocate_if_owned(p, n, allow_release);
      FUZZ_CHECK(freed.owned);
      r = freed.released;
    }
    FUZZ_CHECK(model_.deallocate(p, n, allow_release) == r);
  }

  void release() {
    FUZZ_CHECK(arena_.release_free_superblocks() == model_.release_free_superblocks());
  }

  void query(reader& in) {
    std::uintptr_t const a = where(in) + in.byte();
    FUZZ_CHECK(arena_.owns(a) == model_.owns(a));
    FUZZ_CHECK(!arena_.owns(B - 1) && !arena_.owns(B + span_));
    FUZZ_CHECK(!arena_.describe(4).empty());
    if (std::uint8_t const c = in.byte(); c % 4U == 0) {  // the resource changes it as streams come
      std::size_t const cache = rmm::fuzz::cache_size(c / 4U);
      arena_.set_cache_bytes(cache);
      model_.set_cache_bytes(cache);
      FUZZ_CHECK(arena_.cache_bytes() == cache);
    }
  }

  // A free near a live block or anywhere in the range, shifted and sized by the input; when the
  // model says it is invalid, the arena must reject it and change nothing.
  void misuse(reader& in) {
    auto const [p, n] = rmm::fuzz::misused_free(in, where(in), live_);
    if (model_.can_deallocate(p, n)) {
      return;
    }
    auto const before = rmm::test::snapshot_of(arena_);
    expect_invalid([&, p = p, n = n] { static_cast<void>(arena_.deallocate(p, n)); });
    FUZZ_CHECK(rmm::test::snapshot_of(arena_) == before);
    if (!model_.owns(p)) {  // outside every superblock: not owned, nothing done
      FUZZ_CHECK(!arena_.deallocate_if_owned(p, n).owned);
    } else {
      expect_invalid([&, p = p, n = n] { static_cast<void>(arena_.deallocate_if_owned(p, n)); });
    }
    FUZZ_CHECK(rmm::test::snapshot_of(arena_) == before);
  }

  void check() {
    rmm::fuzz::validated([&] { arena_.validate(); });
    auto const s = rmm::test::snapshot_of(arena_);
    FUZZ_CHECK(rmm::test::snapshot_of(model_) == s);
    FUZZ_CHECK(s.allocated == rmm::fuzz::live_bytes(live_));
    FUZZ_CHECK(arena_.largest_free_block_hint() == s.largest);
  }

  std::size_t span_;
  arena::chunk_stream_arena arena_;
  rmm::test::reference_stream_arena model_;
  rmm::fuzz::live_map live_;
  std::uintptr_t next_{B};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  std::uint8_t const head = in.byte();
  std::size_t const cache = rmm::fuzz::cache_size(head);
  // 16 MiB to 1.3 GiB: 1, 4, 58 or 82 of the index's 16 MiB chunks, so class trees of one group
  // of 64 chunks and of two, and chunks where many superblocks start.
  constexpr std::size_t spans[] = {8, 32, 464, 656};  // superblocks
  std::size_t const span        = SB * spans[(head >> 3U) % 4U] + 256 * ((head >> 5U) % 2U);
  rmm::fuzz::abort_on_exception([&] {
    driver d{cache, span};
    rmm::fuzz::run_steps(d, in, 1024);
    d.drain();
  });
  return 0;
}
