/**
 * @file tlsf_free_list_tests.cpp
 * @brief Tests of rmm::mr::detail::tlsf_free_list: edge cases, misuse errors, and randomised
 * operation sequences checked step by step against a naive reference model.
 */
#include "free_list_test_helpers.hpp"

#include <rmm/mr/detail/tlsf_free_list.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::tlsf_free_list;
using range = std::pair<std::uintptr_t, std::size_t>;

constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

using rmm::test::hex;
using rmm::test::require_invalid_argument;

// A block as seen from outside: (base, size, free, tag of a free block).
using block_view = std::tuple<std::uintptr_t, std::size_t, bool, tlsf_free_list::tag_t>;
using tag_t      = tlsf_free_list::tag_t;

std::vector<block_view> blocks_of(tlsf_free_list const& list) {
  std::vector<block_view> out;
  list.for_each_block([&out](std::uintptr_t b, std::size_t s, bool f, std::size_t, tag_t t) {
    out.emplace_back(b, s, f, f ? t : 0);
  });
  return out;
}

// Naive model: every block in an ordered map, linear scans for fits, neighbour merging by map
// iteration. Slow but obviously right.
class reference_model {
 public:
  void insert_region(std::size_t id, std::uintptr_t base, std::size_t size) {
    regions_[id]  = {base, size};
    blocks_[base] = {size, true, id, 0};
  }

  [[nodiscard]] bool has_fit(std::size_t size, tag_t tag) const { return largest(tag) >= size; }

  [[nodiscard]] std::size_t largest(std::optional<tag_t> tag = std::nullopt) const {
    std::size_t best = 0;
    for (auto const& [base, b] : blocks_) {
      if (b.free && (!tag || b.tag == *tag) && b.size > best) {
        best = b.size;
      }
    }
    return best;
  }

  [[nodiscard]] std::size_t free_bytes(tag_t tag) const {
    std::size_t n = 0;
    for (auto const& [base, b] : blocks_) {
      n += b.free && b.tag == tag ? b.size : 0;
    }
    return n;
  }

