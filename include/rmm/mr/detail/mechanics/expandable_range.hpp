/**
 * @file expandable_range.hpp
 * @brief The growable range of an expandable pool (pool_memory_resource over a
 * virtual_memory_resource): growing it in place, trimming its free end, and the holes, ranges of
 * free memory in its middle whose physical memory is unmapped. See docs/expandable_pool.md.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief The pool's range that grows in place, and its holes. Not thread-safe: every member is
 * called with the pool's mutex held.
 *
 * A hole is an allocated block of the free list (so nobody is handed it) whose pieces of physical
 * memory are unmapped. Holes are made only where the device is idle (after the pool's device
 * synchronisation: its last resort before out-of-memory, and `release()`), so no stream can still
 * use them; they are mapped again, and freed into the list, when a request needs them.
 */
class expandable_range {
  struct span {
    std::uintptr_t base;
    std::size_t size;
    std::uintptr_t range;  // the virtual_memory_resource allocation it lies in
  };

 public:
  using tag_t     = tlsf_free_list::tag_t;
  using region_id = tlsf_free_list::region_id;

  explicit expandable_range(virtual_memory_resource* vmm) noexcept : vmm_{vmm} {}

  /// @brief The upstream that can grow a range in place, or null.
  [[nodiscard]] virtual_memory_resource* upstream() const noexcept { return vmm_; }
  /// @brief The range that grows, if any.
  [[nodiscard]] std::optional<region_id> const& region() const noexcept { return region_; }
  /// @brief The newest range grows from now on (older ones and their holes stay as they are).
  void adopt(region_id id) noexcept { region_ = id; }
  /// @brief Bytes of the pool's ranges not backed by physical memory (the holes).
  [[nodiscard]] std::size_t unmapped() const noexcept { return hole_bytes_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return vmm_->granularity(); }

  /**
   * @brief Makes room for a request of @p size bytes for @p tag by mapping at most @p room bytes:
   * a hole that, freed, joins free neighbours of @p tag into a block of @p size (when it maps no
   * more than extending would), else the granules still missing after the range's free tail.
   * False (with @p error saying why) if neither fits in @p room or the device refuses.
   */
  bool grow(tlsf_free_list& list,
            std::size_t size,
            cuda::stream_ref stream,
            tag_t tag,
            std::size_t room,
            std::string& error) {
    if (!region_) {
      return false;
    }
    std::size_t const by = missing_bytes(list, size, tag);
    if (refill(list, size, tag, by > room ? room : by, error)) {
      return true;
    }
    if (by > room) {
      error = "growing the range by " + std::to_string(by) + " bytes would exceed the maximum";
      return false;
    }
    adopt_unowned_tail(list, tag);
    return extend(list, by, stream, tag, error);
  }

  /**
   * @brief The granules that extending the range for a request of @p size bytes for @p tag
   * would map: what the range's free tail (if @p tag may use it) lacks. At most what mapping a
   * hole back instead would cost. Precondition: the range exists.
   */
  [[nodiscard]] std::size_t missing_bytes(tlsf_free_list const& list,
                                          std::size_t size,
                                          tag_t tag) const {
    auto const tail        = list.trailing_free_block(*region_);
    std::size_t const have = tail && (tail->second == tag || tail->second == 0) ? tail->first : 0;
    return align_up(size - std::min(size, have), granularity());
  }

  /**
   * @brief What punch_holes() would unmap now: the runs of whole pieces of physical memory inside
   * the free blocks of the pool's ranges (the growing range's free tail excepted), found in one
   * walk of the list, O(blocks). punch_holes(list, plan, stream) then unmaps them without walking
   * again.
   */
  struct hole_plan {
    struct block {
      span where;
      std::vector<std::pair<std::size_t, std::size_t>> runs;  // decommittable()'s (offset, bytes)
    };
    std::vector<block> blocks;
    std::size_t bytes{};  // what the runs hold
    // The list's free blocks when the plan was made: while both are unchanged (and the list has
    // only gained or merged free blocks since), its free blocks are the same.
    std::size_t list_free_blocks{};
    std::size_t list_free_bytes{};
  };

