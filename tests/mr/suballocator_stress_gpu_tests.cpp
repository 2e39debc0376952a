// Concurrency stress of the stream-ordered suballocators: 16 threads, each on its own stream (or
// on its per-thread default stream), allocate, fill every block with its own pattern on the
// stream, check it before freeing, and hand some blocks to other threads to free on their
// streams. Every live block is also checked against all others for overlap.
#include "../utilities/device_kernels.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#if __has_include(<rmm/mr/arena_memory_resource.hpp>)
#include <rmm/mr/arena_memory_resource.hpp>
#define RMM_TEST_HAVE_ARENA 1
#endif

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t KiB = 1024;

struct stress_pool {
  static rmm::mr::pool_memory_resource make() {
    return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
  }
};
struct stress_sharded_pool {  // children made at once, one per stream (round robin)
  static rmm::mr::pool_memory_resource make() {
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
    rmm::mr::detail::shared_state<rmm::mr::detail::pool_memory_resource_impl>(pool)
        .enable_sharding();
    return pool;
  }
};
struct stress_fixed_size {
  static rmm::mr::fixed_size_memory_resource make() {
    return rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, 256 * KiB, 64};
  }
};
struct stress_sharded_fixed_size {  // children made at once, one per stream (round robin)
  static rmm::mr::fixed_size_memory_resource make() {
    rmm::mr::fixed_size_memory_resource fixed{rmm::mr::cuda_memory_resource{}, 256 * KiB, 64};
    rmm::mr::detail::shared_state<rmm::mr::detail::fixed_size_memory_resource_impl>(fixed)
        .enable_sharding();
    return fixed;
  }
};
struct stress_binning {
  static rmm::mr::binning_memory_resource make() {
    return rmm::mr::binning_memory_resource{
        rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}, 10, 17};
  }
};
#ifdef RMM_TEST_HAVE_ARENA
struct stress_arena {
  static rmm::mr::arena_memory_resource make() {
    return rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, std::size_t{1} << 30};
  }
};
#define RMM_STRESS_FACTORIES                                                                      \
  stress_pool, stress_sharded_pool, stress_fixed_size, stress_sharded_fixed_size, stress_binning, \
      stress_arena
#else
#define RMM_STRESS_FACTORIES \
  stress_pool, stress_sharded_pool, stress_fixed_size, stress_sharded_fixed_size, stress_binning
#endif

// Live blocks of all threads, to prove that no two overlap.
class live_set {
 public:
  std::size_t add(void* p, std::size_t n) {
    auto const b = reinterpret_cast<std::uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mtx_);
    std::size_t overlaps = 0;
    auto next            = live_.lower_bound(b);
    if (next != live_.end() && next->first < b + n) {
      ++overlaps;
    }
    if (next != live_.begin() && std::prev(next)->first + std::prev(next)->second > b) {
      ++overlaps;
    }
    live_.emplace(b, n);
    return overlaps;
  }
  void remove(void* p) {
    std::lock_guard<std::mutex> lock(mtx_);
    live_.erase(reinterpret_cast<std::uintptr_t>(p));
  }

 private:
  std::mutex mtx_;
  std::map<std::uintptr_t, std::size_t> live_;
};

struct block {
  void* ptr;
  std::size_t bytes;
  std::uint32_t seed;
};

// Blocks handed from one thread to another, already checked: the receiver frees them on its own
// stream (a cross-stream free).
class mailbox {
 public:
  void post(block b) {
    std::lock_guard<std::mutex> lock(mtx_);
    q_.push_back(b);
  }
  bool take(block& b) {
    std::lock_guard<std::mutex> lock(mtx_);
    if (q_.empty()) {
      return false;
    }
    b = q_.front();
    q_.pop_front();
    return true;
  }

 private:
  std::mutex mtx_;
  std::deque<block> q_;
};

struct stress_result {
  std::atomic<std::size_t> mismatches{0};
  std::atomic<std::size_t> overlaps{0};
  std::atomic<std::size_t> errors{0};
  std::atomic<std::size_t> checked{0};
};

