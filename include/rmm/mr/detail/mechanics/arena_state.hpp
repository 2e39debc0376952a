/**
 * @file arena_state.hpp
 * @brief The shared state of arena_memory_resource: the global arena, one stream arena per
 * stream, the locks, the tickets and events that order superblocks moving between streams. The
 * stream contract is stated in rmm/mr/arena_memory_resource.hpp and argued in
 * detail/algorithms/arena.md.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/arena.hpp>
#include <rmm/mr/detail/algorithms/chunk_stream_arena.hpp>
#include <rmm/mr/detail/algorithms/spin_mutex.hpp>
#include <rmm/mr/detail/mechanics/arena_oom.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/finished_threads.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief The state of an arena_memory_resource: the global arena, the stream arenas, the locks.
 * Not for direct use. Heap-allocated once and never moved (the thread-local caches and the
 * tickets point into it).
 *
 * Lock order: stream_map_mutex_ -> one or more stream arena mutexes (all of them only on the
 * last-resort path, in id order) -> global_mutex_. No thread takes an earlier lock while holding
 * a later one. A stream arena's lock is a spin_mutex: it is taken once per allocation and per
 * free, almost always uncontended (one stream, one thread), where a std::mutex pair was 12-15 %
 * of a single-thread operation (profiles of 2026-11-27, benchmarks.md). The global lock is one
 * too: it is held only for O(1) bookkeeping on the hot paths (a large block, a batch), where
 * std::mutex's calls were 10-12 % of the large single-thread rows (session m's profiles). No
 * CUDA call is made under it; its longest hold is the out-of-memory report's walk.
 */
class arena_state : private device_binding {
 public:
  arena_state(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
              std::optional<std::size_t> arena_size,
              bool dump_log_on_failure)
      : upstream_{std::move(upstream)},
        dump_log_on_failure_{dump_log_on_failure},
        id_{next_resource_id()} {
    std::size_t size = 0;
    if (arena_size.has_value()) {
      size = *arena_size;
      RMM_EXPECTS(size >= arena::minimum_arena_size,
                  "arena_memory_resource: arena_size " + std::to_string(size) +
                      " is below the minimum of " + std::to_string(arena::minimum_arena_size) +
                      " bytes");
      RMM_EXPECTS(size <= arena::chunk_stream_arena::max_arena_size,
                  "arena_memory_resource: arena_size " + std::to_string(size) +
                      " is above the maximum of " +
                      std::to_string(arena::chunk_stream_arena::max_arena_size) +
                      " bytes (the stream arenas keep sizes as 32-bit counts of 256 bytes)");
      size = align_down(size, arena::allocation_granularity);
    } else {
      size = align_down(
          std::min(available_device_memory().first / 2, arena::chunk_stream_arena::max_arena_size),
          arena::superblock_size);
      RMM_EXPECTS(size >= arena::minimum_arena_size,
                  "arena_memory_resource: the default arena_size (half of the free device "
                  "memory) is " +
                      std::to_string(size) + " bytes, below the minimum of " +
                      std::to_string(arena::minimum_arena_size) + " bytes");
    }
    void* base = nullptr;
    try {
      base = upstream_.allocate(cuda_stream_default, size, CUDA_ALLOCATION_ALIGNMENT);
    } catch (rmm::out_of_memory const& e) {
      throw rmm::out_of_memory{arena_upstream_report(size, e, bound_device())};
    }
    try {
      RMM_EXPECTS(base != nullptr &&
                      reinterpret_cast<std::uintptr_t>(base) % CUDA_ALLOCATION_ALIGNMENT == 0,
                  "arena_memory_resource: upstream returned a null or misaligned arena",
                  rmm::bad_alloc);
      cuda_stream_default.synchronize();
      global_.emplace(reinterpret_cast<std::uintptr_t>(base), size);
    } catch (...) {
      upstream_.deallocate(cuda_stream_default, base, size, CUDA_ALLOCATION_ALIGNMENT);
      throw;
    }
    base_ = base;
  }

  arena_state(arena_state const&)            = delete;
  arena_state& operator=(arena_state const&) = delete;
  arena_state(arena_state&&)                 = delete;
  arena_state& operator=(arena_state&&)      = delete;