  /// @brief The plan of what punch_holes() would unmap now (see hole_plan).
  [[nodiscard]] hole_plan plan_holes(tlsf_free_list const& list) const {
    hole_plan plan{{}, 0, list.num_free_blocks(), list.free_bytes()};
    for (span const& b : middle_free_blocks(list)) {
      auto runs = decommittable(b);
      if (runs.empty()) {
        continue;
      }
      for (auto const& run : runs) {
        plan.bytes += run.second;
      }
      plan.blocks.push_back({b, std::move(runs)});
    }
    return plan;
  }

  /**
   * @brief Unmaps the whole pieces of physical memory inside every free block of the pools'
   * ranges but the growing range's free tail (which a trim gives back instead), making them
   * holes. Call only when no stream can still use free blocks (after a device synchronisation).
   * @return Bytes unmapped.
   */
  std::size_t punch_holes(tlsf_free_list& list, cuda::stream_ref stream) noexcept {
    std::size_t unmapped = 0;
    try {
      for (span const& b : middle_free_blocks(list)) {
        unmapped += punch_block(list, b, decommittable(b), stream);
      }
    } catch (std::exception const& e) {
      log_punch_error(e);
    }
    return unmapped;
  }

  /**
   * @brief punch_holes(list, stream) with the runs of @p plan, made by plan_holes(@p list) under
   * the same lock. Between the two the list may only have gained free blocks or merged them (as
   * a device synchronisation that returns batches and retags does): if its count of free blocks
   * or its free bytes changed, the runs may have too, and the list is walked again.
   * @return Bytes unmapped.
   */
  std::size_t punch_holes(tlsf_free_list& list,
                          hole_plan const& plan,
                          cuda::stream_ref stream) noexcept {
    if (list.num_free_blocks() != plan.list_free_blocks ||
        list.free_bytes() != plan.list_free_bytes) {
      return punch_holes(list, stream);
    }
    std::size_t unmapped = 0;
    try {
      for (hole_plan::block const& b : plan.blocks) {
        unmapped += punch_block(list, b.where, b.runs, stream);
      }
    } catch (std::exception const& e) {
      log_punch_error(e);
    }
    return unmapped;
  }

  /**
   * @brief Unmaps whole granules of the growing range's free tail (if its tag is @p tag or no
   * stream's), at most @p excess bytes, after the work queued on @p stream. Holes just before
   * the tail go with it when the cut reaches them, so the range never ends in a hole.
   */
  void trim(tlsf_free_list& list, tag_t tag, cuda::stream_ref stream, std::size_t excess) {
    if (!region_) {
      return;
    }
    auto const tail = list.trailing_free_block(*region_);
    if (!tail || (tail->second != tag && tail->second != 0)) {
      return;
    }
    std::size_t const g       = granularity();
    std::uintptr_t const base = list.region_base(*region_);
    std::size_t const bytes   = list.region_size(*region_);
    std::size_t const live    = bytes - tail->first;
    std::size_t keep =
        std::max({g, align_up(live, g), bytes - std::min(bytes, align_down(excess, g))});
    if (keep >= bytes) {
      return;
    }
    // Never cut at or into a hole: the range keeps one mapped granule after its last hole, so
    // that it ends in mapped memory (the piece at the mapped end is never decommitted).
    auto const after = holes_.lower_bound(base + bytes);
    if (after != holes_.begin()) {
      auto const last = std::prev(after);
      if (last->first >= base) {
        keep = std::max(keep, last->first + last->second.bytes - base + g);
      }
    }
    if (keep >= bytes) {
      return;
    }
    void* const ptr = reinterpret_cast<void*>(base);
    vmm_->try_resize(ptr, bytes, keep, stream);
    // Pieces of physical memory that straddle `keep` stay mapped: the range keeps them.
    std::size_t const kept = std::min(bytes, vmm_->mapped_size(ptr));
    if (kept != keep) {
      vmm_->try_resize(ptr, keep, kept, stream);
    }
    if (kept < bytes) {
      list.shrink_region(*region_, kept);
    }
  }

