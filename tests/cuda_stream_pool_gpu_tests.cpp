// rmm::cuda_stream_pool: size checks, round robin (also from many threads), indexed access,
// distinct and usable streams, flags.
#include "utilities/device_kernels.hpp"

#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using Catch::Matchers::Contains;

TEST_CASE("cuda_stream_pool: sizes", "[gpu][cuda_stream_pool]") {
  STATIC_REQUIRE(rmm::cuda_stream_pool::default_size == 16);
  rmm::cuda_stream_pool defaults;
  CHECK(defaults.get_pool_size() == 16);
  rmm::cuda_stream_pool one{1};
  CHECK(one.get_pool_size() == 1);
  CHECK(one.get_stream() == one.get_stream());
  CHECK_THROWS_AS(rmm::cuda_stream_pool{0}, rmm::logic_error);
  CHECK_THROWS_WITH(rmm::cuda_stream_pool{0}, Contains("pool_size must be greater than 0"));
}

TEST_CASE("cuda_stream_pool: round robin over distinct streams", "[gpu][cuda_stream_pool]") {
  rmm::cuda_stream_pool pool{5};
  std::vector<rmm::cuda_stream_view> first;
  for (int i = 0; i < 5; ++i) {
    first.push_back(pool.get_stream());
  }
  std::set<cudaStream_t> handles;
  for (auto stream : first) {
    handles.insert(stream.value());
    CHECK_FALSE(stream.is_default());
    CHECK_FALSE(stream.is_per_thread_default());
  }
  CHECK(handles.size() == 5);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(pool.get_stream() == first[i]);
    }
  }
  // Indexed access wraps around and does not advance the counter.
  for (std::size_t i = 0; i < 12; ++i) {
    CHECK(pool.get_stream(i) == first[i % 5]);
  }
  CHECK(pool.get_stream(std::size_t{1} << 63U) == first[(std::size_t{1} << 63U) % 5]);
  CHECK(pool.get_stream() == first[0]);
}

TEST_CASE("cuda_stream_pool: streams run work", "[gpu][cuda_stream_pool]") {
  rmm::cuda_stream_pool pool{4};
  constexpr std::size_t bytes = 1 << 20;
  std::vector<void*> buffers(pool.get_pool_size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    REQUIRE(cudaMalloc(&buffers[i], bytes) == cudaSuccess);
    rmm::test::fill_pattern(
        buffers[i], bytes, static_cast<std::uint32_t>(i), pool.get_stream(i).value());
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    CHECK(rmm::test::count_pattern_mismatches(
              buffers[i], bytes, static_cast<std::uint32_t>(i), pool.get_stream(i).value()) == 0);
    REQUIRE(cudaFree(buffers[i]) == cudaSuccess);
  }
}

TEST_CASE("cuda_stream_pool: flags", "[gpu][cuda_stream_pool]") {
  rmm::cuda_stream_pool blocking{2};
  rmm::cuda_stream_pool non_blocking{2, rmm::cuda_stream::flags::non_blocking};
  unsigned int flags{};
  REQUIRE(cudaStreamGetFlags(blocking.get_stream().value(), &flags) == cudaSuccess);
  CHECK(flags == cudaStreamDefault);
  REQUIRE(cudaStreamGetFlags(non_blocking.get_stream().value(), &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
}

TEST_CASE("cuda_stream_pool: round robin is fair across threads", "[gpu][cuda_stream_pool]") {
  rmm::cuda_stream_pool pool{8};
  constexpr int num_threads = 8;
  constexpr int per_thread  = 1000;
  std::mutex mutex;
  std::map<cudaStream_t, int> uses;
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&] {
      std::map<cudaStream_t, int> mine;
      for (int i = 0; i < per_thread; ++i) {
        ++mine[pool.get_stream().value()];
      }
      std::lock_guard<std::mutex> lock(mutex);
      for (auto const& [stream, n] : mine) {
        uses[stream] += n;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  REQUIRE(uses.size() == 8);
  for (auto const& [stream, n] : uses) {
    CHECK(n == num_threads * per_thread / 8);  // each stream exactly once per round
  }
}