template <typename Resource>
void stress_thread(Resource mr,
                   rmm::cuda_stream_view stream,
                   int t,
                   live_set& live,
                   mailbox& box,
                   stress_result& result,
                   std::size_t max_bytes) {
  std::mt19937_64 rng{static_cast<std::uint64_t>(1000 + t)};
  std::uniform_int_distribution<std::size_t> size_dist{1, max_bytes};
  std::vector<block> mine;
  auto release = [&](block const& b, bool check) {
    if (check) {
      result.mismatches +=
          rmm::test::count_pattern_mismatches(b.ptr, b.bytes, b.seed, stream.value());
      ++result.checked;
    }
    live.remove(b.ptr);
    mr.deallocate(stream, b.ptr, b.bytes, 256);
  };
  for (std::uint32_t i = 0; i < 300; ++i) {
    auto const dice = rng() % 10;
    if (dice < 5 || mine.empty()) {
      block b{nullptr, size_dist(rng), static_cast<std::uint32_t>(t) * 100000U + i};
      b.ptr = mr.allocate(stream, b.bytes, 256);
      result.overlaps += live.add(b.ptr, b.bytes);
      rmm::test::fill_pattern(b.ptr, b.bytes, b.seed, stream.value());
      mine.push_back(b);
    } else if (dice < 8) {
      auto const k = rng() % mine.size();
      release(mine[k], true);
      mine[k] = mine.back();
      mine.pop_back();
    } else if (dice < 9) {
      auto const k  = rng() % mine.size();
      block const b = mine[k];
      mine[k]       = mine.back();
      mine.pop_back();
      result.mismatches +=
          rmm::test::count_pattern_mismatches(b.ptr, b.bytes, b.seed, stream.value());
      ++result.checked;
      box.post(b);  // checked and synchronised: another thread frees it on its stream
    } else {
      block b{};
      if (box.take(b)) {
        release(b, false);
      }
    }
  }
  for (auto const& b : mine) {
    release(b, true);
  }
}

template <typename Resource>
void run_stress(Resource mr, bool per_thread_default_stream, std::size_t max_bytes = 256 * KiB) {
  constexpr int num_threads = 16;
  live_set live;
  mailbox box;
  stress_result result;
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        if (per_thread_default_stream) {
          stress_thread(mr, rmm::cuda_stream_per_thread, t, live, box, result, max_bytes);
          rmm::cuda_stream_per_thread.synchronize();
        } else {
          rmm::cuda_stream stream;
          stress_thread(mr, stream.view(), t, live, box, result, max_bytes);
          stream.synchronize();
        }
      } catch (...) {
        ++result.errors;
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  block b{};
  while (box.take(b)) {
    live.remove(b.ptr);
    mr.deallocate(rmm::cuda_stream_default, b.ptr, b.bytes, 256);
  }
  CHECK(result.errors == 0);
  CHECK(result.overlaps == 0);
  CHECK(result.mismatches == 0);
  CHECK(result.checked > 1000);
}

}  // namespace

TEMPLATE_TEST_CASE("stress: 16 threads x 16 streams, every block checked before it is freed",
                   "[gpu][stress]",
                   RMM_STRESS_FACTORIES) {
  run_stress(TestType::make(), false);
}

TEMPLATE_TEST_CASE("stress: 16 threads on their per-thread default streams",
                   "[gpu][stress]",
                   RMM_STRESS_FACTORIES) {
  run_stress(TestType::make(), true);
}

#ifdef RMM_TEST_HAVE_ARENA
// Requests up to 4 MiB: about half are large (2 MiB or more), which the arena takes exactly from
// the global arena and, with several streams, keeps in the freeing stream's arena when freed;
// blocks freed on other threads' streams exercise the large cross-stream path too.
TEST_CASE("stress: the arena's large blocks, 16 threads on 16 streams and on per-thread streams",
          "[gpu][stress]") {
  for (bool const ptds : {false, true}) {
    INFO("per-thread default streams: " << ptds);
    run_stress(
        rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, std::size_t{8} << 30},
        ptds,
        4 * 1024 * KiB);
  }
}
#endif
