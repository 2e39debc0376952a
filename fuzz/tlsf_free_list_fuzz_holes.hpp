// Part of tlsf_free_list_fuzz.cpp: its operations on holes (ranges the pool takes out of service)
// and per-block moves, opcodes 11-15: allocate_range, join_allocated, free_neighbours,
// region_allocated_blocks and retag_block (or retag_after). The arguments come from the input,
// valid or not; the reference model decides which calls must be refused.
#pragma once

#include "fuzz_input.hpp"
#include "tlsf_free_list_fuzz_state.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace rmm::fuzz::tlsf {

class hole_ops : protected state {
 public:
  using state::state;

 protected:
  // Any block of the model (free or not), a sub-range at its start or end, all of it or any part,
  // then maybe spoilt: unaligned, zero or too long, before the block, or named by an address
  // that starts no free block.
  void allocate_range(reader& in) {
    if (model_.num_blocks() == 0) {
      return;
    }
    auto const [base, size, is_free, tag] = model_.nth_block(in.u16() % model_.num_blocks());
    std::uint8_t const mode               = in.byte();
    std::size_t const units               = size / g_;
    std::size_t len                       = 1 + in.u16() % units;
    std::size_t off                       = in.u16() % (units - len + 1);
    switch (mode % 4U) {
      case 0:
        off = 0;
        break;
      case 1:
        off = units - len;
        break;
      case 2:
        off = 0;
        len = units;
        break;
      default:
        break;
    }
    std::uintptr_t block = base;
    std::uintptr_t p     = block + off * g_;
    std::size_t n        = len * g_;
    switch ((mode >> 2U) % 8U) {
      case 0:
        p += g_ / 2;  // unaligned unless g_ == 1
        break;
      case 1:
        n += g_ / 2;
        break;
      case 2:
        n = 0;
        break;
      case 3:
        n += g_ * (1 + (mode >> 5U));  // past the block's end
        break;
      case 4:
        p = block - g_ * (1 + (mode >> 5U));  // before it
        break;
      case 5:
        block += g_ * (1 + (mode >> 5U));  // inside it, or some later block
        break;
      default:
        break;
    }
    if (!model_.allocate_range_refusal(block, p, n, g_).empty()) {
      expect_invalid_keeps_tags([&] { list_.allocate_range(block, p, n); });
      return;
    }
    list_.allocate_range(block, p, n);
    model_.allocate_range(block, p, n);
    live_.push_back({p, n});
  }

  // Two blocks the model says are adjacent and allocated (made first if there are none), a live
  // block and the address right after it, a live block and another one, or the wrong order or
  // the same block twice; the model decides. The joined block replaces both among the live ones.
  void join_allocated(reader& in) {
    std::uint8_t const mode = in.byte();
    std::size_t const v     = in.u16();
    if (mode % 4U == 0 && model_.adjacent_allocated().empty()) {
      make_adjacent_holes(v);
    }
    if (live_.empty()) {
      return;
    }
    live const a          = live_[v % live_.size()];
    std::uintptr_t first  = a.ptr;
    std::uintptr_t second = a.ptr + a.size;
    switch (mode % 4U) {
      case 0: {
        auto const pairs = model_.adjacent_allocated();
        if (!pairs.empty()) {
          std::tie(first, second) = pairs[v % pairs.size()];
        }
        break;
      }
      case 1:
        second = live_[in.u16() % live_.size()].ptr;
        break;
      case 2:
        if ((mode & 4U) != 0) {
          second = first;
        } else {
          std::swap(first, second);  // maybe a live block after a, in the wrong order
        }
        break;
      default:
        break;
    }
    if (!model_.joinable_allocated(first, second)) {
      expect_invalid_keeps_tags([&] { list_.join_allocated(first, second); });
      return;
    }
    list_.join_allocated(first, second);
    model_.join_allocated(first, second);
    live const& joined = rmm::test::tlsf::join_live(live_, first, second);
    FUZZ_CHECK(list_.marked_size(first) == (joined.marked ? joined.size : 0));  // first's mark
  }

