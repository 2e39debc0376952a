// The per-device registry set up from several threads, and every suballocator on every device
// under 16 threads that keep switching devices (issue 14, item 3): no block of one device is ever
// handed out while another device is current, and every block keeps its data.
#include "../utilities/device_kernels.hpp"
#include "mgpu_resources.hpp"
#include "mgpu_utilities.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace mgpu = rmm::test::mgpu;

namespace {

constexpr int thread_count = 16;

/// Runs @p body(t) on thread_count threads; rethrows the first exception.
template <typename Body>
void on_threads(Body body) {
  std::vector<std::exception_ptr> errors(thread_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      try {
        body(t);
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (auto const& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

}  // namespace

TEST_CASE("multi-GPU: the registry set up in a loop over devices from several threads",
          "[mgpu][registry]") {
  int const n = mgpu::device_count();
  // Every thread sets up the devices in its own order, one pool per device: the last setter of a
  // device wins; each pool is made with its device current.
  std::vector<std::thread> setters;
  for (int t = 0; t < n; ++t) {
    setters.emplace_back([t, n] {
      for (int i = 0; i < n; ++i) {
        int const d = (t + i) % n;
        rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
        auto previous = rmm::mr::set_per_device_resource(
            rmm::cuda_device_id{d},
            rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0});
        // `previous` (the initial resource or another thread's pool, unused) is destroyed here.
      }
    });
  }
  for (auto& s : setters) {
    s.join();
  }
  std::atomic<std::size_t> wrong_device{0};
  std::atomic<std::size_t> bad_data{0};
  on_threads([&](int t) {
    std::vector<rmm::cuda_stream> streams;
    for (int d = 0; d < n; ++d) {
      rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
      streams.emplace_back();
    }
    for (int i = 0; i < 200; ++i) {
      int const d = (t + i) % n;
      rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
      auto const stream = streams[static_cast<std::size_t>(d)].view();
      rmm::device_buffer buffer(std::size_t{4096} << (i % 8), stream);  // the current device's
      if (mgpu::pointer_device(buffer.data()) != d) {
        ++wrong_device;
      }
      auto const seed = static_cast<std::uint32_t>(t * 1000 + i);
      rmm::test::fill_pattern(buffer.data(), buffer.size(), seed, stream.value());
      bad_data +=
          rmm::test::count_pattern_mismatches(buffer.data(), buffer.size(), seed, stream.value());
    }
  });
  CHECK(wrong_device == 0);
  CHECK(bad_data == 0);
  for (int d = 0; d < n; ++d) {
    rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
    CHECK(rmm::mr::get_per_device_resource_ref(rmm::cuda_device_id{d}) ==
          rmm::mr::get_current_device_resource_ref());
    rmm::mr::set_per_device_resource(rmm::cuda_device_id{d}, rmm::mr::cuda_memory_resource{});
  }
}

TEST_CASE("multi-GPU: every suballocator on every device under 16 threads switching devices",
          "[mgpu][stress]") {
  int const n = mgpu::device_count();
  for (auto const& f : mgpu::device_resources()) {
    DYNAMIC_SECTION(f.name) {
      std::vector<mgpu::any_device_resource> per_device;
      for (int d = 0; d < n; ++d) {
        rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
        per_device.push_back(f.make());
      }
      std::atomic<std::size_t> wrong_device{0};
      std::atomic<std::size_t> bad_data{0};
      std::atomic<std::size_t> served{0};
      on_threads([&](int t) {
        struct block {
          void* ptr;
          std::size_t bytes;
          std::uint32_t seed;
        };
        std::vector<rmm::cuda_stream> streams;
        std::vector<std::vector<block>> live(static_cast<std::size_t>(n));
        for (int d = 0; d < n; ++d) {
          rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
          streams.emplace_back();
        }
        std::mt19937 gen{static_cast<unsigned>(4242 + t)};
        std::size_t const max_bytes = std::min<std::size_t>(f.max_bytes, 256 * 1024);
        auto release                = [&](int d, std::size_t k) {
          auto& v                   = live[static_cast<std::size_t>(d)];
          auto const blk            = v[k];
          auto const s              = streams[static_cast<std::size_t>(d)].view();
          std::size_t const checked = std::min<std::size_t>(blk.bytes, 4096);
          bad_data += rmm::test::count_pattern_mismatches(blk.ptr, checked, blk.seed, s.value());
          per_device[static_cast<std::size_t>(d)].deallocate(s, blk.ptr, blk.bytes, 256);
          v[k] = v.back();
          v.pop_back();
        };
        for (int i = 0; i < 300; ++i) {
          int const d = static_cast<int>(gen() % static_cast<unsigned>(n));
          rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
          auto& v = live[static_cast<std::size_t>(d)];
          if (!v.empty() && (v.size() > 8 || gen() % 3 == 0)) {
            release(d, gen() % v.size());
            continue;
          }
          std::size_t const bytes = 256 + gen() % max_bytes;
          auto const s            = streams[static_cast<std::size_t>(d)].view();
          void* p                 = per_device[static_cast<std::size_t>(d)].allocate(s, bytes, 256);
          ++served;
          if (mgpu::pointer_device(p) != d) {
            ++wrong_device;
          }
          auto const seed = static_cast<std::uint32_t>(t * 100000 + i);
          rmm::test::fill_pattern(p, std::min<std::size_t>(bytes, 4096), seed, s.value());
          v.push_back({p, bytes, seed});
        }
        for (int d = 0; d < n; ++d) {
          rmm::cuda_set_device_raii const on{rmm::cuda_device_id{d}};
          while (!live[static_cast<std::size_t>(d)].empty()) {
            release(d, 0);
          }
          streams[static_cast<std::size_t>(d)].synchronize();
        }
      });
      INFO(served.load() << " allocations served");
      CHECK(served > 0);
      CHECK(wrong_device == 0);
      CHECK(bad_data == 0);
      per_device.clear();  // device 0 current: each is torn down on its own device
    }
  }
}
