/**
 * @file tlsf_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of tlsf_free_list operations, runs
 * them against the list and a naive reference model, and aborts on any disagreement, failed
 * validate() or unexpected exception.
 *
 * Input: byte 0 picks the granularity; then each operation is an opcode byte and its operands.
 * A missing byte reads as zero, so every input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/tlsf_free_list.hpp>

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
#include <tuple>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::reader;

using rmm::mr::detail::tlsf_free_list;
using block_view = std::tuple<std::uintptr_t, std::size_t, bool>;

// Every block in an ordered map; fits by linear scan; neighbour merging within a region.
class model {
 public:
  struct blk {
    std::size_t size;
    bool free;
    std::size_t region;
  };

  void insert_region(std::size_t id, std::uintptr_t base, std::size_t size) {
    regions[id]  = {base, size};
    blocks[base] = {size, true, id};
  }

  [[nodiscard]] std::size_t largest() const {
    std::size_t best = 0;
    for (auto const& [b, k] : blocks) {
      if (k.free && k.size > best) {
        best = k.size;
      }
    }
    return best;
  }

  bool allocate_at(std::uintptr_t p, std::size_t n) {
    auto it = blocks.find(p);
    if (it == blocks.end() || !it->second.free || it->second.size < n) {
      return false;
    }
    blk const old = it->second;
    it->second    = {n, false, old.region};
    if (old.size > n) {
      blocks[p + n] = {old.size - n, true, old.region};
    }
    return true;
  }

  void deallocate(std::uintptr_t p) {
    auto it         = blocks.find(p);
    it->second.free = true;
    auto next       = std::next(it);
    if (next != blocks.end() && joinable(*it, *next)) {
      it->second.size += next->second.size;
      blocks.erase(next);
    }
    if (it != blocks.begin()) {
      auto prev = std::prev(it);
      if (joinable(*prev, *it)) {
        prev->second.size += it->second.size;
        blocks.erase(it);
      }
    }
  }

  [[nodiscard]] bool fully_free(std::size_t id) const {
    auto const& r = regions.at(id);
    auto const& b = blocks.at(r.first);
    return b.free && b.size == r.second;
  }

  [[nodiscard]] std::vector<block_view> view() const {
    std::vector<block_view> out;
    for (auto const& [b, k] : blocks) {
      out.emplace_back(b, k.size, k.free);
    }
    return out;
  }

  std::map<std::uintptr_t, blk> blocks;
  std::map<std::size_t, std::pair<std::uintptr_t, std::size_t>> regions;

 private:
  template <typename P>
  static bool joinable(P const& lo, P const& hi) {
    return lo.second.free && hi.second.free && lo.second.region == hi.second.region &&
           lo.first + lo.second.size == hi.first;
  }
};

struct live {
  std::uintptr_t ptr;
  std::size_t size;
};

class driver {
 public:
  explicit driver(std::size_t g) : g_{g}, list_{g} {}

  void step(reader& in) {
    switch (in.byte() % 8) {
      case 0:
        insert_region(in);
        break;
      case 1:
      case 2:
        allocate(in);
        break;
      case 3:
      case 4:
        deallocate(in);
        break;
      case 5:
        misuse(in);
        break;
      case 6:
        take_free_regions();
        break;
      default:
        query();
        break;
    }
    check();
  }

 private:
  void insert_region(reader& in) {
    std::size_t const units = 1 + (in.u16() >> (in.byte() % 12U));
    next_ += g_ * (in.byte() % 3U);  // 0: adjacent to the previous region
    if (model_.regions.size() >= 64) {
      return;
    }
    std::size_t const id = list_.insert_region(next_, units * g_);
    model_.insert_region(id, next_, units * g_);
    next_ += units * g_;
  }

  std::size_t choose_size(reader& in) {
    std::uint8_t const mode = in.byte();
    std::size_t const v     = in.u16();
    if ((mode & 1U) == 0 || model_.blocks.empty()) {
      return g_ * (1 + (v >> (mode % 14U)));
    }
    // Near an existing block's size: the request's own class and exact fits.
    auto it =
        std::next(model_.blocks.begin(), static_cast<std::ptrdiff_t>(v % model_.blocks.size()));
    std::size_t const units = it->second.size / g_;
    std::size_t const delta = (mode >> 1U) % 5U;
    return g_ * (units + delta > 2 ? units + delta - 2 : 1);
  }

  void allocate(reader& in) {
    std::size_t const n = choose_size(in);
    bool const fits     = model_.largest() >= n;
    FUZZ_CHECK((list_.largest_free_block() >= n) == fits);
    auto const p = list_.allocate(n);
    FUZZ_CHECK(p.has_value() == fits);
    if (!p) {
      return;
    }
    FUZZ_CHECK(model_.allocate_at(*p, n));
    live_.push_back({*p, n});
  }

  void deallocate(reader& in) {
    if (live_.empty()) {
      return;
    }
    std::size_t const i = in.u16() % live_.size();
    live const l        = live_[i];
    live_[i]            = live_.back();
    live_.pop_back();
    list_.deallocate(l.ptr, l.size);
    model_.deallocate(l.ptr);
    freed_.push_back(l);
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
    std::uint8_t const kind = in.byte() % 4U;
    std::size_t const v     = in.u16();
    if (kind == 0 && !live_.empty()) {
      live const l = live_[v % live_.size()];
      expect_invalid([&] { list_.deallocate(l.ptr, l.size + g_); });
    } else if (kind == 1 && !freed_.empty()) {
      live const l = freed_[v % freed_.size()];
      auto it      = model_.blocks.find(l.ptr);
      if (it != model_.blocks.end() && !it->second.free) {
        return;
      }  // reallocated since
      expect_invalid([&] { list_.deallocate(l.ptr, l.size); });
    } else if (kind == 2 && !live_.empty()) {
      live const l = live_[v % live_.size()];
      if (l.size == g_) {
        return;
      }
      expect_invalid([&] { list_.deallocate(l.ptr + g_, l.size - g_); });
    } else if (kind == 3) {
      expect_invalid([&] { list_.deallocate(next_ + g_ * (1 + v), g_); });
      expect_invalid([&] { static_cast<void>(list_.allocate(v % g_)); });  // 0 or unaligned
    }
  }

  void take_free_regions() {
    std::vector<std::pair<std::uintptr_t, std::size_t>> expected;
    for (auto it = model_.regions.begin(); it != model_.regions.end();) {
      if (model_.fully_free(it->first)) {
        expected.push_back(it->second);
        model_.blocks.erase(it->second.first);
        it = model_.regions.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(expected.begin(), expected.end());
    FUZZ_CHECK(list_.take_free_regions() == expected);
  }

  void query() {
    for (auto const& [id, r] : model_.regions) {
      FUZZ_CHECK(list_.region_fully_free(id) == model_.fully_free(id));
    }
  }

  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    std::vector<block_view> got;
    list_.for_each_block(
        [&got](std::uintptr_t b, std::size_t s, bool f, std::size_t, tlsf_free_list::tag_t) {
          got.emplace_back(b, s, f);
        });
    FUZZ_CHECK(got == model_.view());
    FUZZ_CHECK(list_.largest_free_block() == model_.largest());
    std::size_t free_bytes = 0, free_blocks = 0, used = 0;
    for (auto const& [b, k] : model_.blocks) {
      (k.free ? free_bytes : used) += k.size;
      free_blocks += k.free ? 1U : 0U;
    }
    FUZZ_CHECK(list_.free_bytes() == free_bytes);
    FUZZ_CHECK(list_.allocated_bytes() == used);
    FUZZ_CHECK(list_.num_free_blocks() == free_blocks);
    FUZZ_CHECK(list_.num_regions() == model_.regions.size());
  }

  std::size_t g_;
  tlsf_free_list list_;
  model model_;
  std::vector<live> live_;
  std::vector<live> freed_;
  std::uintptr_t next_{0x10000};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  static constexpr std::size_t granularities[] = {1, 16, 256, 4096};
  driver d{granularities[in.byte() % 4U]};
  rmm::fuzz::abort_on_exception([&] { rmm::fuzz::run_steps(d, in, 4096); });
  return 0;
}
