/**
 * @file tlsf_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of tlsf_free_list operations, runs
 * them against the list and the naive reference model the unit tests use
 * (tests/mr/detail/tlsf_free_list_reference_model.hpp), and aborts on any disagreement, failed
 * validate() or unexpected exception.
 *
 * Input: byte 0 picks the granularity; then each operation is an opcode byte and its operands.
 * A missing byte reads as zero, so every input is a valid program.
 *
 * Owner tags (streams): regions are inserted, blocks allocated and freed with a tag the input
 * picks from a small set, and retag moves whole tags. The model mirrors the documented rules:
 * allocate(size, t) takes only free blocks of t (and the remainder keeps t), a freed block takes
 * the tag it is freed with and merges only with free neighbours of that tag in its region, and
 * retag(from, to) relabels every free block of `from` and merges the neighbours that now share
 * a tag. Every per-tag query is compared with the model after each operation.
 *
 * Growing and trimming a region in place (a pool over a growable virtual range): extend_region
 * appends memory of a tag to a region (its free last block of that tag absorbs it, otherwise it
 * becomes a new free block), and shrink_region cuts the end of a free last block. The sizes come
 * from the input, valid or not: the model decides which calls must be refused (zero or unaligned
 * sizes, overlap with the next region, a cut that is not inside a free last block), and a refused
 * call must leave the list, and its set of tags, unchanged. region_base, region_size and
 * trailing_free_block are compared with the model after each operation.
 *
 * Holes (ranges the pool takes out of service) and per-block moves: allocate_range allocates a
 * chosen range out of a free block (the pieces before and after it stay free with its tag),
 * join_allocated joins two physically adjacent allocated blocks of one region (the joined block
 * is then freed with the sum; when there are none, it first takes two adjacent holes out of a
 * free block with allocate_range, as the pool does), free_neighbours is compared with the model's
 * free neighbours of a tag in the block's region, region_allocated_blocks with the model's count
 * for every region, and retag_block(ptr, from, to) moves one free block of `from` to `to`
 * (returning its size, or 0 and changing nothing, not even the set of tags). The arguments come
 * from the input, valid or not: the model decides which calls must be refused with
 * std::invalid_argument, and a refused call must leave the list unchanged.
 *
 * Opcodes (byte % 16): 0 insert_region, 1-2 allocate, 3-4 deallocate, 5 retag, 6 misuse,
 * 7 take_free_regions, 8 extend_region, 9 shrink_region, 10 region queries, 11 allocate_range,
 * 12 join_allocated, 13 free_neighbours, 14 region_allocated_blocks, 15 retag_block.
 * Allocations are marked (allocate_marked) at random; marked_size and deallocate must report
 * the mark, and a freed block must be unmarked.
 *
 * This file has the entry point and opcodes 0-10; tlsf_free_list_fuzz_holes.hpp has opcodes
 * 11-15, and tlsf_free_list_fuzz_state.hpp the state they drive and the comparison with the model
 * that follows every operation.
 */
#include "fuzz_input.hpp"
#include "tlsf_free_list_fuzz_holes.hpp"
#include "tlsf_free_list_fuzz_state.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;
using rmm::fuzz::tlsf::live;
using rmm::fuzz::tlsf::tag_t;
using rmm::mr::detail::tlsf_free_list;

class driver : rmm::fuzz::tlsf::hole_ops {
 public:
  using hole_ops::hole_ops;

  void step(reader& in) {
    switch (in.byte() % 16U) {
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
        retag(in);
        break;
      case 6:
        misuse(in);
        break;
      case 7:
        take_free_regions();
        break;
      case 8:
        extend_region(in);
        break;
      case 9:
        shrink_region(in);
        break;
      case 10:
        query();
        break;
      case 11:
        allocate_range(in);
        break;
      case 12:
        join_allocated(in);
        break;
      case 13:
        free_neighbours(in);
        break;
      case 14:
        region_allocated_blocks(in);
        break;
      default:
        retag_block(in);
        break;
    }
    check();
  }

 private:
  void insert_region(reader& in) {
    std::size_t const units = 1 + (in.u16() >> (in.byte() % 12U));
    next_ += g_ * (in.byte() % 3U);  // 0: adjacent to the previous region
    tag_t const tag = read_tag(in);
    if (model_.regions().size() >= 64) {
      return;
    }
    tags_.passed(tag);
    std::size_t const id = list_.insert_region(next_, units * g_, tag);
    tags_.used(tag);
    model_.insert_region(id, next_, units * g_, tag);
    next_ += units * g_;
  }

