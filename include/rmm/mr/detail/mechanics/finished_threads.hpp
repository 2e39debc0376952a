/**
 * @file finished_threads.hpp
 * @brief The per-thread default streams of a resource whose threads have exited, so that a new
 * thread's per-thread stream can take over the state a finished one left behind
 * (arena_memory_resource's stream arenas).
 */
#pragma once

#include <rmm/mr/detail/mechanics/stream_key.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Keys of per-thread default streams whose threads have exited. Not for direct use.
 *
 * A thread that exits can no longer use its per-thread default stream, and no other thread can
 * name it, so a resource keyed by stream would keep that stream's state (and memory) forever: a
 * program that starts new threads for new work makes new state for every thread. watch() arranges
 * that when the calling thread exits, its key is posted here; take() hands the resource one such
 * key, whose state it may give to a new thread's stream after ordering the finished stream's work
 * before the new one (the finished stream cannot be named: a device synchronisation).
 *
 * The notice is a `thread_local` that holds only a weak reference to the board, so a thread that
 * exits after the resource is destroyed posts nothing. Thread-safe.
 */
class finished_threads {
 public:
  /// @throws std::bad_alloc
  finished_threads() : board_{std::make_shared<board>()} {}

  /**
   * @brief When the calling thread exits, post @p key (a per-thread default stream of this
   * thread). Never throws: without memory for the notice the key is simply never posted (its
   * state is not reused, as before).
   */
  void watch(stream_key const& key) noexcept {
    try {
      auto& mine = notices();
      mine.entries.erase(std::remove_if(mine.entries.begin(),
                                        mine.entries.end(),
                                        [](auto const& e) { return e.first.expired(); }),
                         mine.entries.end());
      mine.entries.emplace_back(board_, key);
    } catch (std::bad_alloc const&) {
    }
  }

  /// @brief A key whose thread has exited (the most recent first), removed from the board; or
  /// none.
  [[nodiscard]] std::optional<stream_key> take() noexcept {
    std::lock_guard<std::mutex> lock{board_->mutex};
    if (board_->keys.empty()) {
      return std::nullopt;
    }
    stream_key const k = board_->keys.back();
    board_->keys.pop_back();
    return k;
  }

  /// @brief Puts back a key take() gave (its state was not taken over after all).
  void put_back(stream_key const& key) noexcept { board_->post(key); }

  /// @brief Keys posted and not yet taken.
  [[nodiscard]] std::size_t size() const noexcept {
    std::lock_guard<std::mutex> lock{board_->mutex};
    return board_->keys.size();
  }

 private:
  struct board {
    std::mutex mutex;
    std::vector<stream_key> keys;

    void post(stream_key const& key) noexcept {
      try {
        std::lock_guard<std::mutex> lock{mutex};
        keys.push_back(key);
      } catch (std::bad_alloc const&) {  // not posted: that state is never reused
      }
    }
  };

  // One per thread, for every resource the thread asked to watch it: posts on thread exit.
  struct thread_notices {
    std::vector<std::pair<std::weak_ptr<board>, stream_key>> entries;
    thread_notices()                                 = default;
    thread_notices(thread_notices const&)            = delete;
    thread_notices& operator=(thread_notices const&) = delete;
    ~thread_notices() {
      for (auto const& [weak, key] : entries) {
        if (auto const b = weak.lock()) {
          b->post(key);
        }
      }
    }
  };

  static thread_notices& notices() noexcept {
    static thread_local thread_notices n;
    return n;
  }

  std::shared_ptr<board> board_;
};

}  // namespace rmm::mr::detail
