/**
 * @file fixed_size_core_hooks.hpp
 * @brief The stream_ordered_core hooks over a fixed_size_free_list, shared by the resources that
 * hand out whole blocks (fixed_size_memory_resource, block_memory_pool_resource).
 */
#pragma once

#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

namespace rmm::mr::detail {

/// Blocks are all one size, so with two or more streams an allocation that takes the shared lock
/// also fills its stream's batch to this many blocks, and a full batch (32 blocks, no byte limit)
/// returns all but its newest this many: a stream takes the shared lock rarely, not once per
/// allocation (stream_ordered_core::prefetch; stream_ordered_core.md, "Prefetch").
inline constexpr std::size_t one_size_prefetch_blocks = 16;

/// When a stream takes a block from another stream's list after waiting on its event (which
/// orders every block of that list), this many more (or half of that list, if more) follow the
/// block: a new stream, such as a new thread's per-thread default stream, then waits once per
/// many blocks rather than once per block.
inline constexpr std::size_t one_size_adopt_blocks = 32;

/**
 * @brief CRTP mixin: the free-list hooks that stream_ordered_core needs (try_allocate,
 * free_block, tag_may_fit, retag, tag_free_bytes, adopt_rest), implemented over
 * `Derived::free_list_`, a fixed_size_free_list whose block size is the distance between blocks.
 * Derived also provides `static constexpr char const* name` for log messages, befriends this class,
 * and adds the hooks that differ (grow, release_free_upstream, oom_report). Called with the core's
 * lock held, like every hook.
 */
template <typename Derived>
class fixed_size_core_hooks {
 public:
  using tag_t = fixed_size_free_list::tag_t;

  std::optional<void*> try_allocate(std::size_t, tag_t tag) noexcept {
    if (auto p = list().pop(tag)) {
      return reinterpret_cast<void*>(*p);
    }
    return std::nullopt;
  }

  void free_block(void* ptr, std::size_t, tag_t tag) noexcept {
    try {
      list().push(reinterpret_cast<std::uintptr_t>(ptr), tag);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{Derived::name} + ": deallocate ignored: " + e.what());
    }
  }

  [[nodiscard]] bool tag_may_fit(tag_t tag, std::size_t) const { return list().stacked(tag) > 0; }

  void retag(tag_t from, tag_t to) { list().retag(from, to); }

  void adopt_rest(void*, std::size_t, tag_t from, tag_t to) noexcept {
    std::size_t const half = list().stacked(from) / 2;
    try {
      list().retag_newest(from, to, std::max(half, one_size_adopt_blocks));
    } catch (...) {  // out of host memory for `to`'s stack: the blocks stay with `from`
    }
  }

  [[nodiscard]] std::size_t tag_free_bytes(tag_t tag) const {
    // Tag 0 holds the blocks never handed out and those disowned after a synchronisation.
    return (list().stacked(tag) + (tag == 0 ? list().fresh() : 0)) * list().block_size();
  }

 private:
  fixed_size_free_list& list() noexcept { return static_cast<Derived&>(*this).free_list_; }
  fixed_size_free_list const& list() const noexcept {
    return static_cast<Derived const&>(*this).free_list_;
  }
};

}  // namespace rmm::mr::detail
