/**
 * @file pool_shard.hpp
 * @brief One part of pool_memory_resource: the stream-ordered core over a TLSF free list. The
 * root shard owns the upstream and everything the pool holds; child shards, made once several
 * threads contend for the root, serve their streams from pieces borrowed from the root.
 * Design note: pool_shards.md.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/piece_map.hpp>
#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>
#include <rmm/mr/detail/mechanics/expandable_range.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>
#include <rmm/mr/memory_snapshot.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief A stream-ordered TLSF suballocator: the whole of a pool_memory_resource until its threads
 * contend, then its root (see pool_memory_resource_impl). Not for direct use.
 *
 * Thread-safe (the core's lock). Lock order: a child's lock may be held while taking the root's
 * (borrowing, giving pieces back); the root never takes a child's.
 */
class pool_shard : public stream_ordered_core<pool_shard> {
  friend class stream_ordered_core<pool_shard>;
  static constexpr char const* name = "pool_memory_resource";

 public:
  using upstream_t = cuda::mr::any_resource<cuda::mr::device_accessible>;
  using owner_t    = piece_map::owner_t;

  /**
   * @brief The root shard: owns the upstream and every byte the pool holds. Arguments and
   * errors as pool_memory_resource's constructor.
   */
  pool_shard(upstream_t upstream,
             std::size_t initial_pool_size,
             std::optional<std::size_t> maximum_pool_size)
      : upstream_{std::move(upstream)},
        range_{cuda::mr::resource_cast<virtual_memory_resource>(&*upstream_)},
        maximum_{maximum_pool_size.value_or(std::numeric_limits<std::size_t>::max())},
        free_list_{make_free_list(range_.upstream() != nullptr)} {
    RMM_EXPECTS(initial_pool_size % CUDA_ALLOCATION_ALIGNMENT == 0,
                std::string{name} + ": initial_pool_size " + std::to_string(initial_pool_size) +
                    " is not a multiple of " + std::to_string(CUDA_ALLOCATION_ALIGNMENT) +
                    " bytes");
    if (maximum_pool_size) {
      RMM_EXPECTS(*maximum_pool_size % CUDA_ALLOCATION_ALIGNMENT == 0,
                  std::string{name} + ": maximum_pool_size " + std::to_string(*maximum_pool_size) +
                      " is not a multiple of " + std::to_string(CUDA_ALLOCATION_ALIGNMENT) +
                      " bytes");
      RMM_EXPECTS(*maximum_pool_size >= initial_pool_size,
                  std::string{name} + ": maximum_pool_size " + std::to_string(*maximum_pool_size) +
                      " is below initial_pool_size " + std::to_string(initial_pool_size));
    }
    if (initial_pool_size > 0) {
      if (range_.upstream() != nullptr) {  // whole granules: the cap counts mapped memory
        initial_pool_size = std::min(maximum_, align_up(initial_pool_size, range_.granularity()));
      }
      void* base =
          upstream_->allocate(cuda_stream_default, initial_pool_size, CUDA_ALLOCATION_ALIGNMENT);
      cuda_stream_default.synchronize();  // unowned memory must be usable on every stream
      region_id const id =
          free_list_.insert_region(reinterpret_cast<std::uintptr_t>(base), initial_pool_size, 0);
      if (range_.upstream() != nullptr) {
        range_.adopt(id);
      }
    }
  }

  /**
   * @brief A child shard: takes its memory in pieces from @p parent (the root) and records each
   * piece in @p pieces under @p owner, so that deallocations find it.
   */
  pool_shard(pool_shard& parent, piece_map& pieces, owner_t owner) noexcept
      : range_{nullptr},
        maximum_{std::numeric_limits<std::size_t>::max()},
        free_list_{make_free_list(false)},
        parent_{&parent},
        pieces_{&pieces},
        owner_{owner} {}

  pool_shard(pool_shard const&)            = delete;
  pool_shard& operator=(pool_shard const&) = delete;

  ~pool_shard() {
    synchronize_for_teardown();
    if (rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the memory to the driver
    }
    free_list_.for_each_region([this](auto, std::uintptr_t base, std::size_t size, bool) {
      if (parent_ != nullptr) {  // after the synchronisation: nothing still uses it
        pieces_->erase(base);
        parent_->free_unowned(reinterpret_cast<void*>(base), size);
      } else {
        upstream_->deallocate(
            cuda_stream_default, reinterpret_cast<void*>(base), size, CUDA_ALLOCATION_ALIGNMENT);
      }
    });
  }