  std::size_t choose_size(reader& in) {
    std::uint8_t const mode = in.byte();
    std::size_t const v     = in.u16();
    if ((mode & 1U) == 0 || model_.num_blocks() == 0) {
      return g_ * (1 + (v >> (mode % 14U)));
    }
    // Near an existing block's size: the request's own class and exact fits.
    std::size_t const units = std::get<1>(model_.nth_block(v % model_.num_blocks())) / g_;
    std::size_t const delta = (mode >> 1U) % 5U;
    return g_ * (units + delta > 2 ? units + delta - 2 : 1);
  }

  void allocate(reader& in) {
    tag_t const tag     = read_tag(in);
    std::size_t const n = choose_size(in);
    // Only blocks of the tag count: a larger free block of another tag must not be taken.
    bool const fits = model_.largest(tag) >= n;
    FUZZ_CHECK((list_.largest_free_block(tag) >= n) == fits);
    FUZZ_CHECK((list_.largest_free_block() >= n) == (model_.largest() >= n));
    tags_.passed(tag);
    bool const mark = (in.byte() & 1U) != 0;
    auto const p    = mark ? list_.allocate_marked(n, tag) : list_.allocate(n, tag);
    FUZZ_CHECK(p.has_value() == fits);
    if (!p) {
      return;
    }
    tags_.used(tag);
    FUZZ_CHECK(model_.allocate_at(*p, n, tag));
    FUZZ_CHECK(list_.marked_size(*p) == (mark ? n : 0));
    live_.push_back({*p, n, mark});
  }

  void deallocate(reader& in) {
    if (live_.empty()) {
      return;
    }
    std::size_t const i = in.u16() % live_.size();
    tag_t const tag     = read_tag(in);  // any tag: a block may be freed on another stream
    live const l        = live_[i];
    live_[i]            = live_.back();
    live_.pop_back();
    tags_.passed(tag);
    bool was_marked = false;
    if (l.marked && tag == 0 && in.byte() % 2U == 0) {
      // The one-lookup free of a marked block (the arena's large blocks while it is alone): a
      // wrong size is refused and reported, the right one frees it as deallocate(ptr, size, 0).
      FUZZ_CHECK(list_.deallocate_marked(l.ptr, l.size + list_.granularity()) == l.size);
      was_marked = list_.deallocate_marked(l.ptr, l.size) == l.size;
    } else {
      if (!l.marked) {
        FUZZ_CHECK(list_.deallocate_marked(l.ptr, l.size) == 0);  // unmarked: nothing changes
      }
      was_marked = list_.deallocate(l.ptr, l.size, tag);
    }
    tags_.used(tag);
    FUZZ_CHECK(was_marked == l.marked);
    FUZZ_CHECK(list_.marked_size(l.ptr) == 0);  // freed: unmarked (validate: no free block is)
    model_.deallocate(l.ptr, tag);
    freed_.push_back(l);
  }

  void retag(reader& in) {
    tag_t const from = read_tag(in);
    tag_t const to   = read_tag(in);
    // Moves all of `from`'s free bytes (none when from == to), whatever their neighbours.
    std::size_t const expected = from == to ? 0 : model_.free_bytes(from);
    tags_.passed(from);
    tags_.passed(to);
    FUZZ_CHECK(list_.retag(from, to) == expected);
    if (expected != 0) {
      tags_.used(to);
    }
    model_.retag(from, to);
  }

  void misuse(reader& in) {
    std::uint8_t const kind = in.byte() % 4U;
    std::size_t const v     = in.u16();
    tag_t const tag         = read_tag(in);
    tags_.passed(tag);
    if (kind == 0 && !live_.empty()) {
      live const l = live_[v % live_.size()];
      expect_invalid_keeps_tags([&] { list_.deallocate(l.ptr, l.size + g_, tag); });
    } else if (kind == 1 && !freed_.empty()) {
      live const l = freed_[v % freed_.size()];
      if (model_.is_allocated_block(l.ptr)) {
        return;  // reallocated since
      }
      expect_invalid_keeps_tags([&] { list_.deallocate(l.ptr, l.size, tag); });
    } else if (kind == 2 && !live_.empty()) {
      live const l = live_[v % live_.size()];
      if (l.size == g_) {
        return;
      }
      expect_invalid_keeps_tags([&] { list_.deallocate(l.ptr + g_, l.size - g_, tag); });
    } else if (kind == 3) {
      expect_invalid_keeps_tags([&] { list_.deallocate(next_ + g_ * (1 + v), g_, tag); });
      expect_invalid([&] { static_cast<void>(list_.allocate(v % g_, tag)); });  // 0 or unaligned
      // An id that names no current region (never issued, or taken back and not reused).
      std::size_t const id = v % (model_.regions().size() + 2);
      if (model_.regions().count(id) == 0) {
        expect_invalid([&] { static_cast<void>(list_.region_fully_free(id)); });
        expect_invalid([&] { static_cast<void>(list_.region_base(id)); });
        expect_invalid([&] { static_cast<void>(list_.region_size(id)); });
        expect_invalid([&] { static_cast<void>(list_.trailing_free_block(id)); });
        expect_invalid_keeps_tags([&] { list_.extend_region(id, g_, tag); });
        expect_invalid([&] { list_.shrink_region(id, g_); });
      }
    }
  }

