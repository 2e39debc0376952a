/**
 * @file tlsf_free_list_model_tests.cpp
 * @brief Randomised operation sequences on rmm::mr::detail::tlsf_free_list (allocate, deallocate,
 * retag, extend_region, shrink_region, misuse, take_free_regions), checked after every step
 * against a naive reference model and validate().
 */
#include "free_list_test_helpers.hpp"
#include "tlsf_free_list_test_helpers.hpp"

#include <rmm/mr/detail/tlsf_free_list.hpp>

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

  // Grows region id by bytes of tag: its last block absorbs them if free and of that tag,
  // otherwise they form a new free block after it.
  void extend_region(std::size_t id, std::size_t bytes, tag_t tag) {
    range& r  = regions_.at(id);
    auto last = last_block(id);
    if (last->second.free && last->second.tag == tag) {
      last->second.size += bytes;
    } else {
      blocks_[r.first + r.second] = {bytes, true, id, tag};
    }
    r.second += bytes;
  }

  // Cuts region id to new_size: its (free) last block is removed or shortened.
  void shrink_region(std::size_t id, std::size_t new_size) {
    range& r                 = regions_.at(id);
    auto last                = last_block(id);
    std::uintptr_t const cut = r.first + new_size;
    if (last->first == cut) {
      blocks_.erase(last);
    } else {
      last->second.size = cut - last->first;
    }
    r.second = new_size;
  }

  // (base, size, free, tag) of the last block of region id.
  [[nodiscard]] block_view last_of(std::size_t id) const {
    range const& r = regions_.at(id);
    auto const it  = std::prev(blocks_.lower_bound(r.first + r.second));
    return {it->first, it->second.size, it->second.free, it->second.tag};
  }

  [[nodiscard]] std::optional<std::pair<std::size_t, tag_t>> trailing_free_block(
      std::size_t id) const {
    auto const [base, size, free, tag] = last_of(id);
    if (!free) {
      return std::nullopt;
    }
    return std::pair<std::size_t, tag_t>{size, tag};
  }

  // Base of the region after region id in address order, if any.
  [[nodiscard]] std::optional<std::uintptr_t> next_region_base(std::size_t id) const {
    std::uintptr_t const base = regions_.at(id).first;
    std::optional<std::uintptr_t> next;
    for (auto const& [other, r] : regions_) {
      if (r.first > base && (!next || r.first < *next)) {
        next = r.first;
      }
    }
    return next;
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

  std::map<std::uintptr_t, blk>::iterator last_block(std::size_t id) {
    range const& r = regions_.at(id);
    return std::prev(blocks_.lower_bound(r.first + r.second));
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
  for (auto const& [id, r] : model.regions()) {
    REQUIRE(list.region_base(id) == r.first);
    REQUIRE(list.region_size(id) == r.second);
    REQUIRE(list.trailing_free_block(id) == model.trailing_free_block(id));
  }
}

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
    // Every path of growing and trimming was taken (the seeds are fixed).
    CHECK(covered_.grew_tail > 0);
    CHECK(covered_.new_block > 0);
    CHECK(covered_.extend_rejected > 0);
    CHECK(covered_.shortened > 0);
    CHECK(covered_.removed > 0);
    CHECK(covered_.shrink_rejected > 0);
  }

 private:
  struct live {
    std::uintptr_t ptr;
    std::size_t size;
  };

  // How often each outcome of extend_region / shrink_region occurred.
  struct coverage {
    std::size_t grew_tail, new_block, extend_rejected, shortened, removed, shrink_rejected;
  };

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  void step() {
    std::size_t const dice = pick(100);
    if (model_.regions().empty() || dice < 3) {
      insert_region();
    } else if (dice < 45) {
      allocate(choose_size());
    } else if (dice < 83) {
      deallocate_some();
    } else if (dice < 86) {
      retag();
    } else if (dice < 90) {
      extend_region();
    } else if (dice < 93) {
      shrink_region();
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

  // Why shrink_region(id, new_size) must be refused (a fragment of the message), or "" if valid.
  std::string shrink_refusal(std::size_t id, std::size_t new_size) const {
    auto const [base, size]    = model_.regions().at(id);
    auto const [lb, ls, lf, t] = model_.last_of(id);
    if (new_size == 0 || new_size >= size) {
      return "must be non-zero and below the size";
    }
    if (new_size % g_ != 0) {
      return "not a multiple of " + std::to_string(g_);
    }
    if (!lf) {
      return "is allocated";
    }
    return base + new_size < lb ? "the cut lies below its free last block" : "";
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
    std::string const refusal = shrink_refusal(id, new_size);
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
