/**
 * @file tlsf_free_list_fuzz.cpp
 * @brief libFuzzer target: decodes the input into a sequence of tlsf_free_list operations, runs
 * them against the list and a naive reference model, and aborts on any disagreement, failed
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
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::expect_invalid;
using rmm::fuzz::reader;

using rmm::mr::detail::tlsf_free_list;
using tag_t = tlsf_free_list::tag_t;
// (base, size, free, tag of a free block); an allocated block's tag is meaningless, reported 0.
using block_view = std::tuple<std::uintptr_t, std::size_t, bool, tag_t>;

// The tags the input picks from: few, so that blocks of one tag often meet as neighbours, and
// dense from 0, as the structure expects (each tag up to the highest costs an index).
constexpr tag_t fuzz_tags = 4;
// Queried too, though never passed to an operation: must read as empty (0), whether the list
// has an index for them or not.
constexpr std::array<tag_t, 3> unused_tags = {
    fuzz_tags, fuzz_tags + 1, std::numeric_limits<tag_t>::max()};

// Every block in an ordered map; fits by linear scan; merging of free neighbours of one tag
// within a region.
class model {
 public:
  struct blk {
    std::size_t size;
    bool free;
    std::size_t region;
    tag_t tag;  // owner of a free block
  };

  struct tag_stats {
    std::size_t bytes;
    std::size_t blocks;
    std::size_t largest;
  };

  void insert_region(std::size_t id, std::uintptr_t base, std::size_t size, tag_t tag) {
    regions[id]  = {base, size};
    blocks[base] = {size, true, id, tag};
  }

  /// Largest free block of any tag, or of @p tag only.
  [[nodiscard]] std::size_t largest(std::optional<tag_t> tag = std::nullopt) const {
    std::size_t best = 0;
    for (auto const& [b, k] : blocks) {
      if (k.free && (!tag || k.tag == *tag) && k.size > best) {
        best = k.size;
      }
    }
    return best;
  }

  /// Free bytes, free blocks and largest free block of each fuzz tag, in one pass.
  [[nodiscard]] std::array<tag_stats, fuzz_tags> per_tag() const {
    std::array<tag_stats, fuzz_tags> out{};
    for (auto const& [b, k] : blocks) {
      if (k.free) {
        tag_stats& s = out.at(k.tag);
        s.bytes += k.size;
        ++s.blocks;
        s.largest = std::max(s.largest, k.size);
      }
    }
    return out;
  }

  // The list allocated n bytes at p for tag: p must start a free block of that tag holding n
  // bytes. The front is allocated; the rest stays free with the same tag.
  bool allocate_at(std::uintptr_t p, std::size_t n, tag_t tag) {
    auto it = blocks.find(p);
    if (it == blocks.end() || !it->second.free || it->second.tag != tag || it->second.size < n) {
      return false;
    }
    blk const old = it->second;
    it->second    = {n, false, old.region, 0};
    if (old.size > n) {
      blocks[p + n] = {old.size - n, true, old.region, tag};
    }
    return true;
  }

  void deallocate(std::uintptr_t p, tag_t tag) {
    auto it         = blocks.find(p);
    it->second.free = true;
    it->second.tag  = tag;
    merge_around(it);
  }

  /// allocate_range(block, p, n) with granularity g is valid: aligned, non-zero, and inside the
  /// free block that starts at block.
  [[nodiscard]] bool range_valid(std::uintptr_t block,
                                 std::uintptr_t p,
                                 std::size_t n,
                                 std::size_t g) const {
    auto const it = blocks.find(block);
    if (n == 0 || n % g != 0 || p % g != 0 || it == blocks.end() || !it->second.free) {
      return false;
    }
    std::size_t const size = it->second.size;
    return p >= block && p - block < size && size - (p - block) >= n;
  }

  /// [p, p + n) becomes allocated; the pieces of the free block before and after it stay free
  /// with its tag.
  void allocate_range(std::uintptr_t block, std::uintptr_t p, std::size_t n) {
    auto const it          = blocks.find(block);
    blk const old          = it->second;
    std::size_t const head = p - block;
    std::size_t const tail = old.size - head - n;
    if (head != 0) {
      it->second.size = head;
    }
    blocks[p] = {n, false, old.region, 0};  // replaces the block itself when head == 0
    if (tail != 0) {
      blocks[p + n] = {tail, true, old.region, old.tag};
    }
  }

  /// first and second start physically adjacent allocated blocks of one region.
  [[nodiscard]] bool can_join(std::uintptr_t first, std::uintptr_t second) const {
    auto const it = blocks.find(first);
    if (it == blocks.end() || it->second.free) {
      return false;
    }
    auto const next = std::next(it);
    return next != blocks.end() && next->first == second && !next->second.free &&
           next->second.region == it->second.region && first + it->second.size == second;
  }

  /// Every (first, second) that can_join accepts.
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::uintptr_t>> adjacent_allocated() const {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
      auto const next = std::next(it);
      if (next != blocks.end() && can_join(it->first, next->first)) {
        out.emplace_back(it->first, next->first);
      }
    }
    return out;
  }

  void join_allocated(std::uintptr_t first, std::uintptr_t second) {
    auto const it = blocks.find(second);
    blocks.at(first).size += it->second.size;
    blocks.erase(it);
  }

  [[nodiscard]] bool is_allocated(std::uintptr_t p) const {
    auto const it = blocks.find(p);
    return it != blocks.end() && !it->second.free;
  }

  /// Sizes of the free blocks of tag right before and after the block at p, in its region.
  [[nodiscard]] std::pair<std::size_t, std::size_t> free_neighbours(std::uintptr_t p,
                                                                    tag_t tag) const {
    auto const it   = blocks.find(p);
    auto const size = [&](auto n) -> std::size_t {
      bool const counts =
          n->second.free && n->second.tag == tag && n->second.region == it->second.region;
      return counts ? n->second.size : 0;
    };
    auto const next = std::next(it);
    return {it == blocks.begin() ? 0 : size(std::prev(it)), next == blocks.end() ? 0 : size(next)};
  }

  [[nodiscard]] std::size_t allocated_blocks(std::size_t id) const {
    std::size_t n = 0;
    for (auto const& [b, k] : blocks) {
      n += !k.free && k.region == id ? 1U : 0U;
    }
    return n;
  }

  /// What retag_block(p, from, to) returns: the size of the free block of `from` at p, or 0
  /// when there is none or from == to.
  [[nodiscard]] std::size_t retag_block_size(std::uintptr_t p, tag_t from, tag_t to) const {
    auto const it = blocks.find(p);
    bool const moves =
        it != blocks.end() && it->second.free && it->second.tag == from && from != to;
    return moves ? it->second.size : 0;
  }

  /// Where retag_after(p, from, to) acts: the block after the allocated block at p in its
  /// region; 0 (no block starts there) if p starts no allocated block or it ends its region.
  [[nodiscard]] std::uintptr_t block_after(std::uintptr_t p) const {
    auto const it = blocks.find(p);
    if (it == blocks.end() || it->second.free) {
      return 0;
    }
    auto const next = std::next(it);
    return next != blocks.end() && next->second.region == it->second.region ? next->first : 0;
  }

  /// Relabels that one block and merges it with the neighbours that now share its tag.
  void retag_block(std::uintptr_t p, tag_t from, tag_t to) {
    if (retag_block_size(p, from, to) != 0) {
      auto const it  = blocks.find(p);
      it->second.tag = to;
      merge_around(it);
    }
  }

  // Relabels, then merges every pair of neighbours that may now merge: the result must be as
  // coalesced as if the blocks had been freed with tag `to` in the first place.
  void retag(tag_t from, tag_t to) {
    for (auto& [b, k] : blocks) {
      if (k.free && k.tag == from) {
        k.tag = to;
      }
    }
    for (auto it = blocks.begin(); it != blocks.end();) {
      auto const next = std::next(it);
      if (next != blocks.end() && joinable(*it, *next)) {
        it->second.size += next->second.size;
        blocks.erase(next);
      } else {
        it = next;
      }
    }
  }

  /// The last block of region id (the one ending at the region's end).
  [[nodiscard]] std::map<std::uintptr_t, blk>::const_iterator last_of(std::size_t id) const {
    auto const& r = regions.at(id);
    return std::prev(blocks.lower_bound(r.first + r.second));
  }

  /// Size and tag of region id's last block if it is free.
  [[nodiscard]] std::optional<std::pair<std::size_t, tag_t>> trailing(std::size_t id) const {
    auto const last = last_of(id);
    if (!last->second.free) {
      return std::nullopt;
    }
    return std::pair<std::size_t, tag_t>{last->second.size, last->second.tag};
  }

  /// Base of the next region in address order after region id, if any.
  [[nodiscard]] std::optional<std::uintptr_t> next_base(std::size_t id) const {
    std::uintptr_t const base = regions.at(id).first;
    std::optional<std::uintptr_t> next;
    for (auto const& [other, r] : regions) {
      if (r.first > base && (!next || r.first < *next)) {
        next = r.first;
      }
    }
    return next;
  }

  /// The free last block absorbs the growth if it has the tag; otherwise a new free block.
  void extend_region(std::size_t id, std::size_t bytes, tag_t tag) {
    auto& r         = regions.at(id);
    auto const last = blocks.find(last_of(id)->first);
    if (last->second.free && last->second.tag == tag) {
      last->second.size += bytes;
    } else {
      blocks[r.first + r.second] = {bytes, true, id, tag};
    }
    r.second += bytes;
  }

  /// The (free) last block is removed when the cut is at its start, shortened otherwise.
  void shrink_region(std::size_t id, std::size_t new_size) {
    auto& r                  = regions.at(id);
    auto const last          = blocks.find(last_of(id)->first);
    std::uintptr_t const cut = r.first + new_size;
    if (last->first == cut) {
      blocks.erase(last);
    } else {
      last->second.size = cut - last->first;
    }
    r.second = new_size;
  }

  /// No allocated block in the region; its free space may still be split between tags.
  [[nodiscard]] bool fully_free(std::size_t id) const {
    auto const& [base, size] = regions.at(id);
    for (auto it = blocks.find(base); it != blocks.end() && it->first < base + size; ++it) {
      if (!it->second.free) {
        return false;
      }
    }
    return true;
  }

  /// The region is one free block (so of one tag): only those go back upstream.
  [[nodiscard]] bool single_free_block(std::size_t id) const {
    auto const& r = regions.at(id);
    auto const& b = blocks.at(r.first);
    return b.free && b.size == r.second;
  }

  [[nodiscard]] std::vector<block_view> view() const {
    std::vector<block_view> out;
    for (auto const& [b, k] : blocks) {
      out.emplace_back(b, k.size, k.free, k.free ? k.tag : 0);
    }
    return out;
  }

  std::map<std::uintptr_t, blk> blocks;
  std::map<std::size_t, std::pair<std::uintptr_t, std::size_t>> regions;

 private:
  template <typename P>
  static bool joinable(P const& lo, P const& hi) {
    return lo.second.free && hi.second.free && lo.second.region == hi.second.region &&
           lo.second.tag == hi.second.tag && lo.first + lo.second.size == hi.first;
  }

  /// Merges the free block at it with its joinable neighbours.
  void merge_around(std::map<std::uintptr_t, blk>::iterator it) {
    auto const next = std::next(it);
    if (next != blocks.end() && joinable(*it, *next)) {
      it->second.size += next->second.size;
      blocks.erase(next);
    }
    if (it != blocks.begin()) {
      auto const prev = std::prev(it);
      if (joinable(*prev, *it)) {
        prev->second.size += it->second.size;
        blocks.erase(it);
      }
    }
  }
};

struct live {
  std::uintptr_t ptr;
  std::size_t size;
  bool marked{};  // allocate_marked; join_allocated keeps the first block's
};

class driver {
 public:
  driver(std::size_t g,
         tlsf_free_list::keyed_blocks keyed,
         rmm::mr::detail::address_map::erase_mode erase)
      : g_{g}, list_{g, erase, keyed} {}

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
  static tag_t read_tag(reader& in) { return static_cast<tag_t>(in.byte() % fuzz_tags); }

  void insert_region(reader& in) {
    std::size_t const units = 1 + (in.u16() >> (in.byte() % 12U));
    next_ += g_ * (in.byte() % 3U);  // 0: adjacent to the previous region
    tag_t const tag = read_tag(in);
    if (model_.regions.size() >= 64) {
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
    std::size_t const expected = from == to ? 0 : model_.per_tag().at(from).bytes;
    tags_.passed(from);
    tags_.passed(to);
    FUZZ_CHECK(list_.retag(from, to) == expected);
    if (expected != 0) {
      tags_.used(to);
    }
    model_.retag(from, to);
  }

  // A rejected call (deallocate, extend_region) leaves the list unchanged (check() compares the
  // rest with the model), including the set of tags: a bad call with a new tag must not create
  // its index.
  template <typename F>
  void expect_invalid_keeps_tags(F&& f) {
    std::size_t const tags = list_.num_tags();
    expect_invalid(std::forward<F>(f));
    FUZZ_CHECK(list_.num_tags() == tags);
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
      auto it      = model_.blocks.find(l.ptr);
      if (it != model_.blocks.end() && !it->second.free) {
        return;
      }  // reallocated since
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
      std::size_t const id = v % (model_.regions.size() + 2);
      if (model_.regions.count(id) == 0) {
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
    auto const n = static_cast<std::ptrdiff_t>(in.u16() % model_.regions.size());
    return std::next(model_.regions.begin(), n)->first;
  }

  // Any size the input gives, zero and unaligned included; the model says whether it must fit.
  void extend_region(reader& in) {
    if (model_.regions.empty()) {
      return;
    }
    std::size_t const id    = pick_region(in);
    std::uint8_t const mode = in.byte();
    std::size_t bytes       = g_ * (in.u16() >> (mode % 14U));
    if ((mode & 0x80U) != 0) {
      bytes += g_ / 2;  // unaligned unless g_ == 1
    }
    tag_t const tag          = read_tag(in);
    auto const [base, size]  = model_.regions.at(id);
    std::uintptr_t const end = base + size;
    auto const next          = model_.next_base(id);
    tags_.passed(tag);
    if (bytes == 0 || bytes % g_ != 0 || (next && *next < end + bytes)) {
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
    if (model_.regions.empty()) {
      return;
    }
    std::size_t const id     = pick_region(in);
    std::uint8_t const mode  = in.byte();
    std::size_t const v      = in.u16();
    auto const [base, size]  = model_.regions.at(id);
    auto const last          = model_.last_of(id);
    std::size_t const offset = last->first - base;  // where the last block starts
    std::size_t new_size     = 0;
    switch (mode % 4U) {
      case 0:
        new_size = offset;
        break;
      case 1:
        new_size = offset + g_ * (v % (last->second.size / g_));
        break;
      case 2:
        new_size = g_ * (v % (size / g_ + 2));
        break;
      default:
        new_size = v % (size + 1);
        break;
    }
    bool const valid = new_size != 0 && new_size < size && new_size % g_ == 0 &&
                       last->second.free && new_size >= offset;
    if (!valid) {
      expect_invalid([&] { list_.shrink_region(id, new_size); });
      return;
    }
    list_.shrink_region(id, new_size);
    model_.shrink_region(id, new_size);
  }

  // Only regions that are one free block go: a fully free region split between tags stays until
  // a retag merges it.
  void take_free_regions() {
    std::vector<std::pair<std::uintptr_t, std::size_t>> expected;
    for (auto it = model_.regions.begin(); it != model_.regions.end();) {
      if (model_.single_free_block(it->first)) {
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

  // Any block of the model (free or not), a sub-range at its start or end, all of it or any part,
  // then maybe spoilt: unaligned, zero or too long, before the block, or named by an address
  // that starts no free block.
  void allocate_range(reader& in) {
    if (model_.blocks.empty()) {
      return;
    }
    auto const it           = std::next(model_.blocks.begin(),
                              static_cast<std::ptrdiff_t>(in.u16() % model_.blocks.size()));
    std::uint8_t const mode = in.byte();
    std::size_t const units = it->second.size / g_;
    std::size_t len         = 1 + in.u16() % units;
    std::size_t off         = in.u16() % (units - len + 1);
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
    std::uintptr_t block = it->first;
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
    if (!model_.range_valid(block, p, n, g_)) {
      expect_invalid_keeps_tags([&] { list_.allocate_range(block, p, n); });
      return;
    }
    list_.allocate_range(block, p, n);
    model_.allocate_range(block, p, n);
    live_.push_back({p, n});
  }

  std::vector<live>::iterator live_at(std::uintptr_t p) {
    return std::find_if(live_.begin(), live_.end(), [p](live const& l) { return l.ptr == p; });
  }

  // Two adjacent holes, as the pool makes them: allocate_range twice, back to back, out of a free
  // block of at least two granules (the v-th such), if there is one.
  void make_adjacent_holes(std::size_t v) {
    std::vector<std::pair<std::uintptr_t, std::size_t>> candidates;
    for (auto const& [b, k] : model_.blocks) {
      if (k.free && k.size >= 2 * g_) {
        candidates.emplace_back(b, k.size);
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
    std::size_t const second = g_ * (1 + (v >> 12U) % (model_.blocks.at(q).size / g_));
    list_.allocate_range(q, q, second);
    model_.allocate_range(q, q, second);
    live_.push_back({q, second});
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
    if (!model_.can_join(first, second)) {
      expect_invalid_keeps_tags([&] { list_.join_allocated(first, second); });
      return;
    }
    list_.join_allocated(first, second);
    model_.join_allocated(first, second);
    auto const gone         = live_at(second);
    std::size_t const extra = gone->size;
    *gone                   = live_.back();
    live_.pop_back();
    live& joined = *live_at(first);
    joined.size += extra;
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
    } else if (!model_.blocks.empty()) {
      p = std::next(model_.blocks.begin(), static_cast<std::ptrdiff_t>(v % model_.blocks.size()))
              ->first;
      p += (mode & 4U) != 0 ? g_ : 0;
    }
    if (!model_.is_allocated(p)) {
      expect_invalid([&] { static_cast<void>(list_.free_neighbours(p, tag)); });
      return;
    }
    FUZZ_CHECK(list_.free_neighbours(p, tag) == model_.free_neighbours(p, tag));
  }

  void region_allocated_blocks(reader& in) {
    for (auto const& [id, r] : model_.regions) {
      FUZZ_CHECK(list_.region_allocated_blocks(id) == model_.allocated_blocks(id));
    }
    std::size_t const id = in.u16() % (model_.regions.size() + 2);
    if (model_.regions.count(id) == 0) {
      expect_invalid([&] { static_cast<void>(list_.region_allocated_blocks(id)); });
    }
  }

  // At any block of the model (or inside one), with any pair of tags: mostly its own as `from`.
  // With bit 2 of the mode, retag_after at that block (the block after it, if it is allocated).
  void retag_block(reader& in) {
    if (model_.blocks.empty()) {
      return;
    }
    std::uint8_t const mode    = in.byte();
    auto const it              = std::next(model_.blocks.begin(),
                              static_cast<std::ptrdiff_t>(in.u16() % model_.blocks.size()));
    bool const after           = (mode & 4U) != 0;
    std::uintptr_t const p     = it->first + ((mode & 1U) != 0 ? g_ : 0);
    std::uintptr_t const at    = after ? model_.block_after(p) : p;  // 0: no block starts there
    tag_t const own            = at != 0 && after ? model_.blocks.at(at).tag : it->second.tag;
    tag_t const from           = (mode & 2U) != 0 ? read_tag(in) : own;
    tag_t const to             = read_tag(in);
    std::size_t const expected = at != 0 ? model_.retag_block_size(at, from, to) : 0;
    // Returning 0 changes nothing: `to` must then not get an index (check() bounds num_tags).
    if (expected != 0) {
      tags_.passed(to);
    }
    FUZZ_CHECK((after ? list_.retag_after(p, from, to) : list_.retag_block(p, from, to)) ==
               expected);
    if (expected != 0) {
      tags_.used(to);
    }
    if (at != 0) {
      model_.retag_block(at, from, to);
    }
  }

  void query() {
    for (auto const& [id, r] : model_.regions) {
      FUZZ_CHECK(list_.region_fully_free(id) == model_.fully_free(id));
    }
    using region_view = std::tuple<std::size_t, std::uintptr_t, std::size_t, bool>;
    std::vector<region_view> got;
    list_.for_each_region([&got](std::size_t id, std::uintptr_t b, std::size_t s, bool f) {
      got.emplace_back(id, b, s, f);
    });
    std::vector<region_view> expected;
    for (auto const& [id, r] : model_.regions) {
      expected.emplace_back(id, r.first, r.second, model_.fully_free(id));
    }
    std::sort(expected.begin(), expected.end(), [](auto const& a, auto const& b) {
      return std::get<1>(a) < std::get<1>(b);
    });
    FUZZ_CHECK(got == expected);
  }

  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    std::vector<block_view> got;
    list_.for_each_block(
        [&got](std::uintptr_t b, std::size_t s, bool f, std::size_t, tlsf_free_list::tag_t t) {
          got.emplace_back(b, s, f, f ? t : 0);
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
    FUZZ_CHECK(list_.total_bytes() == free_bytes + used);
    FUZZ_CHECK(list_.num_free_blocks() == free_blocks);
    FUZZ_CHECK(list_.num_regions() == model_.regions.size());
    for (auto const& [id, r] : model_.regions) {
      FUZZ_CHECK(list_.region_base(id) == r.first);
      FUZZ_CHECK(list_.region_size(id) == r.second);
      FUZZ_CHECK(list_.trailing_free_block(id) == model_.trailing(id));
    }
    auto const stats = model_.per_tag();
    for (tag_t t = 0; t < fuzz_tags; ++t) {
      FUZZ_CHECK(list_.free_bytes(t) == stats.at(t).bytes);
      FUZZ_CHECK(list_.num_free_blocks(t) == stats.at(t).blocks);
      FUZZ_CHECK(list_.largest_free_block(t) == stats.at(t).largest);
    }
    for (tag_t const t : unused_tags) {
      FUZZ_CHECK(list_.free_bytes(t) == 0);
      FUZZ_CHECK(list_.num_free_blocks(t) == 0);
      FUZZ_CHECK(list_.largest_free_block(t) == 0);
    }
    tags_.check(list_.num_tags());  // never shrinks (clear() is not driven)
  }

  std::size_t g_;
  tlsf_free_list list_;
  model model_;
  std::vector<live> live_;
  std::vector<live> freed_;
  std::uintptr_t next_{0x10000};
  rmm::fuzz::tag_count_bounds tags_;
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
