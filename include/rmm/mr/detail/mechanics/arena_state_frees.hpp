/**
 * @file arena_state_frees.hpp
 * @brief arena_state's frees that leave the freeing stream's own arena: large blocks (kept by the
 * freeing arena or returned to the global arena) and blocks of another stream's arena. Member
 * definitions, included at the end of arena_state.hpp; split out by concern to keep each file
 * short.
 */
#pragma once

#include <rmm/mr/detail/mechanics/arena_state.hpp>

namespace rmm::mr::detail {

inline bool arena_state::deallocate_large(stream_arena_state* a,
                                          stream_key const& key,
                                          std::uintptr_t p,
                                          std::size_t bytes) {
  arena::range const r{p, bytes};
  // With several arenas and no room in a's share the block goes back under a's event: recorded
  // first, so that the free takes the global lock once (an event recorded for a block that turns
  // out not to be large orders nothing more than a's stream already has).
  std::optional<arena::ticket> recorded;
  if (a != nullptr && several_arenas() && !a->host.keeps(bytes)) {
    recorded = record_release(*a);
  }
  {
    std::lock_guard<spin_mutex> glock{global_mutex_};
    // a is the only arena and the block was not in it: back at once, checked and released in
    // one lookup, as release_large_alone.
    if (a != nullptr && by_id_.size() == 1) {
      return release_large_locked(p, bytes);
    }
    if (!is_large_block(p, bytes)) {
      return false;
    }
    if (recorded) {
      release_range(r, *recorded);
      return true;
    }
    if (a != nullptr && keep_large(*a, p, bytes)) {
      return true;
    }
  }
  if (a != nullptr) {
    give_back(*a, {r});
    return true;
  }
  RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(key.handle));
  std::lock_guard<spin_mutex> glock{global_mutex_};
  release_range(r, arena::no_ticket);
  return true;
}

inline bool arena_state::is_large_block(std::uintptr_t p, std::size_t bytes) const {
  std::size_t const allocated = global_->large_size_at(p);
  expect_large_size(p, bytes, allocated);
  return allocated != 0;
}

inline void arena_state::expect_large_size(std::uintptr_t p,
                                           std::size_t bytes,
                                           std::size_t allocated) {
  if (allocated != 0 && allocated != bytes) {
    throw_large_size(p, bytes, allocated);
  }
}

inline void arena_state::throw_large_size(std::uintptr_t p, std::size_t bytes, std::size_t got) {
  RMM_FAIL("arena_memory_resource: deallocate of " + std::to_string(bytes) + " bytes at " +
               format_hex(p) + ", allocated with " + std::to_string(got),
           rmm::logic_error);
}

inline bool arena_state::release_large_alone(std::uintptr_t p, std::size_t bytes) {
  std::lock_guard<spin_mutex> glock{global_mutex_};
  if (by_id_.size() != 1) {
    return false;  // several arenas after all: deallocate_large checks and frees it
  }
  return release_large_locked(p, bytes);
}

inline bool arena_state::release_large_locked(std::uintptr_t p, std::size_t bytes) {
  // One lookup for the check and the release (is_large_block then release_range took two).
  std::size_t const found = global_->release_large(p, bytes);
  expect_large_size(p, bytes, found);
  if (found == 0) {
    return false;
  }
  unordered_releases_ = true;  // as release_if_alone
  return true;
}

inline void arena_state::give_back(stream_arena_state& a,
                                   std::vector<arena::range> const& ranges) noexcept {
  if (!several_arenas()) {  // else release_if_alone is false: skip its lock
    std::lock_guard<spin_mutex> glock{global_mutex_};
    if (release_if_alone(ranges)) {
      return;
    }
  }
  arena::ticket const t = record_release(a);
  std::lock_guard<spin_mutex> glock{global_mutex_};
  release_ranges(ranges, t);
}

inline arena::ticket arena_state::record_release(stream_arena_state& a) noexcept {
  if ((a.event == nullptr &&
       cudaEventCreateWithFlags(&a.event, cudaEventDisableTiming) != cudaSuccess) ||
      cudaEventRecord(a.event, a.key.handle) != cudaSuccess) {
    // Cannot order by event: order by waiting instead.
    rmm::detail::clear_last_cuda_error();
    RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(a.key.handle));
    return arena::no_ticket;
  }
  return a.id;
}

inline bool arena_state::keep_large(stream_arena_state& a,
                                    std::uintptr_t p,
                                    std::size_t bytes) noexcept {
  if (!a.host.keeps(bytes)) {
    return false;
  }
  try {
    owners_.emplace(p, &a);
  } catch (...) {
    return false;
  }
  try {
    a.host.add_superblock(p, bytes);
  } catch (...) {
    owners_.erase(p);
    return false;
  }
  global_->keep_large(p);
  return true;
}

inline void arena_state::deallocate_cross_stream(stream_key const& key,
                                                 std::uintptr_t p,
                                                 std::size_t bytes) {
  stream_arena_state* owner = nullptr;
  {
    std::lock_guard<spin_mutex> glock{global_mutex_};
    if (by_id_.size() == 1) {
      owner = by_id_.front();  // the only arena: no owner map (try_allocate)
    } else if (auto it = owners_.upper_bound(p); it != owners_.begin()) {
      owner = std::prev(it)->second;
    }
  }
  auto const not_ours = [&] {
    return "arena_memory_resource: " + format_hex(p) + " was not allocated by this resource";
  };
  RMM_EXPECTS(owner != nullptr, not_ours(), rmm::logic_error);
  RMM_CUDA_TRY(cudaStreamSynchronize(key.handle));
  std::lock_guard<spin_mutex> lock{owner->mutex};
  RMM_EXPECTS(owner->host.owns(p), not_ours(), rmm::logic_error);
  // No release here: returning a superblock needs an event on the owner's stream, which this
  // thread may not be able to name. The owner's cache or the out-of-memory path returns it.
  static_cast<void>(owner->host.deallocate(p, bytes, /*allow_release=*/false));
}

}  // namespace rmm::mr::detail
