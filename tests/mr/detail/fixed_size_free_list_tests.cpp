/**
 * @file fixed_size_free_list_tests.cpp
 * @brief Tests of rmm::mr::detail::fixed_size_free_list: edge cases, misuse errors, and
 * randomised operation sequences checked step by step against a naive reference model.
 */
#include "fixed_size_free_list_model.hpp"
#include "free_list_test_helpers.hpp"

#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::fixed_size_free_list;
using range = std::pair<std::uintptr_t, std::size_t>;
using tag_t = fixed_size_free_list::tag_t;

constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

using rmm::test::hex;
using rmm::test::require_invalid_argument;

// Naive model: the set of free blocks, the stack of pushed blocks, and per chunk the blocks
// never handed out.
class reference_model {
 public:
  explicit reference_model(std::size_t block_size) : bs_{block_size} {}

  [[nodiscard]] bool chunk_fits(std::uintptr_t base, std::size_t n) const {
    for (auto const& [b, c] : chunks_) {
      if (b < base + n * bs_ && base < b + c.blocks * bs_) {
        return false;
      }
    }
    return true;
  }

  void add_chunk(std::uintptr_t base, std::size_t n) {
    chunks_[base] = {n, 0};
    for (std::size_t i = 0; i < n; ++i) {
      free_.insert(base + i * bs_);
    }
  }

  // Checks that the list may have popped p for tag t, and records it.
  bool pop(std::uintptr_t p, std::size_t t) {
    auto& stack = stacks_[t];
    if (!stack.empty()) {
      if (stack.back() != p) {
        return false;
      }
      stack.pop_back();
    } else {
      auto it = chunks_.upper_bound(p);
      if (it == chunks_.begin()) {
        return false;
      }
      --it;
      chunk& c = it->second;
      if (c.next_fresh >= c.blocks || p != it->first + c.next_fresh * bs_) {
        return false;
      }
      ++c.next_fresh;
    }
    return free_.erase(p) == 1;
  }

  void push(std::uintptr_t p, std::size_t t) {
    free_.insert(p);
    stacks_[t].push_back(p);
  }

  // The newest n blocks of `from` (all if fewer), in order, below `to`'s own.
  void retag(std::size_t from, std::size_t to, std::size_t n = static_cast<std::size_t>(-1)) {
    if (from == to) {
      return;
    }
    auto& src        = stacks_[from];
    auto& dst        = stacks_[to];
    auto const first = src.end() - static_cast<std::ptrdiff_t>(std::min(n, src.size()));
    dst.insert(dst.begin(), first, src.end());
    src.erase(first, src.end());
  }

  [[nodiscard]] std::size_t stacked(std::size_t t) const { return stacks_[t].size(); }

  // Drops every chunk whose blocks are all free, with its blocks; returns them by address.
  std::vector<std::pair<std::uintptr_t, std::size_t>> release_free_chunks() {
    return rmm::test::release_free_chunks(chunks_, free_, stacks_, bs_);
  }

  // True if a pop for tag t can succeed: a block of t's stack or a never-handed-out one.
  [[nodiscard]] bool can_pop(std::size_t t) const {
    if (!stacks_[t].empty()) {
      return true;
    }
    for (auto const& [b, c] : chunks_) {
      if (c.next_fresh < c.blocks) {
        return true;
      }
    }
    return false;
  }

  [[nodiscard]] bool owns(std::uintptr_t p) const {
    for (auto const& [b, c] : chunks_) {
      if (b <= p && p < b + c.blocks * bs_) {
        return (p - b) % bs_ == 0;
      }
    }
    return false;
  }

  [[nodiscard]] bool is_free(std::uintptr_t p) const { return free_.count(p) != 0; }
  [[nodiscard]] std::size_t size() const { return free_.size(); }

  [[nodiscard]] std::size_t capacity() const {
    std::size_t n = 0;
    for (auto const& [b, c] : chunks_) {
      n += c.blocks;
    }
    return n;
  }

  [[nodiscard]] std::set<std::uintptr_t> const& free_set() const { return free_; }

 private:
  struct chunk {
    std::size_t blocks;
    std::size_t next_fresh;
  };
  std::size_t bs_;
  std::map<std::uintptr_t, chunk> chunks_;
  std::set<std::uintptr_t> free_;
  std::vector<std::vector<std::uintptr_t>> stacks_{8};
};