  // Applies an allocation the structure made at ptr; false if ptr was not a fitting free block
  // of the tag.
  bool allocate_at(std::uintptr_t ptr, std::size_t size, tag_t tag) {
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second.free || it->second.size < size ||
        it->second.tag != tag) {
      return false;
    }
    blk const old = it->second;
    it->second    = {size, false, old.region, 0};
    if (old.size > size) {
      blocks_[ptr + size] = {old.size - size, true, old.region, tag};
    }
    return true;
  }

  void retag(tag_t from, tag_t to) {
    for (auto& [base, b] : blocks_) {
      if (b.free && b.tag == from) {
        b.tag = to;
      }
    }
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      auto const next = std::next(it);
      if (next != blocks_.end() && mergeable(*it, *next)) {
        it->second.size += next->second.size;
        blocks_.erase(next);
      } else {
        it = next;
      }
    }
  }

  void deallocate(std::uintptr_t ptr, tag_t tag) {
    auto it         = blocks_.find(ptr);
    it->second.free = true;
    it->second.tag  = tag;
    auto const next = std::next(it);
    if (next != blocks_.end() && mergeable(*it, *next)) {
      it->second.size += next->second.size;
      blocks_.erase(next);
    }
    if (it != blocks_.begin()) {
      auto const prev = std::prev(it);
      if (mergeable(*prev, *it)) {
        prev->second.size += it->second.size;
        blocks_.erase(it);
      }
    }
  }

  [[nodiscard]] bool is_allocated_block(std::uintptr_t ptr) const {
    auto const it = blocks_.find(ptr);
    return it != blocks_.end() && !it->second.free;
  }

  [[nodiscard]] bool region_fully_free(std::size_t id) const {
    auto const& [base, size] = regions_.at(id);
    for (auto it = blocks_.find(base); it != blocks_.end() && it->first < base + size; ++it) {
      if (!it->second.free) {
        return false;
      }
    }
    return true;
  }

  [[nodiscard]] bool region_single_free_block(std::size_t id) const {
    auto const& [base, size] = regions_.at(id);
    auto const& b            = blocks_.at(base);
    return b.free && b.size == size;
  }

  std::vector<range> take_free_regions() {
    std::vector<range> out;
    for (auto it = regions_.begin(); it != regions_.end();) {
      if (region_single_free_block(it->first)) {
        out.push_back(it->second);
        blocks_.erase(it->second.first);
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  [[nodiscard]] std::vector<block_view> blocks() const {
    std::vector<block_view> out;
    for (auto const& [base, b] : blocks_) {
      out.emplace_back(base, b.size, b.free, b.free ? b.tag : 0);
    }
    return out;
  }

  [[nodiscard]] std::vector<range> free_blocks() const {
    std::vector<range> out;
    for (auto const& [base, b] : blocks_) {
      if (b.free) {
        out.emplace_back(base, b.size);
      }
    }
    return out;
  }

  [[nodiscard]] std::size_t bytes(bool free) const {
    std::size_t n = 0;
    for (auto const& [base, b] : blocks_) {
      n += b.free == free ? b.size : 0;
    }
    return n;
  }

  [[nodiscard]] std::map<std::size_t, range> const& regions() const { return regions_; }

 private:
  struct blk {
    std::size_t size;
    bool free;
    std::size_t region;
    tag_t tag;
  };

  template <typename P>
  static bool mergeable(P const& lo, P const& hi) {
    return lo.second.free && hi.second.free && lo.second.region == hi.second.region &&
           lo.second.tag == hi.second.tag && lo.first + lo.second.size == hi.first;
  }

  std::map<std::uintptr_t, blk> blocks_;
  std::map<std::size_t, range> regions_;
};

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
}

// Calls f, which must throw std::invalid_argument whose message contains every fragment.
// Drives the list and the model with one random operation sequence.
class random_run {
 public:
  random_run(std::size_t granularity, std::uint64_t seed, tag_t num_tags = 1)
      : list_{granularity}, g_{granularity}, rng_{seed}, num_tags_{num_tags} {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      check_agrees(list_, model_);
    }
  }

 private:
  struct live {
    std::uintptr_t ptr;
    std::size_t size;
  };

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  void step() {
    std::size_t const dice = pick(100);
    if (model_.regions().empty() || dice < 3) {
      insert_region();
    } else if (dice < 50) {
      allocate(choose_size());
    } else if (dice < 90) {
      deallocate_some();
    } else if (dice < 93) {
      retag();
    } else if (dice < 96) {
      misuse();
    } else if (dice < 98) {
      query_regions();
    } else {
      take_free_regions();
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
    std::size_t const kind = pick(3);
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
    } else if (!live_.empty()) {  // interior or foreign pointer
      live const l             = live_[pick(live_.size())];
      std::uintptr_t const bad = l.size > g_ ? l.ptr + g_ : next_base_ + g_;
      require_invalid_argument([&] { list_.deallocate(bad, g_); }, {hex(bad)});
    }
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
};

}  // namespace

TEST_CASE("tlsf_free_list rejects a granularity that is not a power of two", "[detail]") {
  for (std::size_t g : {std::size_t{0}, std::size_t{3}, std::size_t{384}}) {
    require_invalid_argument([g] { tlsf_free_list list{g}; }, {std::to_string(g)});
  }
  REQUIRE(tlsf_free_list{1}.granularity() == 1);
}

