/**
 * @file tlsf_free_list_model_tests.cpp
 * @brief Randomised operation sequences on rmm::mr::detail::tlsf_free_list (allocate, deallocate,
 * retag, retag_block, retag_after, extend_region, shrink_region, misuse, take_free_regions, and
 * the members behind holes: allocate_range, join_allocated, free_neighbours,
 * region_allocated_blocks),
 * checked after every step against a naive reference model (tlsf_free_list_reference_model.hpp)
 * and validate().
 */
#include "free_list_test_helpers.hpp"
#include "tlsf_free_list_reference_model.hpp"
#include "tlsf_free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace rmm::test::tlsf;  // NOLINT(google-build-using-namespace)
using rmm::test::hex;
using rmm::test::require_invalid_argument;

void check_agrees(tlsf_free_list const& list, reference_model const& model) {
  REQUIRE_NOTHROW(list.validate());
  REQUIRE(blocks_of(list) == model.blocks());
  REQUIRE(list.free_bytes() == model.bytes(true));
  REQUIRE(list.allocated_bytes() == model.bytes(false));
  REQUIRE(list.total_bytes() == list.free_bytes() + list.allocated_bytes());
  REQUIRE(list.largest_free_block() == model.largest());
  for (tag_t t = 0; t < 4; ++t) {
    REQUIRE(list.largest_free_block(t) == model.largest(t));
    REQUIRE(list.free_bytes(t) == model.free_bytes(t));
  }
  REQUIRE(list.num_free_blocks() == model.free_blocks().size());
  REQUIRE(list.num_regions() == model.regions().size());
  for (auto const& [id, r] : model.regions()) {
    REQUIRE(list.region_base(id) == r.first);
    REQUIRE(list.region_size(id) == r.second);
    REQUIRE(list.trailing_free_block(id) == model.trailing_free_block(id));
  }
}