class random_run {
 public:
  random_run(std::size_t block_size, std::uint64_t seed, std::size_t num_tags = 1)
      : list_{block_size}, model_{block_size}, bs_{block_size}, rng_{seed}, tags_{num_tags} {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      REQUIRE_NOTHROW(list_.validate());
      REQUIRE(list_.size() == model_.size());
      REQUIRE(list_.capacity() == model_.capacity());
      REQUIRE(list_.empty() == (model_.size() == 0));
      for (std::size_t t = 0; t < tags_; ++t) {
        REQUIRE(list_.stacked(static_cast<tag_t>(t)) == model_.stacked(t));
      }
    }
  }

 private:
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  void step() {
    std::size_t const dice = pick(100);
    if (list_.num_chunks() == 0 || dice < 2) {
      add_chunk();
    } else if (dice < 50) {
      pop();
    } else if (dice < 90) {
      push();
    } else if (dice < 92) {
      retag();
    } else if (dice == 92) {
      release();
    } else if (dice < 95) {
      query();
    } else {
      misuse();
    }
  }

  void add_chunk() {
    std::size_t const n = 1 + pick(pick(2) == 0 ? 8 : 300);
    std::uintptr_t base = next_ + (pick(2) == 0 ? 0 : 1 + pick(3 * bs_));
    if (pick(8) == 0 && !chunks_.empty()) {  // overlap an earlier chunk
      base = chunks_[pick(chunks_.size())].first + pick(bs_);
    }
    if (!model_.chunk_fits(base, n)) {
      require_invalid_argument([&] { list_.add_chunk(base, n); }, {hex(base), "overlaps"});
      return;
    }
    list_.add_chunk(base, n);
    model_.add_chunk(base, n);
    chunks_.emplace_back(base, n);
    ++chunks_added_;
    next_ = std::max(next_, base + n * bs_);
  }

  std::size_t pick_tag() { return pick(tags_); }

  void retag() {
    std::size_t const from = pick_tag();
    std::size_t const to   = pick_tag();
    if (pick(2) == 0) {  // the newest k only (a stream adopting part of another's blocks)
      std::size_t const k = pick(8);
      std::size_t const n = from == to ? 0 : std::min(k, model_.stacked(from));
      REQUIRE(list_.retag_newest(static_cast<tag_t>(from), static_cast<tag_t>(to), k) == n);
      model_.retag(from, to, k);
      return;
    }
    std::size_t const n = from == to ? 0 : model_.stacked(from);
    REQUIRE(list_.retag(static_cast<tag_t>(from), static_cast<tag_t>(to)) == n);
    model_.retag(from, to);
  }

  void release() {
    auto const expected = model_.release_free_chunks();
    REQUIRE(list_.release_free_chunks() == expected);
    REQUIRE(list_.num_chunks() == chunks_held() - expected.size());
    released_ += expected.size();
  }

  [[nodiscard]] std::size_t chunks_held() const { return chunks_added_ - released_; }

  void pop() {
    std::size_t const t = pick_tag();
    auto const p        = list_.pop(static_cast<tag_t>(t));
    REQUIRE(p.has_value() == model_.can_pop(t));
    if (!p) {
      return;
    }
    INFO("pop for tag " << t << " returned " << hex(*p));
    REQUIRE(model_.pop(*p, t));
    held_.push_back(*p);
  }

  void push() {
    if (held_.empty()) {
      return;
    }
    // Mostly the latest block (LIFO-heavy, like a real pool), sometimes any.
    std::size_t const i    = pick(3) == 0 ? pick(held_.size()) : held_.size() - 1;
    std::uintptr_t const p = held_[i];
    held_[i]               = held_.back();
    held_.pop_back();
    std::size_t const t = pick_tag();
    list_.push(p, static_cast<tag_t>(t));
    model_.push(p, t);
  }

  std::uintptr_t random_address() {
    auto const [b, n] = chunks_[pick(chunks_.size())];
    return b + pick(n * bs_ + bs_);  // sometimes one block past the chunk
  }

  void query() {
    std::uintptr_t const p = random_address();
    REQUIRE(list_.owns(p) == model_.owns(p));
    if (model_.owns(p)) {
      REQUIRE(list_.is_free(p) == model_.is_free(p));
    } else {
      require_invalid_argument([&] { static_cast<void>(list_.is_free(p)); }, {hex(p)});
    }
  }

  void misuse() {
    std::uintptr_t p = random_address();
    if (pick(2) == 0 && !model_.free_set().empty()) {  // double free of a free block
      auto it = model_.free_set().lower_bound(p);
      p       = it == model_.free_set().end() ? *model_.free_set().begin() : *it;
    }
    if (model_.owns(p) && !model_.is_free(p)) {
      return;
    }  // a legitimate push
    require_invalid_argument([&] { list_.push(p); }, {hex(p)});
  }

  fixed_size_free_list list_;
  reference_model model_;
  std::size_t bs_;
  std::mt19937_64 rng_;
  std::size_t tags_;
  std::vector<std::uintptr_t> held_;
  std::vector<range> chunks_;  // every chunk added, released ones too (queries and misuse)
  std::size_t chunks_added_{0};
  std::size_t released_{0};
  std::uintptr_t next_{0x7f0000000000ULL};
};

}  // namespace

