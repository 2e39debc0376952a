/**
 * @file fixed_size_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of fixed_size_free_list operations,
 * runs them against the list and a naive reference model, and aborts on any disagreement,
 * failed validate() or unexpected exception.
 *
 * Input: byte 0 picks the block size; then each operation is an opcode byte and its operands.
 * A missing byte reads as zero, so every input is a valid program.
 *
 * Owner tags (streams): blocks are popped and pushed with a tag the input picks from a small set,
 * and retag moves whole stacks (retag_newest, the newest k blocks). The model mirrors the
 * documented rules: one LIFO stack per tag; pop(t) takes the top of t's stack, else the next
 * never-handed-out block of the most recently added chunk that still has one (fresh blocks belong
 * to no tag), else nothing, even when other tags hold blocks; retag(from, to) puts `from`'s stack,
 * in order, below `to`'s (retag_newest only its newest k blocks); release_free_chunks drops every
 * chunk whose blocks are all free, with its blocks.
 */
#include "../tests/mr/detail/fixed_size_free_list_model.hpp"
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;

using rmm::mr::detail::fixed_size_free_list;
using tag_t = fixed_size_free_list::tag_t;

// The tags the input picks from: few, so that one tag's stack often meets pops of that tag.
constexpr tag_t fuzz_tags = 4;
// Queried too, though never passed to an operation: their stacks must read as empty.
constexpr std::array<tag_t, 3> unused_tags = {
    fuzz_tags, fuzz_tags + 1, std::numeric_limits<tag_t>::max()};

class driver {
 public:
  explicit driver(std::size_t bs) : bs_{bs}, list_{bs} {}

  void step(reader& in) {
    switch (in.byte() % 10U) {
      case 0:
        add_chunk(in);
        break;
      case 1:
      case 2:
      case 3:
        pop(in);
        break;
      case 4:
      case 5:
        push(in);
        break;
      case 6:
        retag(in);
        break;
      case 7:
        query(in);
        break;
      case 8:
        release();
        break;
      default:
        misuse(in);
        break;
    }
    check();
  }

 private:
  struct chunk {
    std::size_t blocks;
    std::size_t next_fresh;
  };

  static tag_t read_tag(reader& in) { return static_cast<tag_t>(in.byte() % fuzz_tags); }

  [[nodiscard]] bool owns(std::uintptr_t p) const {
    auto it = chunks_.upper_bound(p);
    if (it == chunks_.begin()) {
      return false;
    }
    --it;
    return p - it->first < it->second.blocks * bs_ && (p - it->first) % bs_ == 0;
  }

  [[nodiscard]] bool overlaps(std::uintptr_t base, std::size_t n) const {
    for (auto const& [b, c] : chunks_) {
      if (b < base + n * bs_ && base < b + c.blocks * bs_) {
        return true;
      }
    }
    return false;
  }

  // The chunk a pop that finds its tag's stack empty takes from: the most recently added one
  // with never-handed-out blocks left; chunks_.end() if there is none.
  [[nodiscard]] std::map<std::uintptr_t, chunk>::iterator fresh_source() {
    for (auto it = added_.rbegin(); it != added_.rend(); ++it) {
      auto const c = chunks_.find(it->first);
      if (c->second.next_fresh < c->second.blocks) {
        return c;
      }
    }
    return chunks_.end();
  }

  std::uintptr_t any_address(reader& in) {
    std::size_t const v = (in.u16() << 8U) | in.byte();
    return base_ + v % (next_ - base_ + bs_);  // may be misaligned, in a gap or past the end
  }

  void add_chunk(reader& in) {
    std::size_t const n    = 1 + in.byte() % 64U;
    std::uint8_t const how = in.byte();
    std::uintptr_t base    = next_ + (how % 3U == 0 ? 0 : 1 + how % 7U);
    if (how >= 0xc0 && !chunks_.empty()) {
      base = any_address(in);
    }
    if (chunks_.size() >= 64) {
      return;
    }
    if (overlaps(base, n)) {
      expect_invalid([&] { list_.add_chunk(base, n); });
      return;
    }
    list_.add_chunk(base, n);
    chunks_[base] = {n, 0};
    added_.emplace_back(base, n * bs_);
    for (std::size_t i = 0; i < n; ++i) {
      free_.insert(base + i * bs_);
    }
    next_ = std::max(next_, base + n * bs_);
  }

  void pop(reader& in) {
    tag_t const t = read_tag(in);
    auto& stack   = stacks_.at(t);
    auto const c  = fresh_source();
    tags_.passed(t);
    auto const p = list_.pop(t);
    // Another tag's stacked blocks do not count: they are not ordered after this tag's work.
    FUZZ_CHECK(p.has_value() == (!stack.empty() || c != chunks_.end()));
    if (!p) {
      return;
    }
    if (!stack.empty()) {  // LIFO over the blocks pushed with this tag
      FUZZ_CHECK(*p == stack.back());
      stack.pop_back();
    } else {  // else the next never-used block of the newest chunk that has one
      FUZZ_CHECK(c->second.next_fresh < c->second.blocks);
      FUZZ_CHECK(*p == c->first + c->second.next_fresh * bs_);
      ++c->second.next_fresh;
    }
    FUZZ_CHECK(free_.erase(*p) == 1);
    held_.push_back(*p);
  }

