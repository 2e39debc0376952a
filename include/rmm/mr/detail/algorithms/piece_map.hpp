/**
 * @file piece_map.hpp
 * @brief Which part of a sharded pool owns an address: a sorted array of disjoint address ranges,
 * read without a lock (a sequence lock) on every deallocation, written rarely under a lock.
 * A host structure: no CUDA calls. Design note: pool_shards.md.
 */
#pragma once

#include <rmm/mr/detail/algorithms/spin_mutex.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace rmm::mr::detail {

/**
 * @brief Disjoint ranges [base, base + size), each with an owner number, with lookups that take
 * no lock and write no shared memory.
 *
 * Why a sequence lock and a fixed array: lookups run on every deallocation of a sharded pool,
 * from every thread at once; a reader-writer lock would make every reader write the lock's cache
 * line, which is the contention sharding removes. Writers (a shard borrowing or returning a
 * piece) are rare. The array never moves, so a reader that races with a writer reads stale but
 * valid memory, notices the changed sequence number and retries. Every field is an atomic, so
 * there is no data race in the C++ sense (and ThreadSanitizer agrees).
 *
 * Thread safety: find() from any number of threads, concurrently with insert()/erase() (which
 * serialise among themselves).
 */
class piece_map {
 public:
  using owner_t = std::uint32_t;

  /// Room for this many ranges unless the constructor is told otherwise.
  static constexpr std::size_t default_capacity = 4096;

  /**
   * @brief An empty map with room for @p capacity ranges.
   * @throws std::invalid_argument if @p capacity is 0; std::bad_alloc.
   */
  explicit piece_map(std::size_t capacity = default_capacity)
      : entries_{capacity == 0 ? nullptr : std::make_unique<entry[]>(capacity)},
        capacity_{capacity} {
    if (capacity == 0) {
      throw std::invalid_argument("piece_map: capacity must be positive");
    }
  }

  /**
   * @brief Adds [base, base + size) owned by @p owner.
   * @return false (and changes nothing) if the map is full.
   * @throws std::invalid_argument if @p size is 0, the range wraps around, or it overlaps a range
   * already in the map.
   */
  bool insert(std::uintptr_t base, std::size_t size, owner_t owner) {
    if (size == 0 || base + size < base) {
      throw std::invalid_argument("piece_map: invalid range at " + std::to_string(base) + " of " +
                                  std::to_string(size) + " bytes");
    }
    std::lock_guard<spin_mutex> lock(write_mtx_);
    std::size_t const n   = count_.load(std::memory_order_relaxed);
    std::size_t const pos = lower_bound(base, n);  // first entry with base >= `base`
    if ((pos < n && entries_[pos].base.load(std::memory_order_relaxed) < base + size) ||
        (pos > 0 && end_of(pos - 1) > base)) {
      throw std::invalid_argument("piece_map: range at " + std::to_string(base) + " of " +
                                  std::to_string(size) + " bytes overlaps one in the map");
    }
    if (n == capacity_) {
      return false;
    }
    begin_write();
    for (std::size_t i = n; i > pos; --i) {
      copy_entry(i, i - 1);
    }
    store_entry(pos, base, size, owner);
    count_.store(n + 1, std::memory_order_release);
    end_write();
    return true;
  }

  /**
   * @brief Removes the range that starts at @p base.
   * @return whether there was one.
   */
  bool erase(std::uintptr_t base) noexcept {
    std::lock_guard<spin_mutex> lock(write_mtx_);
    std::size_t const n   = count_.load(std::memory_order_relaxed);
    std::size_t const pos = lower_bound(base, n);
    if (pos == n || entries_[pos].base.load(std::memory_order_relaxed) != base) {
      return false;
    }
    begin_write();
    for (std::size_t i = pos; i + 1 < n; ++i) {
      copy_entry(i, i + 1);
    }
    count_.store(n - 1, std::memory_order_release);
    end_write();
    return true;
  }

  /**
   * @brief The owner of the range that contains @p addr, or nullopt if none does. Takes no lock;
   * retries while a writer is changing the map.
   */
  [[nodiscard]] std::optional<owner_t> find(std::uintptr_t addr) const noexcept {
    for (;;) {
      std::uint64_t const before = seq_.load(std::memory_order_acquire);
      if ((before & 1U) != 0) {
        spin_mutex::relax();
        continue;
      }
      std::size_t n = count_.load(std::memory_order_acquire);
      n             = n > capacity_ ? capacity_ : n;
      std::optional<owner_t> found;
      std::size_t const pos = upper_bound(addr, n);  // first entry with base > addr
      if (pos > 0) {
        entry const& e         = entries_[pos - 1];
        std::uintptr_t const b = e.base.load(std::memory_order_acquire);
        std::size_t const s    = e.size.load(std::memory_order_acquire);
        owner_t const o        = e.owner.load(std::memory_order_acquire);
        if (addr >= b && addr - b < s) {
          found = o;
        }
      }
      if (seq_.load(std::memory_order_relaxed) == before) {
        return found;
      }
    }
  }

  /// @brief The number of ranges (a snapshot).
  [[nodiscard]] std::size_t size() const noexcept { return count_.load(std::memory_order_relaxed); }

  /// @brief The most ranges the map can hold.
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct entry {
    std::atomic<std::uintptr_t> base{0};
    std::atomic<std::size_t> size{0};
    std::atomic<owner_t> owner{0};
  };

  // The entries are stored with release and loaded with acquire (plain moves on x86): a reader
  // that loads any value a writer stored also sees the odd sequence number stored before it, so
  // its final check fails and it retries. (No fences: GCC's ThreadSanitizer does not model them.)
  void begin_write() noexcept {
    seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void end_write() noexcept {
    seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  void copy_entry(std::size_t to, std::size_t from) noexcept {
    store_entry(to,
                entries_[from].base.load(std::memory_order_relaxed),
                entries_[from].size.load(std::memory_order_relaxed),
                entries_[from].owner.load(std::memory_order_relaxed));
  }
  void store_entry(std::size_t i, std::uintptr_t base, std::size_t size, owner_t owner) noexcept {
    entries_[i].base.store(base, std::memory_order_release);
    entries_[i].size.store(size, std::memory_order_release);
    entries_[i].owner.store(owner, std::memory_order_release);
  }

  [[nodiscard]] std::uintptr_t end_of(std::size_t i) const noexcept {
    return entries_[i].base.load(std::memory_order_relaxed) +
           entries_[i].size.load(std::memory_order_relaxed);
  }

  // First index in [0, n) whose base is >= key (n if none). May read torn data during a write:
  // every index it touches stays below n <= capacity_, and the caller checks the sequence.
  [[nodiscard]] std::size_t lower_bound(std::uintptr_t key, std::size_t n) const noexcept {
    std::size_t lo = 0;
    std::size_t hi = n;
    while (lo < hi) {
      std::size_t const mid = lo + (hi - lo) / 2;
      if (entries_[mid].base.load(std::memory_order_acquire) < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // First index in [0, n) whose base is > key (n if none).
  [[nodiscard]] std::size_t upper_bound(std::uintptr_t key, std::size_t n) const noexcept {
    std::size_t lo = 0;
    std::size_t hi = n;
    while (lo < hi) {
      std::size_t const mid = lo + (hi - lo) / 2;
      if (entries_[mid].base.load(std::memory_order_acquire) <= key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  std::unique_ptr<entry[]> entries_;
  std::size_t capacity_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> seq_{0};  // odd while a writer changes the entries
  spin_mutex write_mtx_;
};

}  // namespace rmm::mr::detail