TEST_CASE("fixed_size_free_list rejects a zero block size", "[detail]") {
  require_invalid_argument([] { fixed_size_free_list l{0}; }, {"zero"});
  REQUIRE(fixed_size_free_list{24}.block_size() == 24);
}

TEST_CASE("fixed_size_free_list starts empty", "[detail]") {
  fixed_size_free_list list{256};
  REQUIRE(list.empty());
  REQUIRE(list.size() == 0);
  REQUIRE(list.capacity() == 0);
  REQUIRE_FALSE(list.pop().has_value());
  REQUIRE_FALSE(list.owns(0x1000));
  require_invalid_argument([&] { list.push(0x1000); }, {"0x1000", "no chunk"});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list validates chunks", "[detail]") {
  fixed_size_free_list list{256};
  list.add_chunk(0x10000, 16);  // [0x10000, 0x11000)
  require_invalid_argument([&] { list.add_chunk(0x20000, 0); }, {"0x20000", "empty"});
  require_invalid_argument([&] { list.add_chunk(0x20000, MAX / 256 + 1); }, {"address space"});
  require_invalid_argument([&] { list.add_chunk(MAX - 511, 2); }, {"address space"});
  for (std::uintptr_t base : {0x10000U, 0x10800U, 0xff01U, 0x10fffU}) {
    require_invalid_argument([&] { list.add_chunk(base, 1); }, {hex(base), "overlaps"});
  }
  REQUIRE_NOTHROW(list.add_chunk(0xff00, 1));   // touching below
  REQUIRE_NOTHROW(list.add_chunk(0x11000, 1));  // touching above
  REQUIRE(list.capacity() == 18);
  REQUIRE(list.chunks() ==
          std::vector<range>{{0x10000, 0x1000}, {0xff00, 0x100}, {0x11000, 0x100}});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list hands out fresh blocks in address order, then LIFO", "[detail]") {
  fixed_size_free_list list{0x100};
  list.add_chunk(0x1000, 4);
  REQUIRE(list.size() == 4);
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1000});
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1100});
  list.push(0x1000);
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1000});  // the warm one first
  list.push(0x1100);
  list.push(0x1000);
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1000});
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1100});
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1200});
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x1300});
  REQUIRE_FALSE(list.pop().has_value());
  REQUIRE(list.empty());
  list.add_chunk(0x9000, 1);
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x9000});
  REQUIRE(list.capacity() == 5);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list moves a tag's newest blocks below another tag's", "[detail]") {
  fixed_size_free_list list{0x100};
  list.add_chunk(0x1000, 6);
  for (int i = 0; i < 6; ++i) {
    REQUIRE(list.pop().has_value());
  }
  for (std::uintptr_t p : {0x1000U, 0x1100U, 0x1200U, 0x1300U}) {
    list.push(p, 1);
  }
  list.push(0x1400, 2);
  REQUIRE(list.retag_newest(1, 2, 2) == 2);  // 0x1200 and 0x1300, below tag 2's own
  REQUIRE(list.stacked(1) == 2);
  REQUIRE(list.stacked(2) == 3);
  REQUIRE(list.pop(2) == std::optional<std::uintptr_t>{0x1400});
  REQUIRE(list.pop(2) == std::optional<std::uintptr_t>{0x1300});
  REQUIRE(list.pop(2) == std::optional<std::uintptr_t>{0x1200});
  REQUIRE(list.retag_newest(1, 1, 5) == 0);  // onto itself: nothing moves
  REQUIRE(list.retag_newest(1, 3, 0) == 0);
  REQUIRE(list.retag_newest(1, 3, 9) == 2);  // more than it has: all, to a new tag
  REQUIRE(list.stacked(1) == 0);
  REQUIRE(list.pop(3) == std::optional<std::uintptr_t>{0x1100});
  REQUIRE(list.pop(3) == std::optional<std::uintptr_t>{0x1000});
  REQUIRE(list.empty());
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list reports misuse and stays unchanged", "[detail]") {
  fixed_size_free_list list{24};  // not a power of two
  list.add_chunk(0x1000, 10);     // [0x1000, 0x10f0)
  auto const p = list.pop();
  REQUIRE(p == std::optional<std::uintptr_t>{0x1000});
  REQUIRE(list.owns(0x1018));
  REQUIRE_FALSE(list.owns(0x1001));
  REQUIRE_FALSE(list.owns(0x10f0));
  REQUIRE_FALSE(list.is_free(0x1000));
  REQUIRE(list.is_free(0x1018));

  require_invalid_argument([&] { list.push(0x1001); }, {"0x1001", "not the start", "24"});
  require_invalid_argument([&] { list.push(0x10f0); }, {"0x10f0", "no chunk"});
  require_invalid_argument([&] { list.push(0x0fff); }, {"0xfff", "no chunk"});
  require_invalid_argument([&] { list.push(0x1018); }, {"0x1018", "already free"});  // fresh
  require_invalid_argument([&] { static_cast<void>(list.is_free(0x1002)); }, {"0x1002"});
  list.push(*p);
  require_invalid_argument([&] { list.push(*p); }, {"0x1000", "double free"});
  REQUIRE(list.size() == 10);
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list releases the chunks whose blocks are all free", "[detail]") {
  fixed_size_free_list list{256};
  list.add_chunk(0x10000, 4);  // id 0: two blocks handed out, one pushed back
  list.add_chunk(0x20000, 2);  // id 1: one block handed out and pushed back: all free
  list.add_chunk(0x8000, 3);   // id 2, lowest address: never touched
  auto const a = list.pop();   // fresh blocks come from the most recently added chunk first
  REQUIRE(a == std::uintptr_t{0x8000});
  list.push(*a, 1);
  auto const b = list.pop(2);
  auto const c = list.pop(2);
  auto const d = list.pop(2);
  REQUIRE(b == std::uintptr_t{0x8100});
  REQUIRE(c == std::uintptr_t{0x8200});
  REQUIRE(d == std::uintptr_t{0x20000});
  list.push(*d, 1);
  list.push(*c, 1);  // 0x8000's chunk now holds b only
  REQUIRE(list.release_free_chunks() ==
          std::vector<std::pair<std::uintptr_t, std::size_t>>{{0x10000, 1024}, {0x20000, 512}});
  REQUIRE_NOTHROW(list.validate());
  CHECK(list.num_chunks() == 1);
  CHECK(list.capacity() == 3);
  CHECK(list.size() == 2);
  CHECK(list.stacked(1) == 2);
  CHECK_FALSE(list.owns(0x10000));
  CHECK_FALSE(list.owns(0x20000));
  CHECK(list.pop(1) == std::uintptr_t{0x8200});  // the stack keeps its order without 0x20000
  CHECK(list.pop(1) == std::uintptr_t{0x8000});
  CHECK_FALSE(list.pop(1).has_value());  // nothing fresh is left
  CHECK(list.release_free_chunks().empty());
  list.push(0x8000);
  list.push(0x8100);
  list.push(0x8200);
  CHECK(list.release_free_chunks() ==
        std::vector<std::pair<std::uintptr_t, std::size_t>>{{0x8000, 768}});
  CHECK(list.empty());
  CHECK(list.capacity() == 0);
  REQUIRE_NOTHROW(list.validate());
  list.add_chunk(0x10000, 2);  // the released range may be added again
  CHECK(list.pop() == std::uintptr_t{0x10000});
}