// Drives the list and the model with one random operation sequence.
class random_run {
 public:
  random_run(std::size_t granularity,
             std::uint64_t seed,
             tag_t num_tags                     = 1,
             tlsf_free_list::keyed_blocks keyed = tlsf_free_list::keyed_blocks::all,
             rmm::mr::detail::address_map::erase_mode erase =
                 rmm::mr::detail::address_map::erase_mode::shift)
      : list_{granularity, erase, keyed}, g_{granularity}, rng_{seed}, num_tags_{num_tags} {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      check_agrees(list_, model_);
    }
    // Every path of growing and trimming was taken (the seeds are fixed).
    CHECK(covered_.grew_tail > 0);
    CHECK(covered_.new_block > 0);
    CHECK(covered_.extend_rejected > 0);
    CHECK(covered_.shortened > 0);
    CHECK(covered_.removed > 0);
    CHECK(covered_.shrink_rejected > 0);
    // ... and every outcome of the members behind holes, and of retag_block and retag_after.
    CHECK(covered_.range_taken > 0);
    CHECK(covered_.range_rejected > 0);
    CHECK(covered_.joined > 0);
    CHECK(covered_.join_rejected > 0);
    CHECK(covered_.neighbours_queried > 0);
    CHECK(covered_.neighbours_rejected > 0);
    CHECK(covered_.allocated_blocks_queried > 0);
    CHECK(covered_.retag_block_zero > 0);
    CHECK(covered_.retag_after_zero > 0);
    if (num_tags_ > 1) {  // with one tag, from == to: nothing can move
      CHECK(covered_.retag_block_moved > 0);
      CHECK(covered_.retag_after_moved > 0);
    }
  }

 private:
  struct live {
    std::uintptr_t ptr;
    std::size_t size;
  };

  // How often each outcome of extend_region / shrink_region and of the other members occurred.
  struct coverage {
    std::size_t grew_tail, new_block, extend_rejected, shortened, removed, shrink_rejected;
    std::size_t range_taken, range_rejected, joined, join_rejected, neighbours_queried,
        neighbours_rejected, allocated_blocks_queried, retag_block_moved, retag_block_zero,
        retag_after_moved, retag_after_zero;
  };

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  void step() {
    std::size_t const dice = pick(100);
    if (model_.regions().empty() || dice < 3) {
      insert_region();
    } else if (dice < 40) {
      allocate(choose_size());
    } else if (dice < 74) {
      deallocate_some();
    } else if (dice < 76) {
      retag();
    } else if (dice < 79) {
      extend_region();
    } else if (dice < 82) {
      shrink_region();
    } else if (dice < 84) {
      misuse();
    } else if (dice < 85) {
      query_regions();
    } else if (dice < 87) {
      take_free_regions();
    } else if (dice < 92) {
      allocate_range();
    } else if (dice < 95) {
      join_allocated();
    } else if (dice < 97) {
      free_neighbours();
    } else if (dice < 98) {
      query_allocated_blocks();
    } else if (pick(2) == 0) {
      retag_block();
    } else {
      retag_after();
    }
  }

  void insert_region() {
    std::size_t const units = pick(4) == 0 ? 1 + pick(1U << 16U) : 1 + pick(2048);
    std::size_t const size  = units * g_;
    // Half the regions start right where the previous one ended: they must still never merge.
    next_base_ += pick(2) == 0 ? 0 : g_ * (1 + pick(64));
    std::size_t const id = list_.insert_region(next_base_, size);
    model_.insert_region(id, next_base_, size);
    next_base_ += size;
  }

  std::size_t pick_region() {
    auto const& regions = model_.regions();
    return std::next(regions.begin(), static_cast<std::ptrdiff_t>(pick(regions.size())))->first;
  }

  // An id that names no current region: never issued, or taken back and not reused.
  std::size_t unknown_region_id() {
    if (pick(4) == 0) {
      return std::size_t{1} << 40U;
    }
    std::size_t id = pick(4);
    while (model_.regions().count(id) != 0) {
      ++id;
    }
    return id;
  }

  // Grows a region by a few granules (it often fits the gap before the next region, or is the
  // last region) or by many (it then usually overlaps the next one).
  void extend_region() {
    std::size_t const id     = pick_region();
    std::size_t const bytes  = g_ * (1 + pick(pick(4) == 0 ? 2048 : 48));
    tag_t const tag          = pick_tag();
    std::uintptr_t const end = model_.regions().at(id).first + model_.regions().at(id).second;
    auto const next          = model_.next_region_base(id);
    if (next && *next < end + bytes) {
      require_invalid_argument([&] { list_.extend_region(id, bytes, tag); },
                               {"overlaps", std::to_string(id), std::to_string(bytes), hex(*next)});
      ++covered_.extend_rejected;
      return;
    }
    auto const trailing = model_.trailing_free_block(id);
    ++(trailing && trailing->second == tag ? covered_.grew_tail : covered_.new_block);
    list_.extend_region(id, bytes, tag);
    model_.extend_region(id, bytes, tag);
    next_base_ = std::max(next_base_, end + bytes);
  }

  // Trims a region: mostly valid cuts (at the start of the free last block, or inside it), and
  // each kind of refused cut.
  void shrink_region() {
    std::size_t const id        = pick_region();
    auto const [base, size]     = model_.regions().at(id);
    auto const [lb, ls, lf, lt] = model_.last_of(id);
    std::size_t const keep_min  = std::max<std::size_t>(lb - base, g_);  // smallest valid size
    std::size_t const kind      = pick(6);
    std::size_t new_size        = 0;
    if (kind < 3 && lf && keep_min < size) {
      new_size = kind == 0 && lb > base ? lb - base : keep_min + g_ * pick((size - keep_min) / g_);
    } else if (kind == 3) {
      new_size = g_ * (1 + pick(size / g_ + 1));  // anywhere, even past the end
    } else if (kind == 4) {
      new_size = pick(2) == 0 ? 0 : size;
    } else {
      new_size = g_ > 1 ? g_ * pick(size / g_) + g_ / 2 : size + 1;
    }
    std::string const refusal = model_.shrink_region_refusal(id, new_size, g_);
    if (!refusal.empty()) {
      require_invalid_argument([&] { list_.shrink_region(id, new_size); },
                               {std::to_string(id), std::to_string(new_size), refusal});
      ++covered_.shrink_rejected;
      return;
    }
    ++(base + new_size == lb ? covered_.removed : covered_.shortened);
    list_.shrink_region(id, new_size);
    model_.shrink_region(id, new_size);
  }

  std::size_t choose_size() {
    auto const free_blocks = model_.free_blocks();
    std::size_t const kind = pick(10);
    if (kind < 4 || free_blocks.empty()) {
      return g_ * (1 + pick(40));
    }
    if (kind < 7) {
      return g_ * (1 + pick(3000));
    }
    // Sizes near an existing free block: exercises the request's own class and exact fits.
    std::size_t const s = free_blocks[pick(free_blocks.size())].second;
    std::size_t const d = g_ * pick(3);
    if (kind == 9) {
      return s + d + g_;
    }
    return s > d ? s - d : s;
  }

  tag_t pick_tag() { return static_cast<tag_t>(pick(num_tags_)); }

  void retag() {
    tag_t const from           = pick_tag();
    tag_t const to             = pick_tag();
    std::size_t const expected = from == to ? 0 : model_.free_bytes(from);
    REQUIRE(list_.retag(from, to) == expected);
    model_.retag(from, to);
  }

  void allocate(std::size_t size) {
    tag_t const tag  = pick_tag();
    bool const fits  = model_.has_fit(size, tag);
    bool const claim = list_.largest_free_block(tag) >= size;
    REQUIRE(claim == fits);
    auto const ptr = list_.allocate(size, tag);
    REQUIRE(ptr.has_value() == fits);
    if (!ptr) {
      return;
    }
    INFO("allocate(" << size << ", tag " << tag << ") returned " << hex(*ptr));
    REQUIRE(model_.allocate_at(*ptr, size, tag));
    REQUIRE(*ptr % g_ == 0);
    live_.push_back({*ptr, size});
  }

  void deallocate_some() {
    if (live_.empty()) {
      return;
    }
    std::size_t const i = pick(live_.size());
    live const l        = live_[i];
    live_[i]            = live_.back();
    live_.pop_back();
    tag_t const tag = pick_tag();
    list_.deallocate(l.ptr, l.size, tag);
    model_.deallocate(l.ptr, tag);
    freed_.push_back(l);
    if (freed_.size() > 16) {
      freed_.erase(freed_.begin());
    }
  }

  void misuse() {
    std::size_t const kind = pick(4);
    if (kind == 0 && !live_.empty()) {  // wrong size
      live const l        = live_[pick(live_.size())];
      std::size_t const s = l.size + g_ * (1 + pick(4));
      require_invalid_argument([&] { list_.deallocate(l.ptr, s); },
                               {hex(l.ptr), std::to_string(s)});
    } else if (kind == 1 && !freed_.empty()) {  // double free (unless reallocated since)
      live const l = freed_[pick(freed_.size())];
      if (model_.is_allocated_block(l.ptr)) {
        return;
      }
      require_invalid_argument([&] { list_.deallocate(l.ptr, l.size); }, {hex(l.ptr)});
    } else if (kind == 2) {  // growth and trimming misuse; a new tag must not be created
      std::size_t const tags = list_.num_tags();
      std::size_t const bad  = unknown_region_id();
      std::string const name = "unknown region id " + std::to_string(bad);
      require_invalid_argument([&] { list_.extend_region(bad, g_, 7); }, {name});
      require_invalid_argument([&] { list_.shrink_region(bad, g_); }, {name});
      require_invalid_argument([&] { static_cast<void>(list_.region_base(bad)); }, {name});
      require_invalid_argument([&] { static_cast<void>(list_.region_size(bad)); }, {name});
      require_invalid_argument([&] { static_cast<void>(list_.trailing_free_block(bad)); }, {name});
      std::size_t const id    = pick_region();
      std::size_t const bytes = pick(2) == 0 || g_ == 1 ? 0 : g_ / 2;
      require_invalid_argument([&] { list_.extend_region(id, bytes, 7); },
                               {"region " + std::to_string(id),
                                "by " + std::to_string(bytes) + " bytes",
                                "not a non-zero multiple of " + std::to_string(g_)});
      REQUIRE(list_.num_tags() == tags);
    } else if (!live_.empty()) {  // interior or foreign pointer
      live const l             = live_[pick(live_.size())];
      std::uintptr_t const bad = l.size > g_ ? l.ptr + g_ : next_base_ + g_;
      require_invalid_argument([&] { list_.deallocate(bad, g_); }, {hex(bad)});
    }
  }

  // A chosen range out of a free block (at its start or end, all of it, or anywhere inside), or
  // one of each kind of bad request, which must be refused and leave the list unchanged.
  void allocate_range() {
    auto const free_blocks = model_.free_blocks();  // mostly one of these; else any block
    range chosen{};
    if (pick(4) != 0 && !free_blocks.empty()) {
      chosen = free_blocks[pick(free_blocks.size())];
    } else {
      auto const blocks = model_.blocks();
      auto const& b     = blocks[pick(blocks.size())];
      chosen            = {std::get<0>(b), std::get<1>(b)};
    }
    auto const [block, bsize] = chosen;
    std::size_t const units   = bsize / g_;
    std::size_t len           = 1 + pick(pick(2) == 0 ? std::min<std::size_t>(units, 8) : units);
    std::size_t off           = pick(units - len + 1);
    std::size_t const kind    = pick(12);
    if (kind == 0) {
      off = 0;
    } else if (kind == 1) {
      off = units - len;
    } else if (kind == 2) {
      off = 0;
      len = units;
    }
    std::uintptr_t arg = block;
    std::uintptr_t ptr = block + off * g_;
    std::size_t size   = len * g_;
    if (kind == 3) {  // past the end
      size += g_ * (1 + pick(4));
    } else if (kind == 4) {  // before the start
      ptr = block - g_ * (1 + pick(4));
    } else if (kind == 5) {  // unaligned or zero
      size = g_ > 1 && pick(2) == 0 ? size - g_ / 2 : 0;
    } else if (kind == 6 && g_ > 1) {
      ptr += g_ / 2;
    } else if (kind == 7) {  // not the start of the block (maybe the start of the next one)
      arg = block + g_ * (1 + pick(units));
    }
    INFO("allocate_range(" << hex(arg) << ", " << hex(ptr) << ", " << size << ")");
    std::string const refusal = model_.allocate_range_refusal(arg, ptr, size, g_);
    if (!refusal.empty()) {
      std::size_t const tags = list_.num_tags();
      require_invalid_argument([&] { list_.allocate_range(arg, ptr, size); },
                               {hex(arg), hex(ptr), std::to_string(size), refusal});
      REQUIRE(list_.num_tags() == tags);
      ++covered_.range_rejected;
      return;
    }
    list_.allocate_range(arg, ptr, size);
    model_.allocate_range(arg, ptr, size);
    live_.push_back({ptr, size});
    ++covered_.range_taken;
  }

  // Joins two adjacent allocated blocks (the joined one replaces both among the live blocks), or
  // tries a pair that is not one: a block and itself, the wrong order, another live block, or
  // the block right after it, which may be free or in another region.
  void join_allocated() {
    auto const pairs = model_.adjacent_allocated();
    if (live_.empty()) {
      return;
    }
    std::uintptr_t first   = live_[pick(live_.size())].ptr;
    std::uintptr_t second  = live_[pick(live_.size())].ptr;
    std::size_t const kind = pick(8);
    if (kind < 4 && !pairs.empty()) {
      std::tie(first, second) = pairs[pick(pairs.size())];
      if (kind == 3) {
        std::swap(first, second);
      }
    } else if (kind == 4) {
      second = first;
    } else if (kind == 5) {
      second = first + find_live(live_, first)->size;
    }
    INFO("join_allocated(" << hex(first) << ", " << hex(second) << ")");
    if (!model_.joinable_allocated(first, second)) {
      require_invalid_argument([&] { list_.join_allocated(first, second); },
                               {hex(first), hex(second), "not two physically adjacent"});
      ++covered_.join_rejected;
      return;
    }
    list_.join_allocated(first, second);
    model_.join_allocated(first, second);
    join_live(live_, first, second);
    ++covered_.joined;
  }

  // Of a live block (with tags the run uses and one it never does), or of an address that
  // starts no allocated block, which must be refused.
  void free_neighbours() {
    auto const blocks      = model_.blocks();
    std::uintptr_t const p = pick(3) == 0 || live_.empty()
                                 ? std::get<0>(blocks[pick(blocks.size())]) + g_ * pick(2)
                                 : live_[pick(live_.size())].ptr;
    tag_t const tag        = static_cast<tag_t>(pick(num_tags_ + 1));
    if (!model_.is_allocated_block(p)) {
      require_invalid_argument([&] { static_cast<void>(list_.free_neighbours(p, tag)); },
                               {hex(p), "not the start of an allocated block"});
      ++covered_.neighbours_rejected;
      return;
    }
    INFO("free_neighbours(" << hex(p) << ", " << tag << ")");
    REQUIRE(list_.free_neighbours(p, tag) == model_.free_neighbours(p, tag));
    ++covered_.neighbours_queried;
  }

  void query_allocated_blocks() {
    for (auto const& [id, r] : model_.regions()) {
      REQUIRE(list_.region_allocated_blocks(id) == model_.allocated_blocks(id));
    }
    std::size_t const bad = unknown_region_id();
    require_invalid_argument([&] { static_cast<void>(list_.region_allocated_blocks(bad)); },
                             {"unknown region id " + std::to_string(bad)});
    ++covered_.allocated_blocks_queried;
  }

  // Mostly at a free block with its own tag as `from`; also with another tag, at an allocated
  // block or inside a block.
  void retag_block() {
    auto const blocks                = model_.blocks();
    auto const [base, size, fr, own] = blocks[pick(blocks.size())];
    std::uintptr_t const p           = pick(8) == 0 ? base + g_ : base;
    tag_t const from                 = pick(4) == 0 ? pick_tag() : own;
    tag_t const to                   = pick_tag();
    std::size_t const expected       = model_.retag_block_size(p, from, to);
    INFO("retag_block(" << hex(p) << ", " << from << ", " << to << ")");
    REQUIRE(list_.retag_block(p, from, to) == expected);
    model_.retag_block(p, from, to);
    ++(expected != 0 ? covered_.retag_block_moved : covered_.retag_block_zero);
  }

  // At an allocated block (mostly) or a free one: the block after it, with that block's own
  // tag as `from` (mostly) or another.
  void retag_after() {
    auto const blocks                = model_.blocks();
    auto const [base, size, fr, own] = blocks[pick(blocks.size())];
    auto const at                    = model_.block_after(base);
    auto const next                  = std::find_if(
        blocks.begin(), blocks.end(), [&](auto const& v) { return at && std::get<0>(v) == *at; });
    tag_t const next_tag       = next != blocks.end() ? std::get<3>(*next) : own;
    tag_t const from           = pick(4) == 0 ? pick_tag() : next_tag;
    tag_t const to             = pick_tag();
    std::size_t const expected = at ? model_.retag_block_size(*at, from, to) : 0;
    INFO("retag_after(" << hex(base) << ", " << from << ", " << to << ")");
    REQUIRE(list_.retag_after(base, from, to) == expected);
    if (at) {
      model_.retag_block(*at, from, to);
    }
    ++(expected != 0 ? covered_.retag_after_moved : covered_.retag_after_zero);
  }

  void query_regions() {
    for (auto const& [id, r] : model_.regions()) {
      REQUIRE(list_.region_fully_free(id) == model_.region_fully_free(id));
    }
  }

  void take_free_regions() {
    auto const got = list_.take_free_regions();
    REQUIRE(got == model_.take_free_regions());
  }

  tlsf_free_list list_;
  reference_model model_;
  std::size_t g_;
  std::mt19937_64 rng_;
  tag_t num_tags_;
  std::vector<live> live_;
  std::vector<live> freed_;
  std::uintptr_t next_base_{0x7f0000000000ULL};
  coverage covered_{};
};

}  // namespace

