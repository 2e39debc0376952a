/**
 * @file fixed_size_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of fixed_size_free_list operations,
 * runs them against the list and a naive reference model, and aborts on any disagreement,
 * failed validate() or unexpected exception.
 *
 * Input: byte 0 picks the block size; then each operation is an opcode byte and its operands.
 * A missing byte reads as zero, so every input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/fixed_size_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace {

using rmm::fuzz::reader;

using rmm::mr::detail::fixed_size_free_list;

class driver {
 public:
  explicit driver(std::size_t bs) : bs_{bs}, list_{bs} {}

  void step(reader& in) {
    switch (in.byte() % 8U) {
      case 0:
        add_chunk(in);
        break;
      case 1:
      case 2:
      case 3:
        pop();
        break;
      case 4:
      case 5:
        push(in);
        break;
      case 6:
        query(in);
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
    for (std::size_t i = 0; i < n; ++i) {
      free_.insert(base + i * bs_);
    }
    next_ = std::max(next_, base + n * bs_);
  }

  void pop() {
    auto const p = list_.pop();
    FUZZ_CHECK(p.has_value() == !free_.empty());
    if (!p) {
      return;
    }
    if (!stack_.empty()) {  // LIFO over pushed blocks
      FUZZ_CHECK(*p == stack_.back());
      stack_.pop_back();
    } else {  // else the next never-used block of its chunk
      auto it = chunks_.upper_bound(*p);
      FUZZ_CHECK(it != chunks_.begin());
      --it;
      FUZZ_CHECK(it->second.next_fresh < it->second.blocks);
      FUZZ_CHECK(*p == it->first + it->second.next_fresh * bs_);
      ++it->second.next_fresh;
    }
    FUZZ_CHECK(free_.erase(*p) == 1);
    held_.push_back(*p);
  }

  void push(reader& in) {
    if (held_.empty()) {
      return;
    }
    std::size_t const i    = in.byte() % 2U == 0 ? held_.size() - 1 : in.u16() % held_.size();
    std::uintptr_t const p = held_[i];
    held_[i]               = held_.back();
    held_.pop_back();
    list_.push(p);
    free_.insert(p);
    stack_.push_back(p);
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

  template <typename F>
  static void expect_invalid(F&& f) {
    bool threw = false;
    try {
      f();
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    FUZZ_CHECK(threw);
  }

  void misuse(reader& in) {
    std::uintptr_t p = any_address(in);
    if (in.byte() % 2U == 0 && !free_.empty()) {  // a free block: double free
      auto it = free_.lower_bound(p);
      p       = it == free_.end() ? *free_.begin() : *it;
    }
    if (owns(p) && free_.count(p) == 0) {
      return;
    }  // that push would be legitimate
    expect_invalid([&] { list_.push(p); });
  }

  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    std::size_t capacity = 0;
    for (auto const& [b, c] : chunks_) {
      capacity += c.blocks;
    }
    FUZZ_CHECK(list_.size() == free_.size());
    FUZZ_CHECK(list_.capacity() == capacity);
    FUZZ_CHECK(list_.num_chunks() == chunks_.size());
  }

  std::size_t bs_;
  fixed_size_free_list list_;
  std::uintptr_t base_{0x100000};
  std::uintptr_t next_{0x100000};
  std::map<std::uintptr_t, chunk> chunks_;
  std::set<std::uintptr_t> free_;
  std::vector<std::uintptr_t> stack_;  // pushed and not popped since, in push order
  std::vector<std::uintptr_t> held_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  static constexpr std::size_t block_sizes[] = {1, 24, 256, 4096};
  driver d{block_sizes[in.byte() % 4U]};
  rmm::fuzz::abort_on_exception([&] { rmm::fuzz::run_steps(d, in, 4096); });
  return 0;
}