  void push(reader& in) {
    if (held_.empty()) {
      return;
    }
    std::size_t const i    = in.byte() % 2U == 0 ? held_.size() - 1 : in.u16() % held_.size();
    tag_t const t          = read_tag(in);  // any tag: a block may be freed on another stream
    std::uintptr_t const p = held_[i];
    held_[i]               = held_.back();
    held_.pop_back();
    tags_.passed(t);
    list_.push(p, t);
    tags_.used(t);
    free_.insert(p);
    stacks_.at(t).push_back(p);
  }

  // Whole stacks (retag) or the newest k blocks (retag_newest, k from the input's next byte when
  // its low bit is set).
  void retag(reader& in) {
    tag_t const from           = read_tag(in);
    tag_t const to             = read_tag(in);
    std::uint8_t const k_byte  = in.byte();
    bool const newest          = (k_byte & 1U) != 0;
    std::size_t const k        = newest ? std::size_t{k_byte} >> 1U : all_blocks;
    auto& src                  = stacks_.at(from);
    auto& dst                  = stacks_.at(to);
    std::size_t const expected = from == to ? 0 : std::min(k, src.size());
    tags_.passed(from);
    tags_.passed(to);
    FUZZ_CHECK((newest ? list_.retag_newest(from, to, k) : list_.retag(from, to)) == expected);
    if (expected == 0) {
      return;
    }
    tags_.used(to);
    // `from`'s newest blocks go below `to`'s own, keeping their order: `to` pops its own blocks
    // first, then `from`'s, most recent first.
    auto const first = src.end() - static_cast<std::ptrdiff_t>(expected);
    dst.insert(dst.begin(), first, src.end());
    src.erase(first, src.end());
  }

  static constexpr std::size_t all_blocks = std::numeric_limits<std::size_t>::max();

  // release_free_chunks: every chunk whose blocks are all free goes, with its blocks, reported in
  // address order; the other chunks keep their order of addition and the stacks theirs.
  void release() {
    auto const expected = rmm::test::release_free_chunks(chunks_, free_, stacks_, bs_);
    for (auto const& [base, bytes] : expected) {
      added_.erase(std::find_if(
          added_.begin(), added_.end(), [b = base](auto const& a) { return a.first == b; }));
    }
    FUZZ_CHECK(list_.release_free_chunks() == expected);
  }

  void query(reader& in) {
    std::uintptr_t const p = any_address(in);
    FUZZ_CHECK(list_.owns(p) == owns(p));
    if (owns(p)) {
      FUZZ_CHECK(list_.is_free(p) == (free_.count(p) != 0));
    } else {
      expect_invalid([&] { static_cast<void>(list_.is_free(p)); });
    }
  }

  void misuse(reader& in) {
    std::uintptr_t p = any_address(in);
    if (in.byte() % 2U == 0 && !free_.empty()) {  // a free block: double free
      auto it = free_.lower_bound(p);
      p       = it == free_.end() ? *free_.begin() : *it;
    }
    tag_t const t = read_tag(in);
    if (owns(p) && free_.count(p) == 0) {
      return;
    }  // that push would be legitimate
    tags_.passed(t);
    // A rejected push leaves the list unchanged (check() compares the rest with the model),
    // including the set of tags: a bad push with a new tag must not create its stack.
    std::size_t const tags = list_.num_tags();
    expect_invalid([&] { list_.push(p, t); });
    FUZZ_CHECK(list_.num_tags() == tags);
  }

  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    std::size_t capacity = 0;
    std::size_t fresh    = 0;
    for (auto const& [b, c] : chunks_) {
      capacity += c.blocks;
      fresh += c.blocks - c.next_fresh;
    }
    FUZZ_CHECK(list_.size() == free_.size());
    FUZZ_CHECK(list_.empty() == free_.empty());
    FUZZ_CHECK(list_.capacity() == capacity);
    FUZZ_CHECK(list_.num_chunks() == chunks_.size());
    FUZZ_CHECK(list_.chunks() == added_);
    FUZZ_CHECK(list_.fresh() == fresh);
    std::size_t stacked = 0;
    for (tag_t t = 0; t < fuzz_tags; ++t) {
      FUZZ_CHECK(list_.stacked(t) == stacks_.at(t).size());
      stacked += stacks_.at(t).size();
    }
    FUZZ_CHECK(stacked + fresh == free_.size());  // the model itself: every free block once
    for (tag_t const t : unused_tags) {
      FUZZ_CHECK(list_.stacked(t) == 0);
    }
    tags_.check(list_.num_tags());  // never shrinks (clear() is not driven)
  }

  std::size_t bs_;
  fixed_size_free_list list_;
  std::uintptr_t base_{0x100000};
  std::uintptr_t next_{0x100000};
  std::map<std::uintptr_t, chunk> chunks_;
  std::vector<std::pair<std::uintptr_t, std::size_t>> added_;  // (base, bytes) in add order
  std::set<std::uintptr_t> free_;
  // Per tag: pushed and not popped since, bottom first (retag puts a moved stack below).
  std::array<std::vector<std::uintptr_t>, fuzz_tags> stacks_;
  std::vector<std::uintptr_t> held_;
  rmm::fuzz::tag_count_bounds tags_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  static constexpr std::size_t block_sizes[] = {1, 24, 256, 4096};
  driver d{block_sizes[in.byte() % 4U]};
  rmm::fuzz::abort_on_exception([&] { rmm::fuzz::run_steps(d, in, 4096); });
  return 0;
}