  // With the arena's device current (device_binding, the base, restores the caller's device).
  ~arena_state() {
    enter_for_teardown();
    if (process_is_exiting()) {
      return;  // the CUDA runtime may be gone: leak the events and the arena
    }
    RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaDeviceSynchronize());
    for (auto const& s : by_id_) {
      if (s->event != nullptr) {
        RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(cudaEventDestroy(s->event));
      }
    }
    upstream_.deallocate(cuda_stream_default, base_, global_->size(), CUDA_ALLOCATION_ALIGNMENT);
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    expect_bound_device("arena_memory_resource", "allocate", stream.get());
    rmm::detail::expect_supported_alignment(
        alignment, CUDA_ALLOCATION_ALIGNMENT, "arena_memory_resource");
    if (bytes == 0) {
      return nullptr;
    }
    auto const rounded = arena::round_up(bytes, arena::allocation_granularity);
    if (!rounded || *rounded > global_->size()) {
      fail(bytes, stream, "the request exceeds the arena size");
    }
    stream_key const key  = stream_key::of(stream);
    stream_arena_state& a = arena_for(key);
    if (void* p = try_allocate(a, *rounded)) {
      return p;
    }
    reclaim_nameable(a);
    if (void* p = try_allocate(a, *rounded)) {
      return p;
    }
    reclaim_all();
    if (void* p = try_allocate(a, *rounded)) {
      return p;
    }
    fail(bytes, stream, "no free block fits after reclaiming free superblocks, in the arena size");
  }

  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t) noexcept {
    if (ptr == nullptr) {
      return;
    }
    expect_bound_device_noexcept("arena_memory_resource", "deallocate", stream.get());
    auto const p         = reinterpret_cast<std::uintptr_t>(ptr);
    std::size_t const sz = arena::round_up(bytes, arena::allocation_granularity).value_or(0);
    stream_key const key = stream_key::of(stream);
    try {
      if (stream_arena_state* a = find_arena(key); a != nullptr) {
        a->host.prefetch_lookup(p);  // its line arrives while the lock is taken
        // A large block bigger than any superblock of `a` is not a's: with one arena it goes
        // back under the global lock alone (release_large_alone). One branch on the three tests
        // (`&`, not `&&`), as in try_allocate.
        bool const large  = sz >= arena::large_request_min;
        bool const beyond = sz > a->host.largest_superblock_hint();
        bool const alone  = !several_arenas();
        if ((large & beyond & alone) && release_large_alone(p, sz)) {
          return;
        }
        std::unique_lock<spin_mutex> lock{a->mutex};
        if (std::size_t const keep = keep_bytes(); a->host.cache_bytes() != keep) {
          a->host.set_cache_bytes(keep);  // the share shrank: another stream arena came
        }
        if (auto const freed = a->host.deallocate_if_owned(p, sz); freed.owned) {
          if (freed.released) {
            give_back(*a, {*freed.released});
          }
          return;
        }
        if (sz >= arena::large_request_min && deallocate_large(a, key, p, sz)) {
          return;
        }
      } else if (sz >= arena::large_request_min && deallocate_large(nullptr, key, p, sz)) {
        return;
      }
      deallocate_cross_stream(key, p, sz);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error,
               std::string{"arena_memory_resource: deallocate of "} + std::to_string(bytes) +
                   " bytes at " + format_hex(p) + " failed: " + e.what());
    }
  }

  [[nodiscard]] device_async_resource_ref upstream_ref() const noexcept { return upstream_; }

  /// @brief Size of the global arena in bytes.
  [[nodiscard]] std::size_t arena_size() const noexcept { return global_->size(); }

  /// @brief Bytes one stream arena takes from the global arena at once for a request smaller
  /// than it: 8 superblocks (16 MiB), at most keep_floor() so that a batch stays kept when it
  /// becomes free. One acquisition (one global lock) then serves many small requests.
  [[nodiscard]] std::size_t batch_bytes() const noexcept {
    return std::max(arena::superblock_size,
                    std::min(batch_superblocks * arena::superblock_size,
                             keep_floor() / arena::superblock_size * arena::superblock_size));
  }

  /// @brief The least keep_bytes(): 1/64 of the arena, at least two standard superblocks.
  [[nodiscard]] std::size_t keep_floor() const noexcept {
    return std::max(arena::default_cache_bytes, global_->size() / 64);
  }

  /// @brief Bytes of entirely free superblocks each stream arena keeps (its cache): an equal
  /// share of the arena, arena_size() / the number of stream arenas, at least keep_floor(). One
  /// stream alone keeps everything it frees. A stream arena reads the share on each free; the
  /// superblocks it kept under a larger share stay until they are used again or memory runs out.
  [[nodiscard]] std::size_t keep_bytes() const noexcept {
    return keep_bytes_.load(std::memory_order_relaxed);
  }

 private:
  struct stream_arena_state {
    stream_arena_state(std::uintptr_t arena_base, std::size_t arena_size, std::size_t cache)
        : host{arena_base, arena_size, cache} {}
    spin_mutex mutex;
    arena::chunk_stream_arena host;
    cudaEvent_t event{};  // created on the first release; records only on `key`'s stream
    stream_key key;
    arena::ticket id{};
  };

  // One counter per process (in librmm): ids from two modules never collide.
  static std::uint64_t next_resource_id() noexcept { return next_resource_uid(); }

  // This thread's last few (resource, stream) -> arena lookups.
  static stream_cache<stream_arena_state*>& cache() noexcept {
    static thread_local stream_cache<stream_arena_state*> c;
    return c;
  }

  static std::string format_hex(std::uintptr_t v) { return detail::format_hex(v); }

  // This thread's cached arena of `key` in this resource, or nullptr.
  stream_arena_state* cached(stream_key const& key) const noexcept {
    return cache().find(id_, key);
  }

  // Hot path: the thread-local cache, else the map under a shared lock, else create. The miss is
  // out of line so that the hit inlines without the miss's stack frame (about 18 instructions a
  // call).
  stream_arena_state& arena_for(stream_key const& key) {
    if (stream_arena_state* hit = cached(key); hit != nullptr) {
      return *hit;
    }
    return arena_for_miss(key);
  }

  [[gnu::noinline]] stream_arena_state& arena_for_miss(stream_key const& key) {
    stream_arena_state* a = find_in_map(key);
    if (a == nullptr && key.per_thread()) {
      a = adopt_finished(key);
    }
    if (a == nullptr) {
      std::unique_lock<std::shared_mutex> lock{stream_map_mutex_};
      auto& slot = streams_[key];
      if (!slot) {
        std::size_t const keep = std::max(keep_floor(), global_->size() / (by_id_.size() + 1));
        auto fresh = std::make_unique<stream_arena_state>(global_->base(), global_->size(), keep);
        fresh->key = key;
        // by_id_ changes only here, under stream_map_mutex_ (held): reading its size is safe.
        // Leaving the one-arena mode: the first arena's superblocks enter the owner map, under
        // its lock so that none moves meanwhile (lock order: map, arena, global).
        std::unique_lock<spin_mutex> first_lock;
        if (by_id_.size() == 1) {
          first_lock = std::unique_lock<spin_mutex>{by_id_.front()->mutex};
        }
        std::lock_guard<spin_mutex> glock{global_mutex_};
        by_id_.reserve(by_id_.size() + 1);
        if (by_id_.size() == 1) {
          enter_owner_map(*by_id_.front());
        }
        fresh->id = static_cast<arena::ticket>(by_id_.size() + 1);
        by_id_.push_back(fresh.get());
        several_arenas_.store(by_id_.size() > 1, std::memory_order_relaxed);
        keep_bytes_.store(keep, std::memory_order_relaxed);
        slot = std::move(fresh);
      }
      a = slot.get();
      if (key.per_thread()) {
        finished_.watch(key);  // this thread's arena passes to a new thread when it exits
      }
    }
    cache().remember(id_, key, a);
    return *a;
  }

  // A new thread's per-thread default stream takes over the arena of a thread that has exited
  // (finished_threads): a program that starts new threads for new work keeps its number of
  // stream arenas, their share (keep_bytes) and the memory they cache, instead of adding an
  // empty arena per thread. The finished thread's stream cannot be named any more, so its work
  // is ordered before the new stream's by a device synchronisation, once per new thread; while
  // the new stream is being captured (where that is not allowed) a new arena is made instead.
  // nullptr if there is no finished thread's arena.
  stream_arena_state* adopt_finished(stream_key const& key) {
    if (is_capturing(cuda::stream_ref{key.handle})) {
      return nullptr;  // also when the status is unknown: no synchronisation then
    }
    std::optional<stream_key> const old = finished_.take();
    if (!old) {
      return nullptr;
    }
    if (cudaError_t const err = cudaDeviceSynchronize(); err != cudaSuccess) {
      finished_.put_back(*old);
      RMM_CUDA_TRY(err);
    }
    std::unique_lock<std::shared_mutex> lock{stream_map_mutex_};
    auto node = streams_.extract(*old);
    if (node.empty()) {
      return nullptr;  // cannot happen: an arena is never removed while the resource lives
    }
    stream_arena_state* a = node.mapped().get();
    {
      std::lock_guard<spin_mutex> alock{a->mutex};  // fail() names the arena's stream under it
      a->key = key;
    }
    node.key() = key;
    streams_.insert(std::move(node));  // no allocation; `key` is absent (only its thread adds it)
    finished_.watch(key);
    return a;
  }

  // The superblocks of the first arena, held while it was the only one, into owners_ (whose
  // lock, global_mutex_, the caller holds). All or none: a partial map would send cross-stream
  // frees to the wrong arena.
  void enter_owner_map(stream_arena_state& first) {
    try {
      first.host.for_each_superblock(
          [&](std::uintptr_t base, std::size_t, std::size_t) { owners_.emplace(base, &first); });
    } catch (...) {
      owners_.clear();
      throw;
    }
  }

  stream_arena_state* find_in_map(stream_key const& key) {
    std::shared_lock<std::shared_mutex> lock{stream_map_mutex_};
    auto const it = streams_.find(key);
    return it == streams_.end() ? nullptr : it->second.get();
  }

  // Lookup without creating (for frees).
  stream_arena_state* find_arena(stream_key const& key) {
    stream_arena_state* hit = cached(key);
    return hit != nullptr ? hit : find_in_map(key);
  }

  // First fit in the arena; on a miss, a superblock from the global arena, or for a large
  // request its exact size (a large block, marked as such in the global arena). nullptr if none.
  // (arena_state_grants.hpp)
  void* try_allocate(stream_arena_state& a, std::size_t bytes);
  // From the global arena: a large block (`large`, without a's lock), or a superblock (a batch
  // when one is free) for a small request, added to `a` (whose mutex the caller holds) and the
  // request carved from it. nullptr if none fits.
  void* acquire(stream_arena_state& a, std::size_t bytes, bool large);
  // A large request while one stream arena exists (the caller's): its block from the global arena
  // under the global lock alone, as acquire(a, bytes, true) would take it, with no grant, event
  // list or ticket to build (about a fifth of the large single-thread rows' instructions). nullptr
  // if there are several arenas or none fits (acquire then decides).
  void* acquire_large_alone(std::size_t bytes);
  // The global arena's grant for either (under global_mutex_, taken here), with the events of
  // other arenas' releases that `a`'s stream must wait on in `waits`; nullopt if none fits.
  std::optional<arena::superblock_grant> grant_for(stream_arena_state& a,
                                                   std::size_t bytes,
                                                   bool large,
                                                   std::vector<cudaEvent_t>& waits);

  // Returns superblocks of `a` (whose mutex the caller holds) to the global arena, ordered by an
  // event recorded now on a's stream, which must be the caller's stream or the legacy one. While
  // `a` is the only arena no event is recorded: its own later acquisitions are ordered by its
  // stream, and another arena's first acquisition synchronises the device (try_allocate).
  void give_back(stream_arena_state& a, std::vector<arena::range> const& ranges) noexcept;

  // Records a's event on a's stream (the caller holds a's mutex) for a release, outside the global
  // lock; the ticket to release under. If the event cannot be made or recorded, waits for the
  // stream instead and returns no_ticket.
  arena::ticket record_release(stream_arena_state& a) noexcept;

  // Whether several stream arenas exist (then they stay several: arenas are never removed). Read
  // without the global lock to skip release_if_alone's lock; false may be stale, true never is.
  [[nodiscard]] bool several_arenas() const noexcept {
    return several_arenas_.load(std::memory_order_relaxed);
  }

  // give_back's first step, for a caller holding global_mutex_: while one arena exists, its
  // ranges go back without a ticket (true); false, with nothing done, once there are several.
  // (`Ranges`: a container of arena::range; an std::array spares a large free an allocation.)
  template <class Ranges>
  bool release_if_alone(Ranges const& ranges) noexcept {
    if (by_id_.size() != 1) {
      return false;
    }
    // No owners_ entry to erase: the map is filled when a second arena comes, and by_id_ never
    // shrinks. (Erasing from the empty std::map cost about 40 instructions per operation on the
    // rows with large blocks.)
    for (auto const& r : ranges) {
      release_range(r, arena::no_ticket);
    }
    unordered_releases_ = true;
    return true;
  }

  // Superblocks back to the global arena with ticket `t`; the caller holds global_mutex_. A range
  // the global arena refuses (a broken invariant) is logged, and the others still go back.
  template <class Ranges>
  void release_ranges(Ranges const& ranges, arena::ticket t) noexcept {
    for (auto const& r : ranges) {
      owners_.erase(r.base);
      release_range(r, t);
    }
  }

  void release_range(arena::range const& r, arena::ticket t) noexcept {
    try {
      global_->release(r.base, r.size, t);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error,
               std::string{"arena_memory_resource: cannot return a superblock: "} + e.what());
    }
  }

  // A large block (try_allocate), freed:
  // - while the freeing stream's arena `a` (whose mutex the caller holds) is the only arena,
  //   goes back to the global arena at once, with no event (as give_back alone);
  // - with several arenas, stays in `a` as an entirely free superblock if a's share has room
  //   (keep_large): no CUDA call; else goes back at once, ordered by a's event;
  // - where the freeing stream has no arena, goes back after waiting for that stream.
  // false if `p` is not a large block; a size other than the allocated one throws, frees nothing.
  bool deallocate_large(stream_arena_state* a,
                        stream_key const& key,
                        std::uintptr_t p,
                        std::size_t bytes);

  // One arena (the freeing stream's): the large block at `p` goes back to the global arena at
  // once, under the global lock alone, as deallocate_large would. False, with nothing done, if
  // there are several arenas (deallocate_large then checks the size) or no large block starts at
  // `p`; alone, a size other than the allocated one throws and frees nothing.
  bool release_large_alone(std::uintptr_t p, std::size_t bytes);
  // release_large_alone's check and release, for a caller that holds global_mutex_ and has seen
  // that one arena exists (release_large_alone; deallocate_large for a block not in that arena).
  bool release_large_locked(std::uintptr_t p, std::size_t bytes);
  // Whether a large block starts at `p` (the caller holds global_mutex_); throws
  // rmm::logic_error if it does with another size than `bytes`.
  [[nodiscard]] bool is_large_block(std::uintptr_t p, std::size_t bytes) const;
  // Throws rmm::logic_error naming both sizes if `allocated` (a large block's size at `p`, 0 for
  // none) is neither 0 nor `bytes`; the message built out of line, so that the test inlines.
  static void expect_large_size(std::uintptr_t p, std::size_t bytes, std::size_t allocated);
  [[noreturn]] static void throw_large_size(std::uintptr_t p, std::size_t bytes, std::size_t got);

  // Several arenas: the large block at `p` stays in `a` (the freeing stream's arena; the caller
  // holds its mutex and global_mutex_) as an entirely free superblock while a's entirely free
  // superblocks stay within its share. Its stream reuses it with no CUDA call; it goes back to the
  // global arena like any superblock (the keep rule, reclaim), with one event for the batch.
  // Without it each large free went through the global arena and recorded an event: with 2 to
  // 16 threads on their own streams drawing up to 64 MiB, 0.33-0.67 M ops/s in aggregate against
  // 4-6 on one thread (arena.md, "Large requests"). false, nothing changed, if the share has no
  // room or bookkeeping cannot grow.
  bool keep_large(stream_arena_state& a, std::uintptr_t p, std::size_t bytes) noexcept;

  // Slow path: the block belongs to another stream's arena. Wait for the freeing stream so that
  // the owner may reuse the block without further ordering, then hand it to the owner. The owner
  // cannot release the superblock concurrently: the block is still allocated in it.
  void deallocate_cross_stream(stream_key const& key, std::uintptr_t p, std::size_t bytes);

  std::vector<stream_arena_state*> snapshot() {
    std::shared_lock<std::shared_mutex> lock{stream_map_mutex_};
    std::vector<stream_arena_state*> out;
    out.reserve(streams_.size());
    for (auto const& [k, s] : streams_) {
      out.push_back(s.get());
    }
    return out;
  }

  // Step 1 of out of memory: the calling stream's arena and the legacy default stream's arena
  // return their entirely free superblocks, ordered by an event recorded now. Only these streams
  // are certainly alive and nameable by this thread: another created stream may have been
  // destroyed since its last call, and another thread's per-thread stream cannot be named.
  void reclaim_nameable(stream_arena_state& own) {
    std::vector<stream_arena_state*> arenas{&own};
    if (own.key.handle != cudaStreamLegacy) {
      if (stream_arena_state* legacy = find_in_map(stream_key{cudaStreamLegacy, {}}); legacy) {
        arenas.push_back(legacy);
      }
    }
    for (stream_arena_state* s : arenas) {
      std::lock_guard<spin_mutex> lock{s->mutex};
      auto const ranges = s->host.release_free_superblocks();
      if (!ranges.empty()) {
        give_back(*s, ranges);
      }
    }
  }

  // Step 2 (last resort): with no arena able to free or release and no arena being created,
  // synchronise the device; then every free block's last use is complete, so every entirely free
  // superblock goes back without a ticket and the remembered tickets are dropped.
  void reclaim_all() {
    std::unique_lock<std::shared_mutex> map_lock{stream_map_mutex_};
    std::vector<std::unique_lock<spin_mutex>> locks;
    locks.reserve(by_id_.size());
    for (stream_arena_state* s : by_id_) {  // id order
      locks.emplace_back(s->mutex);
    }
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    std::lock_guard<spin_mutex> glock{global_mutex_};
    unordered_releases_ = false;  // ordered by the synchronisation above
    for (stream_arena_state* s : by_id_) {
      release_ranges(s->host.release_free_superblocks(), arena::no_ticket);
    }
    global_->clear_tickets();
  }

  // The report (detail/mechanics/arena_oom.hpp) over the global and every stream arena; with
  // dump_log_on_failure, the arenas' state goes to the log first.
  [[noreturn]] void fail(std::size_t bytes, cuda::stream_ref stream, char const* why) {
    arena_figures figures{global_->size(), 0, 0};
    std::string dump;
    {
      std::lock_guard<spin_mutex> glock{global_mutex_};
      figures.free_bytes = global_->free_bytes();
      figures.largest    = global_->largest_free_block();
      if (dump_log_on_failure_) {
        dump = global_->describe();
      }
    }
    for (stream_arena_state* s : snapshot()) {
      std::lock_guard<spin_mutex> lock{s->mutex};
      figures.free_bytes += s->host.free_bytes();
      figures.largest = std::max(figures.largest, s->host.largest_free_block());
      if (dump_log_on_failure_) {
        dump += "stream arena " + std::to_string(s->id) + " (stream " + arena_stream_name(s->key) +
                "): " + s->host.describe();
      }
    }
    out_of_memory_report report =
        arena_oom_report(bytes, stream.get(), figures, why, bound_device());
    if (dump_log_on_failure_) {
      rmm::log(level_enum::error, to_string(report) + "\narena_memory_resource state:\n" + dump);
      rmm::flush_log();
    }
    throw rmm::out_of_memory{std::move(report)};
  }

  mutable cuda::mr::any_resource<cuda::mr::device_accessible> upstream_;
  bool dump_log_on_failure_;
  std::uint64_t id_;
  void* base_{};

  std::shared_mutex stream_map_mutex_;  // guards streams_
  std::unordered_map<stream_key, std::unique_ptr<stream_arena_state>, stream_key_hash> streams_;

  spin_mutex global_mutex_;  // guards global_, owners_, by_id_, unordered_releases_
  std::optional<arena::global_arena> global_;
  std::map<std::uintptr_t, stream_arena_state*> owners_;  // superblock base -> owning arena
  std::vector<stream_arena_state*> by_id_;                // ticket - 1 -> arena
  finished_threads finished_;  // per-thread streams of exited threads, whose arenas are free
  // Set when the first arena, alone, returns superblocks without an event; cleared by the next
  // device synchronisation. Never set again once a second arena exists.
  bool unordered_releases_{false};
  // Superblocks a stream arena takes at once for a small request (see try_allocate): 16 MiB.
  static constexpr std::size_t batch_superblocks = 8;
  // A batch is one chunk of the stream arena's index: one leaf of its class tree.
  static_assert(batch_superblocks * arena::superblock_size ==
                arena::chunk_stream_arena::chunk_size);
  // keep_bytes(): written under stream_map_mutex_ when a stream arena is created; read by frees.
  std::atomic<std::size_t> keep_bytes_{0};
  // several_arenas(): by_id_.size() > 1, written under global_mutex_ as arenas are registered.
  std::atomic<bool> several_arenas_{false};
};

}  // namespace rmm::mr::detail

#include <rmm/mr/detail/mechanics/arena_state_frees.hpp>
#include <rmm/mr/detail/mechanics/arena_state_grants.hpp>
