// Failure and lifetime stress of the stream-ordered suballocators, 16 threads each on its own
// stream: an upstream that fails every k-th request, and one that fails at seeded random, must
// surface as rmm::out_of_memory (or be absorbed by growing elsewhere), leave the resource serving,
// and, once the resource is destroyed, leave nothing allocated upstream. And streams destroyed
// while the blocks allocated on them are in other streams' use, with new streams (which may get
// the destroyed ones' handles) allocating meanwhile: every block is checked before its free.
#include "../utilities/device_kernels.hpp"
#include "../utilities/test_resources.hpp"
#include "policy_adaptor_test_resources.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace faults_test {

using rmm::test::policy_adaptor_fakes::failing_resource;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr int num_threads = 16;

using any_device = cuda::mr::any_resource<cuda::mr::device_accessible>;

// Every suballocator over `upstream`, sized so that 16 threads make it grow many times.
any_device make_suballocator(int which, any_device upstream) {
  switch (which) {
    case 0:
      return rmm::mr::pool_memory_resource{std::move(upstream), 0};
    case 1:
      return rmm::mr::fixed_size_memory_resource{std::move(upstream), 64 * KiB, 4};
    case 2:
      return rmm::mr::binning_memory_resource{
          rmm::mr::pool_memory_resource{std::move(upstream), 0}, 10, 17};
    case 3:
      return rmm::mr::arena_memory_resource{std::move(upstream), std::size_t{1} << 30};
    case 4: {  // the pool, sharded from the start (its children borrow from the root)
      rmm::mr::pool_memory_resource pool{std::move(upstream), 0};
      rmm::mr::detail::shared_state<rmm::mr::detail::pool_memory_resource_impl>(pool)
          .enable_sharding();
      return pool;
    }
    default: {  // fixed_size, sharded from the start (its children borrow chunks from the root)
      rmm::mr::fixed_size_memory_resource fixed{std::move(upstream), 64 * KiB, 4};
      rmm::mr::detail::shared_state<rmm::mr::detail::fixed_size_memory_resource_impl>(fixed)
          .enable_sharding();
      return fixed;
    }
  }
}

constexpr int num_suballocators = 6;

char const* suballocator_name(int which) {
  static char const* const names[] = {
      "pool", "fixed_size", "binning", "arena", "sharded pool", "sharded fixed_size"};
  return names[which];
}

bool is_fixed_size(int which) { return which == 1 || which == 5; }

struct fault_result {
  std::atomic<std::size_t> out_of_memory{0};
  std::atomic<std::size_t> served{0};
  std::atomic<std::size_t> mismatches{0};
  std::atomic<std::size_t> other_errors{0};
};

void fault_thread(any_device& mr, int t, std::size_t max_bytes, fault_result& result) {
  rmm::cuda_stream stream;
  std::mt19937_64 rng{static_cast<std::uint64_t>(500 + t)};
  std::uniform_int_distribution<std::size_t> size_dist{1, max_bytes};
  struct live {
    void* p;
    std::size_t n;
    std::uint32_t seed;
  };
  std::vector<live> mine;
  try {
    for (std::uint32_t i = 0; i < 400; ++i) {
      if (mine.size() < 24 && rng() % 3 != 0) {
        std::size_t const n = size_dist(rng);
        try {
          void* p         = mr.allocate(stream, n, 256);
          auto const seed = static_cast<std::uint32_t>(t) * 10000U + i;
          rmm::test::fill_pattern(p, n, seed, stream.value());
          mine.push_back({p, n, seed});
          ++result.served;
        } catch (rmm::out_of_memory const&) {
          ++result.out_of_memory;
        }
      } else if (!mine.empty()) {
        auto const k = rng() % mine.size();
        result.mismatches +=
            rmm::test::count_pattern_mismatches(mine[k].p, mine[k].n, mine[k].seed, stream.value());
        mr.deallocate(stream, mine[k].p, mine[k].n, 256);
        mine[k] = mine.back();
        mine.pop_back();
      }
    }
  } catch (...) {
    ++result.other_errors;
  }
  for (auto const& b : mine) {
    mr.deallocate(stream, b.p, b.n, 256);
  }
  stream.synchronize();
}

