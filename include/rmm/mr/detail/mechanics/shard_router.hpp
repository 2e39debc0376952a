/**
 * @file shard_router.hpp
 * @brief Which shard serves a stream, which shard owns an address, and what is tried after a child
 * runs out of memory: shared by the resources that shard once their threads contend
 * (pool_memory_resource, fixed_size_memory_resource). Design note: pool_shards.md.
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/piece_map.hpp>
#include <rmm/mr/detail/mechanics/stream_key.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda/stream_ref>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief The child shards of a sharded resource and the routes to them. Not for direct use.
 *
 * Until enable() is called, every stream and every address belongs to the root (which the owner
 * keeps itself). After it, each stream is assigned the child shard with the fewest users (lowest
 * number first; at most `limit` children, made on first use), remembered in a table
 * (`max_assignments` streams, then it starts again) and in a per-thread cache of four routes. A
 * child's users are the threads' cached routes to it (given back when a route is evicted or its
 * thread exits) plus the created streams assigned to it: so a program that starts new threads
 * for new work, each on its per-thread default stream, lands them on the children (and the
 * memory) that the finished threads used, rather than spreading over every child in turn, while
 * created streams, which outlive their threads, are spread over the children. A child
 * records the memory it holds in the piece map under its number (1, 2, ...), and owner_of()
 * finds the child that owns an address with one lock-free lookup (nullptr: the root's). Which
 * child serves a stream is a matter of speed and memory, never of safety: each shard keeps the
 * stream-ordered protocol over its own memory.
 *
 * Destroying the router destroys the children (each gives its memory back to the root, which must
 * outlive the router) before the piece map.
 *
 * Thread-safe. The routing mutex is never held while a shard's lock is taken (making a child takes
 * no lock).
 */
template <typename Shard>
class shard_router {
 public:
  using owner_t = piece_map::owner_t;

  /// At most this many children (fewer on machines with fewer hardware threads).
  static constexpr std::size_t max_children = 32;

  /// @brief A router allowing @p limit children (0: the resource never shards).
  /// @throws std::bad_alloc
  explicit shard_router(std::size_t limit) : limit_{std::min(limit, max_children)} {}

  shard_router(shard_router const&)            = delete;
  shard_router& operator=(shard_router const&) = delete;
  ~shard_router()                              = default;

  /// The default child limit: the hardware threads, at least 2 and at most max_children.
  static std::size_t default_limit() noexcept {
    std::size_t const hw = std::thread::hardware_concurrency();
    return std::clamp<std::size_t>(hw, 2, max_children);
  }

  /// @brief How many children the resource may have (0: it never shards).
  [[nodiscard]] std::size_t limit() const noexcept { return limit_; }

  /// @brief Shards from now on (does nothing if the limit is 0). Thread-safe.
  /// @throws std::bad_alloc (the piece map), leaving the resource unsharded.
  void enable() {
    if (limit_ == 0) {
      return;
    }
    std::lock_guard<std::mutex> lock(mtx_);
    if (pieces_ == nullptr) {
      pieces_ = std::make_unique<piece_map>();
      sharded_.store(true, std::memory_order_release);
    }
  }

  /// @brief Whether enable() has taken effect.
  [[nodiscard]] bool sharded() const noexcept { return sharded_.load(std::memory_order_acquire); }

  /**
   * @brief The child that serves @p stream; made with `make(pieces, owner)` (returning a
   * std::unique_ptr<Shard>) if its turn has come and it does not exist yet. Only once sharded().
   */
  template <typename Make>
  Shard& route(cuda::stream_ref stream, Make&& make) {
    static thread_local route_cache routes;
    stream_key const key = stream_key::of(stream);
    if (Shard* s = routes.find(id_, key)) {
      return *s;
    }
    std::size_t const index = assign(key, make);  // counts the route remembered below
    Shard* s                = children_[index].load(std::memory_order_relaxed);
    routes.remember(id_, key, s, loads_, index);
    return *s;
  }

  /// @brief The child that owns @p ptr, or nullptr if the root does (or the resource has not
  /// sharded). No lock.
  [[nodiscard]] Shard* owner_of(void const* ptr) const noexcept {
    if (!sharded()) {
      return nullptr;
    }
    auto const owner = pieces_->find(reinterpret_cast<std::uintptr_t>(ptr));
    if (!owner) {
      return nullptr;
    }
    return children_[*owner - 1].load(std::memory_order_acquire);
  }

  /**
   * @brief The out-of-memory path of a sharded resource, after @p child could not serve a request
   * even after its own last resort: every other child gives its free memory back to the root
   * (`release()`), then the request is tried again on the child (`try_child()`), then on the root
   * (`try_root()`); each try returns the allocation or throws rmm::out_of_memory. If the root fails
   * too, throws rmm::out_of_memory carrying `merge_report(e)`, the report made from the root's
   * exception `e` (and the child's first one, which the caller holds). Other exceptions pass
   * through. Kept here so that the resources that shard try in one order and fail alike; only the
   * tries and the report's figures are theirs.
   */
  template <typename TryChild, typename TryRoot, typename MergeReport>
  void* retry_after_child_oom(Shard& child,
                              TryChild&& try_child,
                              TryRoot&& try_root,
                              MergeReport&& merge_report) {
    for_each_child([&](Shard& c) {
      if (&c != &child) {
        c.release();
      }
    });
    try {
      return try_child();
    } catch (rmm::out_of_memory const&) {
    }
    try {
      return try_root();
    } catch (rmm::out_of_memory const& e) {
      throw rmm::out_of_memory(merge_report(e));
    }
  }

