/**
 * @file fixed_size_shard.hpp
 * @brief One part of fixed_size_memory_resource: the stream-ordered core over a
 * fixed_size_free_list. The root shard owns the upstream and every chunk; child shards, made once
 * several threads contend for the root, serve their streams from whole chunks the root lends them.
 * Design note: fixed_size_free_list.md, "Shards".
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>
#include <rmm/mr/detail/algorithms/piece_map.hpp>
#include <rmm/mr/detail/mechanics/fixed_size_core_hooks.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief A stream-ordered suballocator of blocks of one size: the whole of a
 * fixed_size_memory_resource until its threads contend, then its root (see
 * fixed_size_memory_resource_impl). Not for direct use.
 *
 * The root takes chunks of `blocks_per_chunk` blocks from the upstream; a child borrows whole
 * chunks of the same size from the root (lend_chunk) and gives back the chunks none of whose
 * blocks is handed out, after a device synchronisation (release, its last resort, teardown),
 * into the root's spare chunks, which the root lends again or uses itself before the upstream.
 *
 * Thread-safe (the core's lock). Lock order: a child's lock may be held while taking the root's
 * (borrowing, giving chunks back); the root never takes a child's.
 */
class fixed_size_shard : public stream_ordered_core<fixed_size_shard>,
                         private fixed_size_core_hooks<fixed_size_shard> {
  friend class stream_ordered_core<fixed_size_shard>;
  friend class fixed_size_core_hooks<fixed_size_shard>;
  using fixed_size_core_hooks<fixed_size_shard>::adopt_rest;                // not the core's
  static constexpr std::size_t prefetch_blocks = one_size_prefetch_blocks;  // blocks of one size

 public:
  using upstream_t                  = cuda::mr::any_resource<cuda::mr::device_accessible>;
  using owner_t                     = piece_map::owner_t;
  static constexpr char const* name = "fixed_size_memory_resource";

  /**
   * @brief The root shard: owns the upstream and takes the first chunk from it. Arguments and
   * errors as fixed_size_memory_resource's constructor; @p device (or -1) is named in reports.
   */
  fixed_size_shard(upstream_t upstream,
                   std::size_t block_size,
                   std::size_t blocks_per_chunk,
                   int device)
      : upstream_{std::move(upstream)},
        device_{device},
        block_size_{checked_block_size(block_size)},
        blocks_per_chunk_{blocks_per_chunk},
        free_list_{block_size_} {
    RMM_EXPECTS(blocks_per_chunk > 0,
                std::string{name} + ": blocks_to_preallocate must be at least 1, got 0");
    RMM_EXPECTS(blocks_per_chunk <= std::numeric_limits<std::size_t>::max() / block_size_,
                std::string{name} + ": blocks_to_preallocate " + std::to_string(blocks_per_chunk) +
                    " times block_size " + std::to_string(block_size_) + " overflows");
    if (!take_chunk(cuda_stream_default)) {
      out_of_memory_report report;
      report.resource        = name;
      report.requested_bytes = chunk_bytes();
      report.reason = "preallocating " + std::to_string(blocks_per_chunk_) + " blocks of " +
                      std::to_string(block_size_) + " bytes failed; " + last_upstream_error_;
      report.reserved_bytes = 0;
      rmm::detail::add_device_memory(report, device_);
      throw rmm::out_of_memory(std::move(report));
    }
  }

  /// @brief A child shard: borrows chunks from @p parent (the root) and records each in
  /// @p pieces under @p owner, so that deallocations find it.
  fixed_size_shard(fixed_size_shard& parent, piece_map& pieces, owner_t owner)
      : device_{parent.device_},
        block_size_{parent.block_size_},
        blocks_per_chunk_{parent.blocks_per_chunk_},
        free_list_{block_size_},
        parent_{&parent},
        pieces_{&pieces},
        owner_{owner} {}

  fixed_size_shard(fixed_size_shard const&)            = delete;
  fixed_size_shard& operator=(fixed_size_shard const&) = delete;

  ~fixed_size_shard() {
    synchronize_for_teardown();
    if (rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the memory to the driver
    }
    for (auto const& [base, bytes] : free_list_.chunks()) {
      if (parent_ != nullptr) {  // after the synchronisation: nothing still uses it
        pieces_->erase(base);
        parent_->take_back(base);
      } else {
        give_upstream(base);
      }
    }
    for (std::uintptr_t const base : spare_) {
      give_upstream(base);
    }
  }

  void* allocate_block(cuda::stream_ref stream, std::size_t bytes) {
    return allocate_on(stream, bytes, block_size_);
  }

  /**
   * @brief The root's allocation once the resource has sharded (only its out-of-memory path, after
   * a child failed): as allocate_block, then the root's free blocks, if fewer than the floor of
   * its next reclaim, become that floor (see reclaim_free_chunks), so that blocks the root hands
   * out here and gets back later count as frees. Takes the root's lock once more: not for the
   * unsharded resource's allocations, which never reclaim.
   */
  void* allocate_block_sharded(cuda::stream_ref stream, std::size_t bytes) {
    void* p = allocate_block(stream, bytes);
    std::lock_guard<spin_mutex> lock(mutex());
    reclaim_floor_ = std::min(reclaim_floor_, free_in_list());
    return p;
  }

  void deallocate_block(cuda::stream_ref stream, void* ptr) noexcept {
    deallocate_on(stream, ptr, block_size_);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{*upstream_};
  }
  [[nodiscard]] std::size_t block_size() const noexcept { return block_size_; }

  /// @brief Blocks this shard holds: its chunks' and (the root) its spare chunks'.
  [[nodiscard]] std::size_t capacity_blocks() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.capacity() + spare_.size() * blocks_per_chunk_;
  }

  /// @brief Free blocks: in the list, in the streams' batches, and in spare chunks.
  [[nodiscard]] std::size_t free_blocks() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    return free_list_.size() + batched_bytes() / block_size_ +  // see stream_ordered_core.md
           spare_.size() * blocks_per_chunk_;
  }

  /// @brief How often this shard's lock was found taken: the signal to shard the resource.
  [[nodiscard]] std::uint32_t contentions() const noexcept { return mutex().contentions(); }

  /// @brief A child gives every chunk none of whose blocks is handed out back to the root, after
  /// a device synchronisation (the root keeps its chunks, as the resource always did). Gives
  /// nothing back if the synchronisation fails (another thread capturing in global mode).
  void release() {
    static_cast<void>(synchronize_and_release([this] { release_free_upstream(); }));
  }

  /**
   * @brief The root lends a chunk to a child: a spare one (also one of the root's own chunks with
   * no block handed out, see reclaim_free_chunks; not while @p stream is being captured), or a
   * new one from the upstream for @p stream, complete before it returns (so that any stream may
   * use it). nullopt, with the reason in @p error, if the upstream fails. Takes the root's lock.
   */
  std::optional<std::uintptr_t> lend_chunk(cuda::stream_ref stream, std::string& error) {
    std::lock_guard<spin_mutex> lock(mutex());
    if (spare_.empty()) {
      reclaim_free_chunks(stream);
    }
    if (!spare_.empty()) {
      std::uintptr_t const base = spare_.back();
      spare_.pop_back();
      return base;
    }
    if (auto base = chunk_from_upstream(stream)) {
      return base;
    }
    error = last_upstream_error_;
    return std::nullopt;
  }

  /// @brief The root takes back a chunk that no work can still use (after a device
  /// synchronisation, or never used): kept as a spare. Takes the root's lock.
  void take_back(std::uintptr_t base) noexcept {
    std::lock_guard<spin_mutex> lock(mutex());
    try {
      spare_.push_back(base);
    } catch (...) {  // out of host memory to keep it: give it to the upstream now
      give_upstream(base);
    }
  }

 private:
  using tag_t = fixed_size_free_list::tag_t;

  static std::size_t checked_block_size(std::size_t block_size) {
    RMM_EXPECTS(block_size > 0, std::string{name} + ": block_size must not be 0");
    RMM_EXPECTS(block_size <= std::numeric_limits<std::size_t>::max() - CUDA_ALLOCATION_ALIGNMENT,
                std::string{name} + ": block_size " + std::to_string(block_size) + " is too large");
    return align_up(block_size, CUDA_ALLOCATION_ALIGNMENT);
  }

  [[nodiscard]] std::size_t chunk_bytes() const noexcept { return block_size_ * blocks_per_chunk_; }

  // A new chunk from the upstream, complete before any stream may take a block (its blocks are
  // fresh, owned by no stream). The root's; lock held (or in the constructor).
  std::optional<std::uintptr_t> chunk_from_upstream(cuda::stream_ref stream) {
    std::size_t const bytes = chunk_bytes();
    try {
      void* base = upstream_->allocate(stream, bytes, CUDA_ALLOCATION_ALIGNMENT);
      try {
        stream.sync();
      } catch (...) {  // e.g. inside a graph capture: the chunk goes back, on the same stream
        upstream_->deallocate(stream, base, bytes, CUDA_ALLOCATION_ALIGNMENT);
        throw;
      }
      return reinterpret_cast<std::uintptr_t>(base);
    } catch (std::bad_alloc const& e) {
      last_upstream_error_ = "upstream failed to allocate " + std::to_string(bytes) +
                             " bytes: " + rmm::detail::upstream_failure(e);
      return std::nullopt;
    }
  }

  void give_upstream(std::uintptr_t base) noexcept {
    upstream_->deallocate(cuda_stream_default,
                          reinterpret_cast<void*>(base),
                          chunk_bytes(),
                          CUDA_ALLOCATION_ALIGNMENT);
  }

  // The root's growth: a spare chunk (given back by a child after a synchronisation: owned by no
  // stream), else a new one from the upstream. A spare leaves spare_ only once it is in the list,
  // so that it is not lost whatever add_chunk throws (popped first, it would have to be pushed
  // back in a handler for every exception, not only std::bad_alloc). Lock held (or in the
  // constructor).
  bool take_chunk(cuda::stream_ref stream) {
    if (!spare_.empty()) {
      if (!add_to_list(spare_.back())) {
        return false;
      }
      spare_.pop_back();
      return true;
    }
    std::optional<std::uintptr_t> const base = chunk_from_upstream(stream);
    if (base && !add_to_list(*base)) {
      give_upstream(*base);  // never used
      return false;
    }
    return base.has_value();
  }

  // Adds a chunk to the list; false (the list unchanged, the reason noted) if out of host memory.
  bool add_to_list(std::uintptr_t base) {
    try {
      free_list_.add_chunk(base, blocks_per_chunk_);
      return true;
    } catch (std::bad_alloc const&) {
      last_upstream_error_ = "out of host memory for a chunk's bookkeeping";
      return false;
    }
  }

  // The root's own chunks with no block handed out become spares, so that children reuse what
  // the root grew to before the resource sharded (else it stays with the root, unused, and the
  // children take as much again from the upstream). Their blocks may still be in use by the
  // streams that freed them, so this waits for the device: tried only once at least a chunk's
  // worth more blocks are free than at the fewest since the last try (the floor, lowered where
  // the root hands blocks out, allocate_block_sharded): a chunk's worth of blocks freed since then
  // (or a chunk the root took for itself). Skipped while the requesting @p stream is being
  // captured, as the pool's defragmentation is (no synchronisation is permitted then, and a failed
  // one would lend chunks that work may still use): the child then borrows from the upstream. A
  // synchronisation that fails anyway (another thread's capture in global mode) lends nothing.
  // The root's; lock held.
  void reclaim_free_chunks(cuda::stream_ref stream) noexcept {
    if (free_in_list() < reclaim_floor_ + blocks_per_chunk_ || is_capturing(stream)) {
      return;
    }
    try {
      spare_.reserve(spare_.size() + free_list_.num_chunks());  // pushes below cannot throw
      if (synchronize_and_disown() != cudaSuccess) {
        return;  // blocks may still be in use: the chunks stay in the list, the floor as it was
      }
      for (auto const& [base, bytes] : free_list_.release_free_chunks()) {
        spare_.push_back(base);
      }
    } catch (...) {  // out of host memory: the chunks stay in the list
    }
    reclaim_floor_ = free_in_list();
  }

  // Free blocks in the list and in the streams' batches (not the spares). Lock held.
  [[nodiscard]] std::size_t free_in_list() const noexcept {
    return free_list_.size() + batched_bytes() / block_size_;
  }

  // A child's growth: a whole chunk borrowed from the root, recorded in the piece map.
  bool borrow(cuda::stream_ref stream) {
    std::string error;
    std::optional<std::uintptr_t> const base = parent_->lend_chunk(stream, error);
    if (!base) {
      last_upstream_error_ = "borrowing a chunk of " + std::to_string(chunk_bytes()) +
                             " bytes from the root failed: " + error;
      return false;
    }
    bool recorded = false;
    try {
      recorded = pieces_->insert(*base, chunk_bytes(), owner_);
      if (recorded) {
        free_list_.add_chunk(*base, blocks_per_chunk_);
        return true;
      }
      last_upstream_error_ =
          "too many chunks in shards (" + std::to_string(pieces_->capacity()) + ")";
    } catch (...) {
      last_upstream_error_ = "out of host memory for a chunk's bookkeeping";
    }
    if (recorded) {
      pieces_->erase(*base);
    }
    parent_->take_back(*base);  // never used
    return false;
  }

  // --- the other hooks of stream_ordered_core (called with the lock held) ---
  bool grow(std::size_t, cuda::stream_ref stream, tag_t) {
    return parent_ != nullptr ? borrow(stream) : take_chunk(stream);
  }

  // After a device synchronisation: a child gives every chunk with no block handed out back to
  // the root (a block in a stream's batch counts as handed out, so its chunk stays).
  void release_free_upstream() noexcept {
    if (parent_ == nullptr) {
      return;
    }
    try {
      for (auto const& [base, bytes] : free_list_.release_free_chunks()) {
        pieces_->erase(base);
        parent_->take_back(base);
      }
    } catch (std::bad_alloc const&) {  // the list is unchanged: the chunks stay with the child
    }
  }

  // Every block is in use (the core has synchronised and taken back every free block) and a new
  // chunk could not be had. Lock held. A child reports its chunks; the resource merges the
  // root's report in (fixed_size_memory_resource_impl::after_shard_oom).
  [[nodiscard]] out_of_memory_report oom_report(std::size_t requested, std::size_t) const {
    std::size_t const held = free_list_.capacity() * block_size_;
    std::size_t const free = free_list_.size() * block_size_ + batched_bytes();
    out_of_memory_report report;
    report.resource        = name;
    report.requested_bytes = requested;
    report.reason          = "all " + std::to_string(free_list_.capacity()) + " blocks of " +
                    std::to_string(block_size_) + " bytes" +
                    (parent_ != nullptr ? " in shard " + std::to_string(owner_) : std::string{}) +
                    " are in use, and growing by " + std::to_string(blocks_per_chunk_) +
                    " blocks failed; " + last_upstream_error_;
    report.reserved_bytes     = held;
    report.used_bytes         = held - free;
    report.free_bytes         = free;
    report.largest_free_block = free > 0 ? block_size_ : 0;
    if (device_ >= 0) {
      report.device = device_;
    }
    return report;
  }

  std::optional<upstream_t> mutable upstream_;  // the root's only
  int device_;                                  // named in out-of-memory reports (-1: none)
  std::size_t block_size_;
  std::size_t blocks_per_chunk_;
  fixed_size_free_list free_list_;
  std::string last_upstream_error_;
  std::vector<std::uintptr_t> spare_;  // the root's: chunks given back by children, unused
  std::size_t reclaim_floor_{};        // the root's fewest free_in_list() since its last reclaim
  fixed_size_shard* parent_{};         // a child's root
  piece_map* pieces_{};                // a child's record of its chunks
  owner_t owner_{};                    // a child's number in `pieces_` (1, 2, ...); 0 for the root
};

}  // namespace rmm::mr::detail
