// finished_threads: a watched per-thread default stream's key is posted when its thread exits (and
// not before), once per watch, to every live board that watched it; a board destroyed first is
// never touched. Host only: the keys are never passed to CUDA.
#include <rmm/mr/detail/mechanics/finished_threads.hpp>

#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using rmm::mr::detail::finished_threads;
using rmm::mr::detail::stream_key;

stream_key my_per_thread_key() { return stream_key::of(cuda::stream_ref{cudaStreamPerThread}); }

}  // namespace

TEST_CASE("finished_threads: a thread's key is posted when it exits, not before",
          "[finished_threads]") {
  finished_threads board;
  stream_key theirs{};
  CHECK_FALSE(board.take().has_value());
  std::thread t{[&] {
    theirs = my_per_thread_key();
    board.watch(theirs);
    CHECK(board.size() == 0);  // still running
  }};
  t.join();
  REQUIRE(board.size() == 1);
  auto const k = board.take();
  REQUIRE(k.has_value());
  CHECK(*k == theirs);
  CHECK(k->per_thread());
  CHECK(*k != my_per_thread_key());
  CHECK_FALSE(board.take().has_value());  // taken once
}

TEST_CASE("finished_threads: many threads, every key once, most recent first",
          "[finished_threads]") {
  finished_threads board;
  std::vector<stream_key> keys;
  for (int i = 0; i < 16; ++i) {  // one after another: the posting order is the exit order
    std::thread t{[&] {
      keys.push_back(my_per_thread_key());
      board.watch(keys.back());
    }};
    t.join();
  }
  REQUIRE(board.size() == keys.size());
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    auto const k = board.take();
    REQUIRE(k.has_value());
    CHECK(*k == *it);
  }
  CHECK(board.size() == 0);
}

TEST_CASE("finished_threads: concurrent threads and takers lose no key", "[finished_threads]") {
  finished_threads board;
  constexpr std::size_t n = 64;
  std::vector<stream_key> posted(n);
  std::vector<stream_key> taken;
  std::mutex taken_mutex;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      posted[i] = my_per_thread_key();
      board.watch(posted[i]);
      if (auto const k = board.take()) {  // takers race with the exits of the others
        std::lock_guard<std::mutex> lock{taken_mutex};
        taken.push_back(*k);
      }
    });
  }
  for (auto& t : threads) {
    t.join();  // returns after the thread's thread_local destructors: every key is posted
  }
  while (auto const k = board.take()) {
    taken.push_back(*k);
  }
  REQUIRE(taken.size() == n);
  for (auto const& k : posted) {
    CHECK(std::count(taken.begin(), taken.end(), k) == 1);
  }
}

TEST_CASE("finished_threads: put_back, several boards, and a board destroyed first",
          "[finished_threads]") {
  finished_threads a;
  auto b = std::make_unique<finished_threads>();
  stream_key theirs{};
  std::thread t{[&] {
    theirs = my_per_thread_key();
    a.watch(theirs);
    b->watch(theirs);
    b.reset();  // destroyed before the thread exits: its notice must not post to it
  }};
  t.join();
  REQUIRE(a.size() == 1);
  auto const k = a.take();
  REQUIRE(k.has_value());
  a.put_back(*k);
  CHECK(a.size() == 1);
  CHECK(a.take() == k);
}