  /**
   * @brief Before fully free ranges are given back: a range whose only allocated blocks are
   * holes, and whose free blocks all carry one tag, gets its holes freed into the list, so that
   * it becomes one free block (and the caller can give it back whole).
   */
  void free_holes_of_idle_ranges(tlsf_free_list& list) {
    if (holes_.empty()) {
      return;
    }
    struct candidate {
      region_id id;
      std::uintptr_t base;
      std::uintptr_t end;
    };
    std::vector<candidate> ranges;
    list.for_each_region([&](region_id id, std::uintptr_t base, std::size_t size, bool) {
      ranges.push_back({id, base, base + size});
    });
    for (candidate const& r : ranges) {
      auto const first = holes_.lower_bound(r.base);
      auto const last  = holes_.lower_bound(r.end);
      auto const count = static_cast<std::size_t>(std::distance(first, last));
      if (count == 0 || list.region_allocated_blocks(r.id) != count) {
        continue;
      }
      std::optional<tag_t> tag;
      bool one_tag = true;
      list.for_each_block([&](std::uintptr_t, std::size_t, bool is_free, region_id id, tag_t t) {
        if (id == r.id && is_free) {
          one_tag = one_tag && (!tag || *tag == t);
          tag     = t;
        }
      });
      if (!one_tag) {
        continue;
      }
      for (auto it = first; it != last;) {
        list.deallocate(it->first, it->second.bytes, tag.value_or(0));
        hole_bytes_ -= it->second.bytes;
        it = holes_.erase(it);
      }
    }
  }

  /// @brief Forgets a range given back upstream.
  void forget(region_id id) noexcept {
    if (region_ == id) {
      region_.reset();
    }
  }

 private:
  struct hole {
    std::size_t bytes;
    std::uintptr_t range;  // base of the virtual_memory_resource allocation it lies in
  };
  using hole_iterator = std::map<std::uintptr_t, hole>::const_iterator;

  // A free tail owned by no stream (after a device synchronisation) is usable by any stream:
  // it becomes @p tag's, so that the memory mapped after it merges with it.
  void adopt_unowned_tail(tlsf_free_list& list, tag_t tag) {
    auto const tail = list.trailing_free_block(*region_);
    if (tail && tail->second == 0 && tag != 0) {
      std::uintptr_t const end = list.region_base(*region_) + list.region_size(*region_);
      list.retag_block(end - tail->first, 0, tag);
    }
  }

  // Every free block of the pools' ranges but the growing range's free tail (which a trim gives
  // back instead): where holes can be made.
  [[nodiscard]] std::vector<span> middle_free_blocks(tlsf_free_list const& list) const {
    std::vector<span> blocks;
    list.for_each_block([&](std::uintptr_t b, std::size_t s, bool is_free, region_id id, tag_t) {
      std::uintptr_t const base = list.region_base(id);  // the allocation's base
      bool const growing_tail   = region_ && id == *region_ && b + s == base + list.region_size(id);
      if (is_free && !growing_tail) {
        blocks.push_back({b, s, base});
      }
    });
    return blocks;
  }

  bool extend(tlsf_free_list& list,
              std::size_t by,
              cuda::stream_ref stream,
              tag_t tag,
              std::string& error) {
    std::uintptr_t const base = list.region_base(*region_);
    std::size_t const bytes   = list.region_size(*region_);
    void* const ptr           = reinterpret_cast<void*>(base);
    try {
      if (!vmm_->try_resize(ptr, bytes, bytes + by, stream)) {
        error = "the virtual range at " + format_hex(base) + " (" + std::to_string(bytes) +
                " bytes) could not grow by " + std::to_string(by) + " bytes";
        return false;
      }
      try {
        list.extend_region(*region_, by, tag);
      } catch (...) {
        vmm_->try_resize(ptr, bytes + by, bytes, stream);
        throw;
      }
      return true;
    } catch (std::exception const& e) {
      error = "growing the virtual range failed: " + rmm::detail::upstream_failure(e);
      return false;
    }
  }