  // Mostly of a live block (of holes made first when there is none, as the pool asks what a
  // hole would merge with); else of any block or an address inside one (refused unless it
  // starts an allocated block). With a fuzz tag or an unused one.
  void free_neighbours(reader& in) {
    std::uint8_t const mode = in.byte();
    std::size_t const v     = in.u16();
    std::uint8_t const t    = in.byte();
    tag_t const tag  = t % 8U < fuzz_tags ? t % fuzz_tags : unused_tags.at(t % unused_tags.size());
    std::uintptr_t p = next_;
    if (mode % 4U == 1 && live_.empty()) {
      make_adjacent_holes(v);
    }
    if (mode % 4U != 0 && !live_.empty()) {
      p = live_[v % live_.size()].ptr;
    } else if (model_.num_blocks() != 0) {
      p = std::get<0>(model_.nth_block(v % model_.num_blocks()));
      p += (mode & 4U) != 0 ? g_ : 0;
    }
    if (!model_.is_allocated_block(p)) {
      expect_invalid([&] { static_cast<void>(list_.free_neighbours(p, tag)); });
      return;
    }
    FUZZ_CHECK(list_.free_neighbours(p, tag) == model_.free_neighbours(p, tag));
  }

  void region_allocated_blocks(reader& in) {
    for (auto const& [id, r] : model_.regions()) {
      FUZZ_CHECK(list_.region_allocated_blocks(id) == model_.allocated_blocks(id));
    }
    std::size_t const id = in.u16() % (model_.regions().size() + 2);
    if (model_.regions().count(id) == 0) {
      expect_invalid([&] { static_cast<void>(list_.region_allocated_blocks(id)); });
    }
  }

  // At any block of the model (or inside one), with any pair of tags: mostly its own as `from`.
  // With bit 2 of the mode, retag_after at that block (the block after it, if it is allocated).
  void retag_block(reader& in) {
    if (model_.num_blocks() == 0) {
      return;
    }
    std::uint8_t const mode               = in.byte();
    auto const [base, size, is_free, tag] = model_.nth_block(in.u16() % model_.num_blocks());
    bool const after                      = (mode & 4U) != 0;
    std::uintptr_t const p                = base + ((mode & 1U) != 0 ? g_ : 0);
    // Where it acts: none when retag_after's p starts no allocated block or it ends its region.
    std::optional<std::uintptr_t> const at = after ? model_.block_after(p) : p;
    tag_t const own            = at && after ? std::get<3>(model_.block_at(*at).value()) : tag;
    tag_t const from           = (mode & 2U) != 0 ? read_tag(in) : own;
    tag_t const to             = read_tag(in);
    std::size_t const expected = at ? model_.retag_block_size(*at, from, to) : 0;
    // Returning 0 changes nothing: `to` must then not get an index (check() bounds num_tags).
    if (expected != 0) {
      tags_.passed(to);
    }
    FUZZ_CHECK((after ? list_.retag_after(p, from, to) : list_.retag_block(p, from, to)) ==
               expected);
    if (expected != 0) {
      tags_.used(to);
    }
    if (at) {
      model_.retag_block(*at, from, to);
    }
  }

 private:
  // Two adjacent holes, as the pool makes them: allocate_range twice, back to back, out of a free
  // block of at least two granules (the v-th such), if there is one.
  void make_adjacent_holes(std::size_t v) {
    std::vector<std::pair<std::uintptr_t, std::size_t>> candidates;
    for (auto const& [b, s, f, t] : model_.blocks()) {
      if (f && s >= 2 * g_) {
        candidates.emplace_back(b, s);
      }
    }
    if (candidates.empty()) {
      return;
    }
    auto const [block, size] = candidates[v % candidates.size()];
    std::size_t const units  = size / g_;
    std::size_t const off    = (v >> 4U) % (units - 1);            // room for two after it
    std::size_t const first  = 1 + (v >> 8U) % (units - off - 1);  // leaves >= 1 for the second
    std::uintptr_t const p   = block + off * g_;
    list_.allocate_range(block, p, first * g_);
    model_.allocate_range(block, p, first * g_);
    live_.push_back({p, first * g_});
    // The rest of the block after p + first * g_ is now a free block of its own.
    std::uintptr_t const q   = p + first * g_;
    std::size_t const rest   = std::get<1>(model_.block_at(q).value());
    std::size_t const second = g_ * (1 + (v >> 12U) % (rest / g_));
    list_.allocate_range(q, q, second);
    model_.allocate_range(q, q, second);
    live_.push_back({q, second});
  }
};

}  // namespace rmm::fuzz::tlsf
