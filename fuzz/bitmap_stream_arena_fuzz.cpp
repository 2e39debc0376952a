/**
 * @file bitmap_stream_arena_fuzz.cpp
 * @brief libFuzzer target: decodes the input into operations on a bitmap_stream_arena, applies
 * the same ones to a chunk_stream_arena (over [B, B + 64 GiB), which holds every superblock the
 * input adds) and to a naive byte-per-unit model
 * (tests/mr/detail/bitmap_stream_arena_model.hpp), and aborts on any disagreement (addresses,
 * released superblocks, free blocks, counters), failed validate() or unexpected exception. Misuse
 * (double, partial, misaligned, foreign frees; overlapping superblocks) must throw
 * std::invalid_argument from both arenas and change nothing.
 *
 * Input: byte 0 picks the cache size; then each operation is an opcode byte and its operands. A
 * missing byte reads as zero, so every input is a valid program.
 */
#include "../tests/mr/detail/bitmap_stream_arena_model.hpp"
#include "stream_arena_fuzz.hpp"

#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/bitmap_stream_arena.hpp>
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

constexpr std::size_t SB     = arena::superblock_size;
constexpr std::uintptr_t B   = 0x10000000;  // superblocks the input places: [B, B + 272 MiB)
constexpr std::uintptr_t far = B + (std::size_t{1} << 30U);  // superblocks added on a miss
constexpr std::size_t span   = std::size_t{64} << 30U;  // the chunk arena's range: [B, B + span)

class driver {
 public:
  explicit driver(std::size_t cache) : bm_{cache}, list_{B, span, cache}, model_{cache} {}

  void step(reader& in) {
    switch (in.byte() % 8U) {
      case 0:
      case 1:
      case 2:
        allocate(in);
        break;
      case 3:
      case 4:
        free(in);
        break;
      case 5:
        add(B + 4096 * in.u16(), block_size(in, 8 * SB));
        break;
      case 6:
        release();
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
    FUZZ_CHECK(bm_.held_bytes() == 0 && bm_.num_superblocks() == 0);
  }

 private:
  void allocate(reader& in) {
    std::size_t const n = block_size(in, 3 * SB);
    auto p              = bm_.allocate(n);
    FUZZ_CHECK(list_.allocate(n) == p);
    FUZZ_CHECK(model_.allocate(n) == p);
    std::size_t const size = *arena::global_arena::superblock_size_for(n);
    // As the resource does on a miss: a superblock, retry; while the superblocks added on misses
    // (each at a fresh place past `far`) still fit the chunk arena's range.
    if (!p && in.byte() % 2U == 0 && far_next_ + size + 256 <= B + span) {
      add(far_next_, in.byte() % 4U == 0 ? n : size);
      far_next_ += size + 256 * (in.byte() % 2U);
      p = bm_.allocate(n);
      FUZZ_CHECK(p.has_value());
      FUZZ_CHECK(list_.allocate(n) == p);
      FUZZ_CHECK(model_.allocate(n) == p);
    }
    if (p) {
      live_.emplace(*p, n);
    }
  }

  void add(std::uintptr_t base, std::size_t size) {
    if (model_.overlaps(base, size)) {
      auto const before = rmm::test::snapshot_of(bm_);
      expect_invalid([&] { bm_.add_superblock(base, size); });
      expect_invalid([&] { list_.add_superblock(base, size); });
      FUZZ_CHECK(rmm::test::snapshot_of(bm_) == before);
      return;
    }
    bm_.add_superblock(base, size);
    list_.add_superblock(base, size);
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
    auto const r = bm_.deallocate(p, n, allow_release);
    FUZZ_CHECK(list_.deallocate(p, n, allow_release) == r);
    FUZZ_CHECK(model_.deallocate(p, n, allow_release) == r);
  }

  void release() {
    auto const out = bm_.release_free_superblocks();
    FUZZ_CHECK(list_.release_free_superblocks() == out);
    FUZZ_CHECK(model_.release_free_superblocks() == out);
  }

  // A free near a live block or a superblock, shifted and sized by the input; when the model
  // says it is invalid, both arenas must reject it and change nothing.
  void misuse(reader& in) {
    auto const [p, n] = rmm::fuzz::misused_free(in, B + 4096 * in.u16(), live_);
    if (model_.can_deallocate(p, n)) {
      return;
    }
    auto const before = rmm::test::snapshot_of(bm_);
    expect_invalid([&, p = p, n = n] { static_cast<void>(bm_.deallocate(p, n)); });
    expect_invalid([&, p = p, n = n] { static_cast<void>(list_.deallocate(p, n)); });
    FUZZ_CHECK(rmm::test::snapshot_of(bm_) == before);
  }

  void check() {
    rmm::fuzz::validated([&] {
      bm_.validate();
      list_.validate();
    });
    auto const s = rmm::test::snapshot_of(bm_);
    FUZZ_CHECK(rmm::test::snapshot_of(list_) == s);
    FUZZ_CHECK(rmm::test::snapshot_of(model_) == s);
    FUZZ_CHECK(s.allocated == rmm::fuzz::live_bytes(live_));
  }

  arena::bitmap_stream_arena bm_;
  arena::chunk_stream_arena list_;
  rmm::test::reference_stream_arena model_;
  rmm::fuzz::live_map live_;
  std::uintptr_t far_next_{far};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  std::uint8_t const head = in.byte();
  std::size_t const cache = rmm::fuzz::cache_size(head);
  rmm::fuzz::abort_on_exception([&] {
    driver d{cache};
    rmm::fuzz::run_steps(d, in, 1024);
    d.drain();
  });
  return 0;
}