  // The smallest hole (of at most `limit` bytes) that, with its free neighbours of `tag`, makes a
  // block of `size`; holes_.end() if none.
  [[nodiscard]] hole_iterator find_refill(tlsf_free_list const& list,
                                          std::size_t size,
                                          tag_t tag,
                                          std::size_t limit) const {
    auto best = holes_.end();
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second.bytes > limit ||
          (best != holes_.end() && it->second.bytes >= best->second.bytes)) {
        continue;
      }
      auto const [before, after] = list.free_neighbours(it->first, tag);
      if (before + it->second.bytes + after >= size) {
        best = it;
      }
    }
    return best;
  }

  // Maps and frees the hole find_refill() chooses.
  bool refill(
      tlsf_free_list& list, std::size_t size, tag_t tag, std::size_t limit, std::string& error) {
    auto const best = find_refill(list, size, tag, limit);
    if (best == holes_.end()) {
      return false;
    }
    auto const [at, h] = *best;
    if (!vmm_->commit(reinterpret_cast<void*>(h.range), at - h.range, h.bytes)) {
      error = "mapping a hole of " + std::to_string(h.bytes) + " bytes at " + format_hex(at) +
              " failed";
      return false;
    }
    list.deallocate(at, h.bytes, tag);
    hole_bytes_ -= h.bytes;
    holes_.erase(best);
    return true;
  }

  // The runs of whole pieces inside the free block `b` that can be unmapped.
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> decommittable(
      span const& b) const {
    return vmm_->decommittable(reinterpret_cast<void*>(b.range), b.base - b.range, b.size);
  }

  // Unmaps `runs`, decommittable(b)'s, inside the free block `b`.
  std::size_t punch_block(tlsf_free_list& list,
                          span const& b,
                          std::vector<std::pair<std::size_t, std::size_t>> const& runs,
                          cuda::stream_ref stream) {
    std::uintptr_t const range = b.range;
    void* const ptr            = reinterpret_cast<void*>(range);
    std::size_t unmapped       = 0;
    std::uintptr_t block       = b.base;  // the free block holding what is left of `b`
    for (auto const& [offset, bytes] : runs) {
      std::uintptr_t const at   = range + offset;
      auto const [it, inserted] = holes_.emplace(at, hole{bytes, range});
      try {
        list.allocate_range(block, at, bytes);
      } catch (...) {
        holes_.erase(it);
        throw;
      }
      vmm_->decommit(ptr, offset, bytes, stream);  // cannot fail: decommittable's own runs
      hole_bytes_ += bytes;
      unmapped += bytes;
      block = at + bytes;
      join_neighbours(list, it);
      (void)inserted;
    }
    return unmapped;
  }

  static void log_punch_error(std::exception const& e) {
    rmm::log(level_enum::error,
             std::string{"pool_memory_resource: unmapping free memory stopped: "} + e.what());
  }

  // Joins the hole at `it` with holes right before and after it in the same range, so that a
  // request that needs them all can map them back as one block.
  void join_neighbours(tlsf_free_list& list, std::map<std::uintptr_t, hole>::iterator it) {
    auto next = std::next(it);
    if (next != holes_.end() && next->second.range == it->second.range &&
        it->first + it->second.bytes == next->first) {
      list.join_allocated(it->first, next->first);
      it->second.bytes += next->second.bytes;
      holes_.erase(next);
    }
    if (it != holes_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.range == it->second.range && prev->first + prev->second.bytes == it->first) {
        list.join_allocated(prev->first, it->first);
        prev->second.bytes += it->second.bytes;
        holes_.erase(it);
      }
    }
  }

  virtual_memory_resource* vmm_;
  std::optional<region_id> region_;
  std::map<std::uintptr_t, hole> holes_;  // by address
  std::size_t hole_bytes_{};
};

}  // namespace rmm::mr::detail
