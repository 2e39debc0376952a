// spin_mutex and spin_lock: mutual exclusion under many threads, try_lock, the contention count,
// and spin_lock's ownership (released at scope end, by unlock(), or by whoever it was moved to;
// released when an exception leaves its scope). Host only.
#include <rmm/mr/detail/algorithms/spin_mutex.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::spin_lock;
using rmm::mr::detail::spin_mutex;

// Whether `m` is free now (takes and gives it back if so).
bool is_free(spin_mutex& m) {
  if (!m.try_lock()) {
    return false;
  }
  m.unlock();
  return true;
}

// Takes the lock, then hands it to a function that keeps it until it returns: the shape of
// stream_ordered_core::allocate_on and allocate_slow.
bool held_inside(spin_lock lock, spin_mutex& m) {
  static_cast<void>(lock);
  return !is_free(m);
}

}  // namespace

TEST_CASE("spin_mutex: try_lock fails while held, succeeds once released", "[spin_mutex]") {
  spin_mutex m;
  REQUIRE(m.try_lock());
  CHECK_FALSE(m.try_lock());
  m.unlock();
  CHECK(is_free(m));
  CHECK(m.contentions() == 0);  // try_lock never counts
}

TEST_CASE("spin_mutex: many threads increment a counter without losing an update",
          "[spin_mutex][threads]") {
  spin_mutex m;
  std::size_t counter         = 0;
  constexpr std::size_t n     = 16;
  constexpr std::size_t times = 20000;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      for (std::size_t i = 0; i < times; ++i) {
        spin_lock lock(m);
        ++counter;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(counter == n * times);
  CHECK(is_free(m));
}

TEST_CASE("spin_mutex: a lock found taken is counted as a contention", "[spin_mutex][threads]") {
  spin_mutex m;
  m.lock();
  std::thread waiter{[&] {
    m.lock();  // finds it taken: counts one contention, then waits
    m.unlock();
  }};
  while (m.contentions() == 0) {
    spin_mutex::relax();  // until the waiter has found the lock taken
  }
  m.unlock();
  waiter.join();
  CHECK(m.contentions() == 1);
  CHECK(is_free(m));
}

TEST_CASE("spin_lock: holds its mutex until scope end", "[spin_mutex]") {
  static_assert(!std::is_copy_constructible_v<spin_lock>);
  static_assert(std::is_nothrow_move_constructible_v<spin_lock>);
  spin_mutex m;
  {
    spin_lock lock(m);
    CHECK_FALSE(is_free(m));
  }
  CHECK(is_free(m));
}

TEST_CASE("spin_lock: unlock() releases early, and the destructor then releases nothing",
          "[spin_mutex]") {
  spin_mutex m;
  {
    spin_lock lock(m);
    lock.unlock();
    CHECK(is_free(m));
    m.lock();  // someone else's hold: the destructor below must not release it
  }
  CHECK_FALSE(is_free(m));
  m.unlock();
}

TEST_CASE("spin_lock: a move hands the mutex on; the moved-from lock releases nothing",
          "[spin_mutex]") {
  spin_mutex m;
  {
    spin_lock outer(m);
    CHECK(held_inside(std::move(outer), m));
    CHECK(is_free(m));  // released when the callee's lock ended, not again by `outer`
    m.lock();
  }
  CHECK_FALSE(is_free(m));
  m.unlock();
}

TEST_CASE("spin_lock: an exception leaving its scope releases the mutex", "[spin_mutex]") {
  spin_mutex m;
  CHECK_THROWS_AS(
      [&] {
        spin_lock lock(m);
        throw std::runtime_error("inside");
      }(),
      std::runtime_error);
  CHECK(is_free(m));
}
