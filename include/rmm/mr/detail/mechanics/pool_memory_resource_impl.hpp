/**
 * @file pool_memory_resource_impl.hpp
 * @brief The shared state of pool_memory_resource: one root shard, and child shards made once
 * threads contend for it, each serving its streams from pieces of the root's memory.
 * Design note: pool_shards.md.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/detail/oom_report.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/pool_shard.hpp>
#include <rmm/mr/detail/mechanics/shard_router.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Shared state of pool_memory_resource. Not for direct use.
 *
 * Until threads contend, everything goes to the root shard (the pool as it always was: one lock,
 * one TLSF list, the upstream). Once the root's lock has been found taken `shard_after` times
 * (and the upstream does not grow in place), the pool shards: each stream is assigned a child
 * shard (round robin, at most `max_children`), which takes its memory from the root in pieces and
 * serves its streams under its own lock; a deallocation finds the shard that owns the address in
 * a piece map read without a lock. Each shard keeps the stream-ordered protocol of
 * stream_ordered_core, so which shard serves a stream affects speed and memory, never safety.
 *
 * Thread-safe.
 */
class pool_memory_resource_impl : private device_binding,
                                  public stream_resource_base<pool_memory_resource_impl> {
  using upstream_t                  = pool_shard::upstream_t;
  static constexpr char const* name = "pool_memory_resource";

 public:
  /// The root's lock must have been found taken this many times before the pool shards.
  static constexpr std::uint32_t shard_after = 1024;
  /// At most this many child shards (fewer on machines with fewer hardware threads).
  static constexpr std::size_t max_children = shard_router<pool_shard>::max_children;

  pool_memory_resource_impl(upstream_t upstream,
                            std::size_t initial_pool_size,
                            std::optional<std::size_t> maximum_pool_size)
      : root_{std::move(upstream), initial_pool_size, maximum_pool_size},
        children_{root_.grows_in_place() ? 0 : shard_router<pool_shard>::default_limit()} {}

  pool_memory_resource_impl(pool_memory_resource_impl const&)            = delete;
  pool_memory_resource_impl& operator=(pool_memory_resource_impl const&) = delete;

  // Members go in reverse order: the children (in children_) first, each giving its pieces back to
  // the root (the piece map still alive), then the root, which gives its chunks to the upstream;
  // all with the pool's device current (device_binding, the first base, restores the caller's
  // last).
  ~pool_memory_resource_impl() { enter_for_teardown(); }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_bound_device(name, "allocate", stream.get());
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes - 1 >= max_request) {  // one test for both: 0 wraps around to the largest
      if (bytes == 0) {
        return nullptr;
      }
      throw_too_large(stream, bytes);
    }
    std::size_t const rounded = align_up(bytes, CUDA_ALLOCATION_ALIGNMENT);
    if (!children_.sharded()) {
      void* p = root_.allocate_rounded(stream, bytes, rounded);
      if (root_.contentions() >= shard_threshold_) {
        enable_sharding();
      }
      return p;
    }
    pool_shard& s = route(stream);
    try {
      return s.allocate_rounded(stream, bytes, rounded);
    } catch (rmm::out_of_memory const& e) {
      return after_shard_oom(s, stream, bytes, rounded, e);
    }
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t /*alignment*/) noexcept {
    if (ptr == nullptr) {
      return;
    }
    expect_bound_device_noexcept(name, "deallocate", stream.get());
    shard_of(ptr).deallocate_rounded(stream, ptr, align_up(bytes, CUDA_ALLOCATION_ALIGNMENT));
  }

  friend pool_memory_resource_impl* get_property(pool_memory_resource_impl const& self,
                                                 state_of<pool_memory_resource_impl>) noexcept {
    return const_cast<pool_memory_resource_impl*>(&self);
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return root_.get_upstream_resource();
  }

  [[nodiscard]] std::size_t pool_size() const noexcept { return root_.pool_size(); }

  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept {
    return root_.maximum_pool_size();
  }

  // Free in the root plus free in the children's pieces (the pieces count as used in the root).
  [[nodiscard]] std::size_t free_bytes() const noexcept {
    std::size_t bytes = root_.free_bytes();
    for_each_child([&](pool_shard const& c) { bytes += c.free_bytes(); });
    return bytes;
  }

  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    std::size_t largest = root_.largest_free_block();
    for_each_child(
        [&](pool_shard const& c) { largest = std::max(largest, c.largest_free_block()); });
    return largest;
  }

  [[nodiscard]] bool grows_in_place() const noexcept { return root_.grows_in_place(); }

  // The root's chunks, then each child's pieces; each shard under its own lock, in turn.
  [[nodiscard]] memory_snapshot snapshot() const {
    memory_snapshot out;
    root_.snapshot_into(out);
    for_each_child([&](pool_shard const& c) { c.snapshot_into(out); });
    return out;
  }

  // The children give their fully free pieces back first, so that the root can free whole chunks.
  // Throws rmm::cuda_error if the root's device synchronisation failed (nothing of the root's
  // was given back then; a child whose own synchronisation failed keeps its pieces).
  void release() {
    for_each_child([](pool_shard& c) { static_cast<void>(c.release()); });
    if (cudaError_t const err = root_.release(); err != cudaSuccess) {
      throw rmm::cuda_error(std::string{"pool_memory_resource::release(): the device "
                                        "synchronisation failed ("} +
                            cudaGetErrorName(err) +
                            "), so no free block is known to be idle; nothing was given back");
    }
  }

  void set_release_threshold(std::size_t bytes) noexcept { root_.set_release_threshold(bytes); }
  [[nodiscard]] std::size_t release_threshold() const noexcept { return root_.release_threshold(); }
  void set_defragment_threshold(std::size_t bytes) noexcept {
    root_.set_defragment_threshold(bytes);
  }
  [[nodiscard]] std::size_t defragment_threshold() const noexcept {
    return root_.defragment_threshold();
  }
  [[nodiscard]] std::size_t defragmentations() const noexcept { return root_.defragmentations(); }

  /// @brief Shards the pool now, whatever the contention (for tests and benchmarks); does nothing
  /// over an upstream that grows in place. Thread-safe.
  void enable_sharding() { children_.enable(); }

  /// @brief Whether the pool has sharded. Thread-safe.
  [[nodiscard]] bool sharded() const noexcept { return children_.sharded(); }

  /// @brief Child shards made so far. Thread-safe.
  [[nodiscard]] std::size_t num_children() const noexcept { return children_.num_children(); }

 private:
  static constexpr std::size_t max_request =
      std::numeric_limits<std::size_t>::max() - CUDA_ALLOCATION_ALIGNMENT;

  pool_shard& route(cuda::stream_ref stream) {
    return children_.route(stream, [this](piece_map& pieces, piece_map::owner_t owner) {
      return std::make_unique<pool_shard>(root_, pieces, owner);
    });
  }

  pool_shard& shard_of(void* ptr) const noexcept {
    pool_shard* child = children_.owner_of(ptr);
    return child != nullptr ? *child : root_;
  }

  // A request no pool can hold (its rounding would wrap around): the pool's figures as they are.
  [[noreturn]] void throw_too_large(cuda::stream_ref stream, std::size_t bytes) const {
    out_of_memory_report report;
    report.resource           = name;
    report.requested_bytes    = bytes;
    report.reason             = "larger than any pool can hold";
    report.reserved_bytes     = pool_size();
    report.free_bytes         = free_bytes();
    report.largest_free_block = largest_free_block();
    report.maximum_bytes      = maximum_pool_size();
    report.stream             = reinterpret_cast<std::uintptr_t>(stream.get());
    rmm::detail::add_device_memory(report, bound_device());
    throw rmm::out_of_memory(std::move(report));
  }

  // A child could not serve a request, even after its own last resort: the other children give
  // their free pieces back to the root, then the child and the root itself are tried again
  // (shard_router::retry_after_child_oom). If both fail, the report is the root's (the pool's
  // size, maximum, device and stream) with the free bytes and the largest free block of every
  // shard, and both reasons.
  void* after_shard_oom(pool_shard& s,
                        cuda::stream_ref stream,
                        std::size_t bytes,
                        std::size_t rounded,
                        rmm::out_of_memory const& first) {
    return children_.retry_after_child_oom(
        s,
        [&] { return s.allocate_rounded(stream, bytes, rounded); },
        [&] { return root_.allocate_rounded(stream, bytes, rounded); },
        [&](rmm::out_of_memory const& e) {
          std::string const rounding = "(" + std::to_string(rounded) + " after rounding): ";
          std::string root_reason    = rmm::detail::oom_reason(e);
          if (root_reason.compare(0, rounding.size(), rounding) == 0) {
            root_reason.erase(0, rounding.size());  // said once, by the shard's reason
          }
          out_of_memory_report report = rmm::detail::sharded_report(
              name,
              bytes,
              first,
              e,
              "; after the other shards gave their free pieces back, the pool's root: ",
              root_reason);
          report.free_bytes         = free_bytes();
          report.largest_free_block = largest_free_block();
          return report;
        });
  }

  template <typename F>
  void for_each_child(F&& f) const {
    children_.for_each_child(std::forward<F>(f));
  }

  pool_shard mutable root_;
  shard_router<pool_shard> children_;  // destroyed first: the children give their pieces back
  // The root's contentions that make the pool shard; never reached where it may not shard.
  std::uint32_t const shard_threshold_{
      children_.limit() > 0 ? shard_after : std::numeric_limits<std::uint32_t>::max()};
};

}  // namespace rmm::mr::detail