void run_faults(int which, std::size_t k, bool random) {
  INFO(suballocator_name(which) << (random ? ", fails at random 1/" : ", fails every ") << k);
  rmm::test::counting_resource counting{rmm::mr::cuda_memory_resource{}};
  failing_resource<> failing{counting, 0};  // no failure while the resource is constructed
  fault_result result;
  {
    any_device mr               = make_suballocator(which, failing);
    std::size_t const max_bytes = is_fixed_size(which) ? 64 * KiB : 2 * MiB;
    // Construction (fixed_size preallocates, the arena takes its arena) is not failed.
    if (random) {
      failing.fail_when([k, rng = std::mt19937_64{20261125}]() mutable { return rng() % k == 0; });
    } else {
      failing.fail_when([k, calls = std::size_t{0}]() mutable { return ++calls % k == 0; });
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) {
      threads.emplace_back([&, t] { fault_thread(mr, t, max_bytes, result); });
    }
    for (auto& th : threads) {
      th.join();
    }
    // Still serving once the upstream stops failing.
    failing.fail_when({});
    rmm::cuda_stream stream;
    void* p = mr.allocate(stream, max_bytes, 256);
    rmm::test::fill_pattern(p, max_bytes, 7, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(p, max_bytes, 7, stream.value()) == 0);
    mr.deallocate(stream, p, max_bytes, 256);
  }
  CHECK(result.other_errors == 0);
  CHECK(result.mismatches == 0);
  CHECK(result.served > 1000);
  CHECK(counting.counts().bytes_outstanding == 0);  // nothing left upstream after destruction
  CHECK(counting.counts().allocations == counting.counts().deallocations);
  if (which != 3) {  // the arena asks its upstream once, at construction
    CHECK(failing.failures() > 0);
  }
}

}  // namespace faults_test

using namespace faults_test;  // NOLINT(google-build-using-namespace)

TEST_CASE("faults: an upstream failing every k-th request, 16 threads, every suballocator",
          "[gpu][faults]") {
  for (int which = 0; which < num_suballocators; ++which) {
    run_faults(which, 3, false);
  }
}

TEST_CASE("faults: an upstream failing at seeded random, 16 threads, every suballocator",
          "[gpu][faults]") {
  for (int which = 0; which < num_suballocators; ++which) {
    run_faults(which, 4, true);
  }
}

TEST_CASE("lifetime: streams destroyed while their blocks are in other streams' use",
          "[gpu][faults]") {
  for (int which = 0; which < num_suballocators; ++which) {
    INFO(suballocator_name(which));
    any_device mr               = make_suballocator(which, rmm::mr::cuda_memory_resource{});
    std::size_t const max_bytes = is_fixed_size(which) ? 64 * KiB : 512 * KiB;
    std::atomic<std::size_t> mismatches{0};
    std::atomic<std::size_t> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) {
      threads.emplace_back([&, t] {
        try {
          rmm::cuda_stream user;  // lives for the whole test
          std::mt19937_64 rng{static_cast<std::uint64_t>(900 + t)};
          std::uniform_int_distribution<std::size_t> size_dist{1, max_bytes};
          for (std::uint32_t round = 0; round < 20; ++round) {
            std::vector<std::pair<void*, std::size_t>> handed;
            {
              rmm::cuda_stream maker;  // allocates, then is destroyed with its blocks in use
              for (int i = 0; i < 4; ++i) {
                std::size_t const n = size_dist(rng);
                void* p             = mr.allocate(maker, n, 256);
                rmm::test::fill_pattern(p, n, 1, maker.value());
                handed.emplace_back(p, n);
              }
              maker.synchronize();  // the hand-over: `user` may now use the blocks
            }
            // `user` writes the blocks slowly, then frees them on its own stream.
            for (auto const& [p, n] : handed) {
              rmm::test::fill_pattern_after_delay(p, n, 2, 2'000'000, user.value());
              mr.deallocate(user, p, n, 256);
            }
            // A fresh stream (perhaps with `maker`'s handle) allocates meanwhile; its blocks
            // must not be written by `user`'s slow kernels.
            rmm::cuda_stream fresh;
            std::vector<std::pair<void*, std::size_t>> got;
            for (int i = 0; i < 4; ++i) {
              std::size_t const n = size_dist(rng);
              void* p             = mr.allocate(fresh, n, 256);
              rmm::test::fill_pattern(p, n, 3 + round, fresh.value());
              got.emplace_back(p, n);
            }
            user.synchronize();
            for (auto const& [p, n] : got) {
              mismatches += rmm::test::count_pattern_mismatches(p, n, 3 + round, fresh.value());
              mr.deallocate(fresh, p, n, 256);
            }
            fresh.synchronize();
          }
        } catch (...) {
          ++errors;
        }
      });
    }
    for (auto& th : threads) {
      th.join();
    }
    CHECK(errors == 0);
    CHECK(mismatches == 0);
  }
}