TEST_CASE("fixed_size_free_list clears", "[detail]") {
  fixed_size_free_list list{16};
  list.add_chunk(0x100, 3);
  static_cast<void>(list.pop());
  list.clear();
  REQUIRE(list.size() == 0);
  REQUIRE(list.capacity() == 0);
  REQUIRE(list.num_chunks() == 0);
  REQUIRE_FALSE(list.pop().has_value());
  list.add_chunk(0x100, 3);  // the old range is free to reuse
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{0x100});
  REQUIRE_NOTHROW(list.validate());
}

TEST_CASE("fixed_size_free_list adds a large chunk without per-block work", "[detail]") {
  fixed_size_free_list list{256};
  std::size_t const n = std::size_t{1} << 24U;  // 4 GiB of 256-byte blocks: a 2 MiB bitmap
  list.add_chunk(std::uintptr_t{1} << 40U, n);
  REQUIRE(list.size() == n);
  REQUIRE(list.pop() == std::optional<std::uintptr_t>{std::uintptr_t{1} << 40U});
  REQUIRE(list.size() == n - 1);
}

TEST_CASE("fixed_size_free_list agrees with a reference model on random sequences", "[detail]") {
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    SECTION("block size 256, seed " + std::to_string(seed)) { random_run{256, seed}.run(8000); }
  }
  SECTION("block size 24") { random_run{24, 11}.run(8000); }
  SECTION("block size 1") { random_run{1, 12}.run(8000); }
  SECTION("with tags (streams)") {
    for (std::uint64_t seed : {21U, 22U, 23U}) {
      random_run{256, seed, 3}.run(8000);
    }
  }
}