  /// @brief Allocates @p rounded bytes (a multiple of 256) on @p stream; @p requested is the
  /// caller's size, for messages. Throws rmm::out_of_memory.
  void* allocate_rounded(cuda::stream_ref stream, std::size_t requested, std::size_t rounded) {
    return allocate_on(stream, requested, rounded);
  }

  /// @brief Returns a block that this shard handed out (@p rounded as given to allocate).
  void deallocate_rounded(cuda::stream_ref stream, void* ptr, std::size_t rounded) noexcept {
    deallocate_on(stream, ptr, rounded);
  }

  /// @brief Appends this shard's regions and their blocks to @p out (under the shard's lock).
  void snapshot_into(memory_snapshot& out) const {
    std::lock_guard<spin_mutex> lock(mutex());
    std::size_t next = out.chunks.size();
    free_list_.for_each_region([&](auto, std::uintptr_t base, std::size_t size, bool) {
      out.chunks.push_back(snapshot_chunk{base, size, owner_, {}});
    });
    // Both walks go region by region in address order: blocks of the k-th region belong to the
    // k-th chunk appended above.
    snapshot_chunk* chunk = nullptr;
    free_list_.for_each_block(
        [&](std::uintptr_t base, std::size_t size, bool is_free, auto, tag_t tag) {
          if (chunk == nullptr || base >= chunk->base + chunk->size) {
            chunk = &out.chunks[next++];
          }
          chunk->blocks.push_back(snapshot_block{
              base - chunk->base,
              size,
              !is_free,
              is_free ? reinterpret_cast<std::uintptr_t>(tag_stream(tag)) : std::uintptr_t{0}});
        });
  }