  /// @brief Calls @p f on every child made so far.
  template <typename F>
  void for_each_child(F&& f) const {
    for (std::size_t i = 0; i < limit_; ++i) {
      if (Shard* c = children_[i].load(std::memory_order_acquire)) {
        f(*c);
      }
    }
  }

  /// @brief Children made so far.
  [[nodiscard]] std::size_t num_children() const noexcept {
    std::size_t n = 0;
    for_each_child([&](Shard const&) { ++n; });
    return n;
  }

 private:
  // Streams remembered for round-robin assignment; beyond this the table starts again (which
  // moves streams to other shards: a matter of speed, not of safety).
  static constexpr std::size_t max_assignments = 4096;

  // Per child, how many threads' route caches hold a route to it. Shared with those caches, which
  // may outlive the router (a thread that exits after the resource is destroyed).
  using load_array = std::array<std::atomic<std::uint32_t>, max_children>;

  // A thread's recent routes (per Shard type), found without a lock; each counts in its child's
  // load until it is evicted or the thread exits.
  class route_cache {
   public:
    route_cache()                              = default;
    route_cache(route_cache const&)            = delete;
    route_cache& operator=(route_cache const&) = delete;
    ~route_cache() {
      for (auto& e : entries_) {
        drop(e);
      }
    }

    [[nodiscard]] Shard* find(std::uint64_t resource, stream_key const& key) const noexcept {
      for (auto const& e : entries_) {
        if (e.resource == resource && e.key == key) {
          return e.shard;
        }
      }
      return nullptr;
    }

    // Takes over one count of (*loads)[index], made by assign().
    void remember(std::uint64_t resource,
                  stream_key const& key,
                  Shard* shard,
                  std::shared_ptr<load_array> const& loads,
                  std::size_t index) noexcept {
      entry& e = entries_[next_];
      next_    = (next_ + 1) % entries_.size();
      drop(e);
      e = entry{resource, key, shard, loads, index};
    }

   private:
    struct entry {
      std::uint64_t resource{};
      stream_key key{};
      Shard* shard{};
      std::shared_ptr<load_array> loads;
      std::size_t index{};
    };

    static void drop(entry& e) noexcept {
      if (e.loads != nullptr) {
        (*e.loads)[e.index].fetch_sub(1, std::memory_order_relaxed);
        e.loads.reset();
      }
      e.resource = 0;  // never a resource's id
    }

    std::array<entry, 4> entries_{};
    std::size_t next_{};
  };

  // The child for `key`: the one it had, else the one with the fewest users (lowest number
  // first, so that existing children are reused before new ones are made). Counts one route to
  // it. Lock held.
  template <typename Make>
  std::size_t assign(stream_key const& key, Make& make) {
    std::lock_guard<std::mutex> lock(mtx_);
    std::size_t index = limit_;
    for (auto const& [k, i] : assignments_) {
      if (k == key) {
        index = i;
        break;
      }
    }
    if (index == limit_) {
      index = least_used();
      if (children_[index].load(std::memory_order_relaxed) == nullptr) {
        owned_[index] = make(*pieces_, static_cast<owner_t>(index + 1));
        children_[index].store(owned_[index].get(), std::memory_order_release);
      }
      if (assignments_.size() >= max_assignments) {
        assignments_.clear();
        streams_.fill(0);
      }
      assignments_.emplace_back(key, index);
      if (!key.per_thread()) {
        ++streams_[index];
      }
    }
    (*loads_)[index].fetch_add(1, std::memory_order_relaxed);
    return index;
  }

  // A child's users: the live threads that route to it now, and the created streams assigned to
  // it, whose threads may come back (a per-thread default stream ends with its thread, so it is
  // not counted once its thread is gone). Lock held.
  [[nodiscard]] std::size_t least_used() const noexcept {
    std::size_t best     = 0;
    std::uint64_t fewest = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < limit_ && fewest > 0; ++i) {
      std::uint64_t const users =
          std::uint64_t{(*loads_)[i].load(std::memory_order_relaxed)} + streams_[i];
      if (users < fewest) {
        best   = i;
        fewest = users;
      }
    }
    return best;
  }

  std::size_t const limit_;
  std::atomic<bool> sharded_{false};
  std::unique_ptr<piece_map> pieces_;  // made before `sharded_` is set, never replaced
  std::array<std::atomic<Shard*>, max_children> children_{};
  std::array<std::unique_ptr<Shard>, max_children> owned_{};  // destroyed before pieces_
  std::shared_ptr<load_array> loads_{std::make_shared<load_array>()};
  std::mutex mtx_;  // guards assignments_, pieces_'s creation and making children
  std::vector<std::pair<stream_key, std::size_t>> assignments_;  // stream, child index
  std::array<std::uint32_t, max_children> streams_{};  // created streams in assignments_, per child
  std::uint64_t const id_{next_resource_uid()};
};

}  // namespace rmm::mr::detail