  std::size_t pick_region(reader& in) {
    auto const n = static_cast<std::ptrdiff_t>(in.u16() % model_.regions().size());
    return std::next(model_.regions().begin(), n)->first;
  }

  // Any size the input gives, zero and unaligned included; the model says whether it must fit.
  void extend_region(reader& in) {
    if (model_.regions().empty()) {
      return;
    }
    std::size_t const id    = pick_region(in);
    std::uint8_t const mode = in.byte();
    std::size_t bytes       = g_ * (in.u16() >> (mode % 14U));
    if ((mode & 0x80U) != 0) {
      bytes += g_ / 2;  // unaligned unless g_ == 1
    }
    tag_t const tag          = read_tag(in);
    auto const [base, size]  = model_.regions().at(id);
    std::uintptr_t const end = base + size;
    tags_.passed(tag);
    if (!model_.extend_region_refusal(id, bytes, g_).empty()) {
      expect_invalid_keeps_tags([&] { list_.extend_region(id, bytes, tag); });
      return;
    }
    list_.extend_region(id, bytes, tag);
    tags_.used(tag);
    model_.extend_region(id, bytes, tag);
    next_ = std::max(next_, end + bytes);
  }

  // Cuts at the start of the last block, inside it, or anywhere (valid or not).
  void shrink_region(reader& in) {
    if (model_.regions().empty()) {
      return;
    }
    std::size_t const id                              = pick_region(in);
    std::uint8_t const mode                           = in.byte();
    std::size_t const v                               = in.u16();
    auto const [base, size]                           = model_.regions().at(id);
    auto const [last, last_size, last_free, last_tag] = model_.last_of(id);
    std::size_t const offset                          = last - base;  // where the last block starts
    std::size_t new_size                              = 0;
    switch (mode % 4U) {
      case 0:
        new_size = offset;
        break;
      case 1:
        new_size = offset + g_ * (v % (last_size / g_));
        break;
      case 2:
        new_size = g_ * (v % (size / g_ + 2));
        break;
      default:
        new_size = v % (size + 1);
        break;
    }
    if (!model_.shrink_region_refusal(id, new_size, g_).empty()) {
      expect_invalid([&] { list_.shrink_region(id, new_size); });
      return;
    }
    list_.shrink_region(id, new_size);
    model_.shrink_region(id, new_size);
  }

  // Only regions that are one free block go: a fully free region split between tags stays until
  // a retag merges it.
  void take_free_regions() { FUZZ_CHECK(list_.take_free_regions() == model_.take_free_regions()); }

  void query() {
    for (auto const& [id, r] : model_.regions()) {
      FUZZ_CHECK(list_.region_fully_free(id) == model_.region_fully_free(id));
    }
    using region_view = std::tuple<std::size_t, std::uintptr_t, std::size_t, bool>;
    std::vector<region_view> got;
    list_.for_each_region([&got](std::size_t id, std::uintptr_t b, std::size_t s, bool f) {
      got.emplace_back(id, b, s, f);
    });
    std::vector<region_view> expected;
    for (auto const& [id, r] : model_.regions()) {
      expected.emplace_back(id, r.first, r.second, model_.region_fully_free(id));
    }
    std::sort(expected.begin(), expected.end(), [](auto const& a, auto const& b) {
      return std::get<1>(a) < std::get<1>(b);
    });
    FUZZ_CHECK(got == expected);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  static constexpr std::size_t granularities[] = {1, 16, 256, 4096};
  std::uint8_t const first                     = in.byte();
  // Bit 2: the global arena's keying (allocated blocks only), which looks up free blocks by walk.
  auto const keyed = (first & 4U) != 0 ? tlsf_free_list::keyed_blocks::allocated
                                       : tlsf_free_list::keyed_blocks::all;
  // Bit 3: erasing by tombstone (the global arena's map) instead of by backward shift.
  auto const erase = (first & 8U) != 0 ? rmm::mr::detail::address_map::erase_mode::tombstone
                                       : rmm::mr::detail::address_map::erase_mode::shift;
  driver d{granularities[first % 4U], keyed, erase};
  rmm::fuzz::abort_on_exception([&] { rmm::fuzz::run_steps(d, in, 4096); });
  return 0;
}