TEST_CASE("tlsf_free_list starts empty", "[detail]") {
  tlsf_free_list list{256};
  REQUIRE(list.free_bytes() == 0);
  REQUIRE(list.largest_free_block() == 0);
  REQUIRE(list.num_free_blocks() == 0);
  REQUIRE_FALSE(list.allocate(256).has_value());
  REQUIRE(list.take_free_regions().empty());
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list validates regions", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x10000, 0x1000);
  require_invalid_argument([&] { list.insert_region(0x20000, 0); }, {"0"});
  require_invalid_argument([&] { list.insert_region(0x20000, 300); }, {"300"});
  require_invalid_argument([&] { list.insert_region(0x20080, 256); }, {"0x20080"});
  require_invalid_argument([&] { list.insert_region(MAX - 255, 256); }, {"wraps"});
  // Overlaps: inside, across the start, across the end, enclosing, identical.
  for (auto const& [base, size] : std::vector<range>{{0x10100, 0x100},
                                                     {0xff00, 0x200},
                                                     {0x10f00, 0x200},
                                                     {0xf000, 0x3000},
                                                     {0x10000, 0x1000}}) {
    require_invalid_argument([&, b = base, s = size] { list.insert_region(b, s); },
                             {hex(base), "overlaps"});
  }
  REQUIRE_NOTHROW(list.insert_region(0x11000, 0x1000));  // touching is fine
  REQUIRE_NOTHROW(list.insert_region(0xf000, 0x1000));
  REQUIRE(list.total_bytes() == 0x3000);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list validates allocation sizes", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x10000, 0x10000);
  require_invalid_argument([&] { list.allocate(0); }, {"size 0"});
  require_invalid_argument([&] { list.allocate(100); }, {"size 100"});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list splits from the front and coalesces both neighbours", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0x100000, 0x1000);
  auto const a = list.allocate(0x100);
  auto const b = list.allocate(0x200);
  auto const c = list.allocate(0x300);
  REQUIRE(a == std::optional<std::uintptr_t>{0x100000});
  REQUIRE(b == std::optional<std::uintptr_t>{0x100100});
  REQUIRE(c == std::optional<std::uintptr_t>{0x100300});
  REQUIRE(list.num_free_blocks() == 1);
  list.deallocate(*a, 0x100);
  list.deallocate(*c, 0x300);  // merges with the tail
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE(list.largest_free_block() == 0xd00);
  list.deallocate(*b, 0x200);  // merges with both
  REQUIRE(list.num_free_blocks() == 1);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE(list.allocated_bytes() == 0);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list never merges adjacent regions", "[detail]") {
  tlsf_free_list list{256};
  auto const r1 = list.insert_region(0x1000, 0x1000);
  auto const r2 = list.insert_region(0x2000, 0x1000);
  REQUIRE(r1 != r2);
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE(list.largest_free_block() == 0x1000);
  REQUIRE_FALSE(list.allocate(0x2000).has_value());
  auto const p = list.allocate(0x1000);
  auto const q = list.allocate(0x1000);
  REQUIRE(p.has_value());
  REQUIRE(q.has_value());
  list.deallocate(*p, 0x1000);
  list.deallocate(*q, 0x1000);
  REQUIRE(list.num_free_blocks() == 2);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list finds a fit that lies only in the request's own size class", "[detail]") {
  // With 256-byte granules, 64 and 65 granules share a class of width 2. A request for 65
  // rounds up past that class; only the fallback scan of the own class can find the block.
  tlsf_free_list list{256};
  list.insert_region(0x100000, 64 * 256);
  list.insert_region(0x200000, 65 * 256);
  REQUIRE(list.largest_free_block() == 65 * 256);
  auto const p = list.allocate(65 * 256);
  REQUIRE(p == std::optional<std::uintptr_t>{0x200000});
  REQUIRE_FALSE(list.allocate(65 * 256).has_value());
  REQUIRE(list.allocate(64 * 256) == std::optional<std::uintptr_t>{0x100000});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list handles a wide top size class", "[detail]") {
  // Sizes 2^40 + k * 2^30 granules all fall in one class of width 2^35 granules.
  tlsf_free_list list{1};
  std::size_t const base = std::size_t{1} << 40U;
  std::vector<std::size_t> sizes{base + (std::size_t{3} << 30U),
                                 base + (std::size_t{7} << 30U),
                                 base + (std::size_t{5} << 30U)};
  std::uintptr_t at = std::uintptr_t{1} << 44U;
  for (std::size_t s : sizes) {
    list.insert_region(at, s);
    at += s + (std::size_t{1} << 30U);
  }
  REQUIRE(list.largest_free_block() == sizes[1]);
  auto const p = list.allocate(sizes[1]);  // only one block fits; rounding overshoots the class
  REQUIRE(p.has_value());
  REQUIRE(list.largest_free_block() == sizes[2]);
  REQUIRE(list.allocate(sizes[2] - 1).has_value());  // leaves a 1-byte tail
  REQUIRE(list.largest_free_block() == sizes[0]);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list handles sizes near the top of the address space", "[detail]") {
  tlsf_free_list list{1};
  list.insert_region(0, MAX);  // [0, 2^64 - 1): rounding the request up would overflow
  REQUIRE(list.largest_free_block() == MAX);
  auto const p = list.allocate(MAX);
  REQUIRE(p == std::optional<std::uintptr_t>{0});
  REQUIRE(list.largest_free_block() == 0);
  list.deallocate(0, MAX);
  REQUIRE(list.allocate(MAX - 1) == std::optional<std::uintptr_t>{0});
  REQUIRE(list.largest_free_block() == 1);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list reports misuse on deallocate and stays unchanged", "[detail]") {
  tlsf_free_list list{256};
  list.insert_region(0xa0000, 0x10000);
  auto const p = list.allocate(0x400);
  auto const q = list.allocate(0x400);
  REQUIRE(p.has_value());
  REQUIRE(q.has_value());
  auto const before = blocks_of(list);

  SECTION("unknown pointer") {
    require_invalid_argument([&] { list.deallocate(0x5000, 0x400); },
                             {"unknown pointer", "0x5000", "1024"});
  }
  SECTION("interior pointer") {
    require_invalid_argument([&] { list.deallocate(*p + 0x100, 0x300); },
                             {"unknown pointer", hex(*p + 0x100)});
  }
  SECTION("wrong size") {
    require_invalid_argument([&] { list.deallocate(*q, 0x800); }, {hex(*q), "2048", "1024"});
  }
  SECTION("double free") {
    list.deallocate(*q, 0x400);  // q's block is now the start of the free tail
    auto const after_free = blocks_of(list);
    require_invalid_argument([&] { list.deallocate(*q, 0x400); }, {"double free", hex(*q)});
    REQUIRE(blocks_of(list) == after_free);
    return;
  }
  REQUIRE(blocks_of(list) == before);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("tlsf_free_list releases exactly the fully free regions", "[detail]") {
  tlsf_free_list list{256};
  auto const r1 = list.insert_region(0x30000, 0x1000);
  auto const r2 = list.insert_region(0x10000, 0x2000);
  auto const r3 = list.insert_region(0x20000, 0x1000);
  auto const p  = list.allocate(0x1000);  // exact fit in the first class that holds 0x1000
  REQUIRE(p.has_value());
  std::size_t const busy = *p == 0x30000 ? r1 : (*p == 0x20000 ? r3 : r2);
  for (auto r : {r1, r2, r3}) {
    REQUIRE(list.region_fully_free(r) == (r != busy));
  }
  std::vector<range> expected;
  list.for_each_region([&](std::size_t id, std::uintptr_t b, std::size_t s, bool fully_free) {
    REQUIRE(fully_free == (id != busy));
    if (fully_free) {
      expected.emplace_back(b, s);
    }
  });
  REQUIRE(list.take_free_regions() == expected);
  REQUIRE(list.num_regions() == 1);
  require_invalid_argument([&] { static_cast<void>(list.region_fully_free(r1 == busy ? r2 : r1)); },
                           {"region"});
  require_invalid_argument([] { static_cast<void>(tlsf_free_list{256}.region_fully_free(7)); },
                           {"7"});
  REQUIRE(list.free_bytes() + list.allocated_bytes() == list.total_bytes());
  list.deallocate(*p, 0x1000);
  REQUIRE(list.take_free_regions().size() == 1);
  REQUIRE(list.total_bytes() == 0);
  auto const again = list.insert_region(0x10000, 0x1000);  // ids and descriptors are reused
  REQUIRE(list.region_fully_free(again));
  REQUIRE_NOTHROW(list.validate());
}

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
