/**
 * @file spin_mutex.hpp
 * @brief A small test-and-test-and-set lock for short critical sections.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace rmm::mr::detail {

/**
 * @brief A lock (Lockable: lock, try_lock, unlock) for the suballocators' short critical sections.
 *
 * Why not std::mutex: on the GPU machine a lock/unlock pair of std::mutex, which are calls into
 * libc, took 16-19 % of a single-threaded pool or fixed-size operation (about 15-20 ns in the
 * profiles of scripts/profile_gpu.sh), and under contention its unlock pays a futex wake system
 * call. Here the uncontended lock is one inlined atomic exchange and the unlock one release
 * store. A waiter spins on a plain load with a pause instruction, then yields its time slice, so
 * threads that outnumber cores still make progress.
 *
 * Not recursive, not fair. Thread-safety: that is its purpose.
 */
class spin_mutex {
 public:
  spin_mutex()                             = default;
  spin_mutex(spin_mutex const&)            = delete;
  spin_mutex& operator=(spin_mutex const&) = delete;

  /// @brief Takes the lock, waiting as long as needed.
  [[gnu::always_inline]] void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) {
      return;
    }
    lock_contended();
  }

  /// @brief Takes the lock if it is free. @return whether it was taken.
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }

  /// @brief Releases the lock; the caller must hold it.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  /// @brief How many times lock() found the lock taken (a measure of contention; wraps around).
  [[nodiscard]] std::uint32_t contentions() const noexcept {
    return contentions_.load(std::memory_order_relaxed);
  }

  /// @brief A spin-wait hint to the processor (a pause instruction on x86), for callers' loops.
  static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }

 private:
  // Out of line and cold, so that lock() itself inlines into every caller (with this loop inside
  // it GCC kept lock() as a call on the pool's free path).
  [[gnu::noinline, gnu::cold]] void lock_contended() noexcept {
    contentions_.fetch_add(1, std::memory_order_relaxed);
    constexpr unsigned spins_before_yield = 128;
    unsigned spins                        = 0;
    do {
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < spins_before_yield) {
          ++spins;
          relax();
        } else {
          std::this_thread::yield();
        }
      }
    } while (locked_.exchange(true, std::memory_order_acquire));
  }

  std::atomic<bool> locked_{false};
  std::atomic<std::uint32_t> contentions_{0};  // only written when the lock was contended
};

/**
 * @brief Holds a spin_mutex taken at construction until unlock(), destruction, or a move hands it
 * on: std::unique_lock<spin_mutex> with only what the stream-ordered core needs. Its members are
 * all inline. With std::unique_lock, GCC kept unlock() (which may throw std::system_error) out of
 * line, so the pool's allocation hit path ran a call, two flag tests and 4 more instructions
 * per operation to release the lock (docs/benchmarks.md, "Issue 12, forty-second step").
 *
 * Not thread-safe itself: one thread holds and releases it (the mutex it holds is what other
 * threads contend on).
 */
class spin_lock {
 public:
  /// @brief Takes @p m (see spin_mutex::lock).
  [[gnu::always_inline]] explicit spin_lock(spin_mutex& m) noexcept : m_{&m} { m.lock(); }
  spin_lock(spin_lock const&)            = delete;
  spin_lock& operator=(spin_lock const&) = delete;
  spin_lock& operator=(spin_lock&&)      = delete;
  /// @brief Takes over @p other's mutex; @p other then holds none.
  spin_lock(spin_lock&& other) noexcept : m_{other.m_} { other.m_ = nullptr; }
  ~spin_lock() {
    if (m_ != nullptr) {
      m_->unlock();
    }
  }

  /// @brief Releases the mutex early. Precondition: this holds one.
  void unlock() noexcept {
    m_->unlock();
    m_ = nullptr;
  }

 private:
  spin_mutex* m_;
};

}  // namespace rmm::mr::detail