TEST_CASE("tlsf_free_list agrees with a reference model on random sequences", "[detail]") {
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 0xdeadbeefULL}) {
    SECTION("granularity 256, seed " + std::to_string(seed)) { random_run{256, seed}.run(5000); }
  }
  SECTION("granularity 1") { random_run{1, 42}.run(5000); }
  SECTION("granularity 4096") { random_run{4096, 7}.run(5000); }
  SECTION("with tags (streams), granularity 256") {
    for (std::uint64_t seed : {11U, 12U, 13U}) {
      random_run{256, seed, 3}.run(5000);
    }
  }
}

// The global arena's keying: free blocks have no key, so every look-up of a free block by address
// (retag_block, allocate_range, a double free's message) takes the region walk instead, and
// validate() checks that no free block has one.
TEST_CASE("tlsf_free_list keying allocated blocks only agrees with the reference model",
          "[detail]") {
  auto const allocated = tlsf_free_list::keyed_blocks::allocated;
  for (std::uint64_t seed : {21ULL, 22ULL, 0xfeedULL}) {
    SECTION("granularity 256, seed " + std::to_string(seed)) {
      random_run{256, seed, 1, allocated}.run(5000);
    }
  }
  SECTION("granularity 1") { random_run{1, 43, 1, allocated}.run(5000); }
  SECTION("with tags (streams), granularity 256") {
    for (std::uint64_t seed : {31U, 32U}) {
      random_run{256, seed, 3, allocated}.run(5000);
    }
  }
  SECTION("erasing by tombstone, as the global arena does") {
    for (std::uint64_t seed : {51U, 52U}) {
      random_run{256, seed, 1, allocated, rmm::mr::detail::address_map::erase_mode::tombstone}.run(
          5000);
    }
  }
}