  /// @brief How often this shard's lock was found taken: the signal to shard the pool.
  [[nodiscard]] std::uint32_t contentions() const noexcept { return mutex().contentions(); }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{*upstream_};
  }

  [[nodiscard]] std::size_t pool_size() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return mapped_bytes();
  }

  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept {
    if (maximum_ == std::numeric_limits<std::size_t>::max()) {
      return std::nullopt;
    }
    return maximum_;
  }

  [[nodiscard]] std::size_t free_bytes() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.free_bytes() + batched_bytes();  // batches: see stream_ordered_core.md
  }

  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.largest_free_block();
  }

  [[nodiscard]] bool grows_in_place() const noexcept { return range_.upstream() != nullptr; }

  // Pieces given back by a child (all of the child's memory is in pieces): only once no work can
  // still use them (after a device synchronisation), so they become memory owned by no stream.
  using stream_ordered_core<pool_shard>::free_unowned;

  // Gives every idle free byte back, after a device synchronisation. Returns the
  // synchronisation's error, having given nothing back, if it failed.
  cudaError_t release() {
    cudaError_t const err = synchronize_and_release([this] {
      release_free_upstream();
      range_.trim(free_list_, 0, cuda_stream_default, std::numeric_limits<std::size_t>::max());
      if (range_.upstream() != nullptr) {
        range_.punch_holes(free_list_, cuda_stream_default);
      }
    });
    if (err == cudaSuccess && range_.upstream() != nullptr) {
      range_.upstream()->flush();  // after the synchronisation every deferred unmap is due
    }
    return err;
  }

  void set_release_threshold(std::size_t bytes) noexcept {
    release_threshold_.store(bytes, std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t release_threshold() const noexcept {
    return release_threshold_.load(std::memory_order_relaxed);
  }

  void set_defragment_threshold(std::size_t bytes) noexcept {
    defragment_threshold_.store(bytes, std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t defragment_threshold() const noexcept {
    return defragment_threshold_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t defragmentations() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return defragmentations_;
  }

  /// The default of set_defragment_threshold: chosen with rmm_growth_sim on the ResNet-50 and
  /// GPT-2 training logs (docs/expandable_pool.md).
  static constexpr std::size_t default_defragment_threshold = std::size_t{64} << 20U;

 private:
  using tag_t     = tlsf_free_list::tag_t;
  using region_id = tlsf_free_list::region_id;
  // Growth from a plain upstream takes at least this much, or an eighth of the pool's current
  // size if larger (see grow()).
  // The free list's keying (tlsf_free_list.md, "Which blocks have a key"). Over chunks, and in a
  // child's pieces, only allocated blocks have a key: a split or merge of free blocks then
  // touches no key and the map holds half the entries, and nothing here needs a free block by
  // address (adopt_rest uses retag_after). Measured in the host model of the n = 1,000 rows:
  // 2-10 % less time, fewer simulated L1 misses and mispredictions (docs/benchmarks.md, "Issue
  // 12, thirty-eighth step"). An expandable range looks free blocks up by address as it maps and
  // unmaps holes (allocate_range, retag_block), so it keeps every block keyed.
  static tlsf_free_list make_free_list(bool grows_in_place) {
    return tlsf_free_list{CUDA_ALLOCATION_ALIGNMENT,
                          address_map::erase_mode::shift,
                          grows_in_place ? tlsf_free_list::keyed_blocks::all
                                         : tlsf_free_list::keyed_blocks::allocated};
  }
  static constexpr std::size_t min_growth     = std::size_t{32} << 20U;
  static constexpr std::size_t growth_divisor = 8;
  // A child borrows at least this much from the root, or an eighth of what it holds if larger:
  // the same bound on slack as the root's growth, for a smaller unit of memory.
  static constexpr std::size_t min_piece = std::size_t{16} << 20U;

  // --- hooks of stream_ordered_core (called with the lock held) ---
  // Always inlined: as a call, g++ 12 returned the optional through memory (a 1-byte store of
  // its flag, then an 8-byte load that the store cannot forward), a stall on every allocation.
  [[gnu::always_inline]] std::optional<void*> try_allocate(std::size_t size, tag_t tag) {
    if (auto p = free_list_.allocate(size, tag)) {
      return reinterpret_cast<void*>(*p);
    }
    return std::nullopt;
  }

  [[gnu::always_inline]] void free_block(void* ptr, std::size_t size, tag_t tag) noexcept {
    try {
      free_list_.deallocate(reinterpret_cast<std::uintptr_t>(ptr), size, tag);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{name} + ": deallocate ignored: " + e.what());
    }
  }

  [[nodiscard]] bool tag_may_fit(tag_t tag, std::size_t size) const {
    return free_list_.largest_free_block(tag) >= size;
  }
  void retag(tag_t from, tag_t to) { free_list_.retag(from, to); }
  [[nodiscard]] std::size_t tag_free_bytes(tag_t tag) const { return free_list_.free_bytes(tag); }

  // Growth policy. Over a growable upstream (virtual_memory_resource): map a hole whose free
  // neighbours make the request fit, or extend the current range in place by the granules still
  // missing after its free tail, so that the pool maps no more than its high-water mark rounded
  // to a granule (detail/mechanics/expandable_range.hpp). Over any other upstream: a new chunk of
  // the largest of the request, 32 MiB and an eighth of the pool, never beyond the maximum. The
  // eighth keeps the number of upstream calls logarithmic in the pool's size while bounding the
  // overshoot to 12.5% (the earlier "current size" doubled the pool: 4096 MiB for 2822 MiB
  // live on the ResNet-50 log; an eighth measures 0.90 there, see docs/benchmarks.md).
  bool grow(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    bool const grown = grow_once(size, stream, tag);
    if (grown && parent_ == nullptr) {
      peak_mapped_ = std::max(peak_mapped_, mapped_bytes());
    }
    return grown;
  }

  bool grow_once(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    if (parent_ != nullptr) {
      std::size_t const want =
          align_up(std::max({size, free_list_.total_bytes() / growth_divisor, min_piece}),
                   CUDA_ALLOCATION_ALIGNMENT);
      return borrow(want, stream, tag) || (want != size && borrow(size, stream, tag));
    }
    if (defragment(size, stream, tag) && free_list_.largest_free_block(tag) >= size) {
      return true;
    }
    std::size_t const current = mapped_bytes();
    std::size_t const room    = current > maximum_ ? 0 : maximum_ - current;
    if (range_.grow(free_list_, size, stream, tag, room, last_upstream_error_)) {
      return true;
    }
    if (size > room) {
      if (range_.upstream() == nullptr) {
        last_upstream_error_ =
            "growing by " + std::to_string(size) + " bytes would exceed the maximum";
      }
      return false;
    }
    if (range_.upstream() != nullptr) {
      return take_from_upstream(std::min(room, align_up(size, range_.granularity())), stream, tag);
    }
    std::size_t const want =
        std::min(room,
                 align_up(std::max({size, current / growth_divisor, min_growth}),
                          CUDA_ALLOCATION_ALIGNMENT));
    return take_from_upstream(want, stream, tag) ||
           (want != size && take_from_upstream(size, stream, tag));
  }

  // Defragmentation, over a growable upstream (docs/expandable_pool.md): before the pool maps
  // memory (a hole back, or more at the range's end) that would take it above the most it has
  // held, if at least the threshold of free memory in the middle of its ranges could be
  // unmapped, the pool waits for the device, unmaps that memory (holes, mapped back when a
  // request needs them) and gives every free block to the requesting stream, so that new memory
  // joins the free tail. The device is then idle: no stream can still use a free block. Below
  // the peak nothing is synchronised, so a loop that repeats its peak stops defragmenting.
  // Skipped while the requesting stream is being captured (no synchronisation is allowed then).
  bool defragment(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    std::size_t const threshold = defragment_threshold_.load(std::memory_order_relaxed);
    if (range_.upstream() == nullptr || !range_.region()) {
      return false;
    }
    std::size_t const mapped = mapped_bytes();
    peak_mapped_             = std::max(peak_mapped_, mapped);
    if (threshold == std::numeric_limits<std::size_t>::max() ||
        mapped + range_.missing_bytes(free_list_, size, tag) <= peak_mapped_) {
      return false;
    }
    // One walk of the free blocks, for the threshold and for the unmapping (which walks again
    // only if the synchronisation below returned batches or merged free blocks).
    auto const plan = range_.plan_holes(free_list_);
    if (plan.bytes < std::max<std::size_t>(threshold, 1) || is_capturing(stream)) {
      return false;
    }
    if (synchronize_and_disown() != cudaSuccess) {
      return false;  // another thread's capture, or a device error: no free block is known idle
    }
    try {
      free_list_.retag(0, tag);
    } catch (...) {  // out of host memory for the tag's index: the blocks stay unowned
    }
    range_.punch_holes(free_list_, plan, stream);
    range_.upstream()->flush();  // the device is idle: every unmap is due, give it back now
    ++defragmentations_;
    return true;
  }

  // The core's last growth attempt, after a device synchronisation: over a growable upstream,
  // free memory in the middle of the ranges is unmapped first if growing alone fails (under the
  // maximum, or when the device is out of memory), since no stream can still use it.
  bool grow_after_synchronize(std::size_t size, cuda::stream_ref stream, tag_t tag) {
    if (grow(size, stream, tag)) {
      return true;
    }
    return range_.upstream() != nullptr && range_.punch_holes(free_list_, stream) > 0 &&
           grow(size, stream, tag);
  }

  // Physical memory the pool holds: its ranges less their unmapped holes.
  [[nodiscard]] std::size_t mapped_bytes() const noexcept {
    return free_list_.total_bytes() - range_.unmapped();
  }

  // The rest of the free block that `block` was carved from (its physical successor).
  void adopt_rest(void* block, std::size_t /*size*/, tag_t from, tag_t to) noexcept {
    try {
      free_list_.retag_after(reinterpret_cast<std::uintptr_t>(block), from, to);
    } catch (...) {  // out of host memory for a new tag's index: the rest stays where it is
    }
  }

  void after_free(tag_t tag, cuda::stream_ref stream) noexcept {
    if (!range_.region()) {
      return;
    }
    std::size_t const threshold = release_threshold_.load(std::memory_order_relaxed);
    std::size_t const free      = free_list_.free_bytes();
    if (free <= threshold || free - threshold < range_.granularity()) {
      return;
    }
    try {
      range_.trim(free_list_, tag, stream, free - threshold);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{name} + ": trimming failed: " + e.what());
    }
  }

  // A child's growth: a piece of the root's memory, ordered for `stream` by the root's protocol.
  bool borrow(std::size_t bytes, cuda::stream_ref stream, tag_t tag) {
    void* piece = nullptr;
    try {
      piece = parent_->allocate_rounded(stream, bytes, bytes);
    } catch (std::bad_alloc const& e) {
      last_upstream_error_ = "borrowing " + std::to_string(bytes) +
                             " bytes failed: " + rmm::detail::upstream_failure(e);
      return false;
    }
    auto const base = reinterpret_cast<std::uintptr_t>(piece);
    bool recorded   = false;
    try {
      recorded = pieces_->insert(base, bytes, owner_);
      if (recorded) {
        free_list_.insert_region(base, bytes, tag);
        return true;
      }
      last_upstream_error_ = "too many pieces (" + std::to_string(pieces_->capacity()) + ")";
    } catch (...) {
      last_upstream_error_ = "out of host memory for a piece";
    }
    if (recorded) {
      pieces_->erase(base);
    }
    parent_->deallocate_rounded(stream, piece, bytes);  // unused: safe on the same stream
    return false;
  }

  bool take_from_upstream(std::size_t bytes, cuda::stream_ref stream, tag_t tag) {
    try {
      void* base = upstream_->allocate(stream, bytes, CUDA_ALLOCATION_ALIGNMENT);
      try {
        region_id const id =
            free_list_.insert_region(reinterpret_cast<std::uintptr_t>(base), bytes, tag);
        if (range_.upstream() != nullptr) {
          range_.adopt(id);  // the newest range grows; older ones stay as they are
        }
      } catch (...) {
        upstream_->deallocate(stream, base, bytes, CUDA_ALLOCATION_ALIGNMENT);
        throw;
      }
      return true;
    } catch (std::bad_alloc const& e) {
      last_upstream_error_ = "upstream failed to allocate " + std::to_string(bytes) +
                             " bytes: " + rmm::detail::upstream_failure(e);
      return false;
    }
  }

  // Called only after a device synchronisation (the core's last resort, release()).
  void release_free_upstream() {
    if (parent_ != nullptr) {  // a child gives its fully free pieces back to the root
      for (auto const& [base, size] : free_list_.take_free_regions()) {
        pieces_->erase(base);
        parent_->free_unowned(reinterpret_cast<void*>(base), size);
      }
      return;
    }
    if (range_.upstream() != nullptr) {
      range_.free_holes_of_idle_ranges(free_list_);
    }
    std::vector<std::pair<region_id, std::uintptr_t>> ids;
    free_list_.for_each_region(
        [&](region_id id, std::uintptr_t base, std::size_t, bool) { ids.emplace_back(id, base); });
    for (auto const& [base, size] : free_list_.take_free_regions()) {
      for (auto const& [id, b] : ids) {
        if (b == base) {
          range_.forget(id);
        }
      }
      upstream_->deallocate(
          cuda_stream_default, reinterpret_cast<void*>(base), size, CUDA_ALLOCATION_ALIGNMENT);
    }
  }

  // The report of the request that could not be served. The root reports the pool: its size
  // (mapped bytes), free bytes, largest free block and maximum; a child reports its pieces (the
  // pool's implementation merges the root's report in, see after_shard_oom). Lock held.
  [[nodiscard]] out_of_memory_report oom_report(std::size_t requested, std::size_t rounded) const {
    out_of_memory_report report;
    report.resource        = name;
    report.requested_bytes = requested;
    report.reason          = "(" + std::to_string(rounded) + " after rounding): ";
    if (parent_ != nullptr) {
      report.reason += "no free block fits in shard " + std::to_string(owner_) + ", which holds " +
                       std::to_string(free_list_.total_bytes()) + " bytes in pieces of the pool";
    } else {
      report.reason +=
          "no free block fits in the pool size " + std::to_string(mapped_bytes()) + " bytes";
      report.reserved_bytes = mapped_bytes();
      if (maximum_ != std::numeric_limits<std::size_t>::max()) {
        report.maximum_bytes = maximum_;
      }
    }
    if (!last_upstream_error_.empty()) {
      report.reason += "; " + last_upstream_error_;
    }
    report.free_bytes         = free_list_.free_bytes() + batched_bytes();
    report.largest_free_block = free_list_.largest_free_block();
    return report;
  }

  std::optional<upstream_t> mutable upstream_;  // the root's only
  expandable_range range_;  // the range that grows in place, if the upstream can
  std::atomic<std::size_t> release_threshold_{std::numeric_limits<std::size_t>::max()};
  std::atomic<std::size_t> defragment_threshold_{default_defragment_threshold};
  std::size_t defragmentations_{};  // under the lock
  std::size_t peak_mapped_{};       // the most mapped_bytes() after a growth, under the lock
  std::size_t maximum_;
  tlsf_free_list free_list_;
  std::string last_upstream_error_;
  pool_shard* parent_{};  // a child's root
  piece_map* pieces_{};   // a child's record of its pieces
  owner_t owner_{};       // a child's number in `pieces_` (1, 2, ...); 0 for the root
};

}  // namespace rmm::mr::detail
