/**
 * @file rmm_c_gpu_tests.cpp
 * @brief GPU tests of librmm_c through its C functions. CTest runs this program once per resource
 * (tests/c/CMakeLists.txt sets RMM_C_RESOURCE and the sizes); with RMM_C_TEST_CONFIGURE=<name>
 * the program first calls rmm_c_configure(<name>), which must override the environment.
 */
#include <rmm/c/rmm_c.h>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20U;

// The expected resource; configures it first when RMM_C_TEST_CONFIGURE asks to. Every test case
// calls it before anything else, so the configuration precedes the first allocation.
std::string const& expected_resource() {
  static std::string const name = [] {
    if (char const* configure = std::getenv("RMM_C_TEST_CONFIGURE")) {
      if (rmm_c_configure(configure, "32MB", nullptr) != 0) {
        FAIL("rmm_c_configure failed: " << rmm_c_last_error());
      }
      return std::string{configure};
    }
    char const* env = std::getenv("RMM_C_RESOURCE");
    return std::string{env == nullptr || *env == '\0' ? "pool" : env};
  }();
  return name;
}

rmm_c_stats stats(int device = 0) {
  rmm_c_stats s{};
  REQUIRE(rmm_c_get_stats(device, &s) == 0);
  return s;
}

bool is_device_memory(void* ptr, int device) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice && attributes.device == device;
}

}  // namespace

TEST_CASE("the configured resource is in effect", "[rmm_c]") {
  std::string const& expected = expected_resource();
  char const* name            = rmm_c_resource_name();
  REQUIRE(name != nullptr);
  CHECK(std::string{name} == expected);
}

TEST_CASE("alloc and free through the PyTorch functions", "[rmm_c]") {
  expected_resource();
  cudaStream_t stream{};
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  rmm_c_stats const before = stats();
  std::vector<std::pair<void*, ssize_t>> blocks;
  ssize_t total = 0;
  for (ssize_t size : {ssize_t{1},
                       ssize_t{256},
                       ssize_t{1000},
                       ssize_t{1 << 20},
                       ssize_t{3 << 20},
                       ssize_t{64 << 20}}) {
    void* ptr = rmm_c_alloc(size, 0, stream);
    INFO("size " << size << ": " << rmm_c_last_error());
    REQUIRE(ptr != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(ptr) % 256 == 0);
    CHECK(is_device_memory(ptr, 0));
    REQUIRE(cudaMemsetAsync(ptr, 0xAB, static_cast<std::size_t>(size), stream) == cudaSuccess);
    blocks.emplace_back(ptr, size);
    total += size;
  }
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  unsigned char last = 0;
  REQUIRE(cudaMemcpy(&last,
                     static_cast<unsigned char*>(blocks.back().first) + (64 << 20) - 1,
                     1,
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(last == 0xAB);

  rmm_c_stats const during = stats();
  CHECK(during.bytes_in_use == before.bytes_in_use + static_cast<std::size_t>(total));
  CHECK(during.peak_bytes_in_use >= during.bytes_in_use);
  CHECK(during.allocations == before.allocations + blocks.size());
  if (expected_resource() != "cuda_async") {  // the driver pool may round differently
    CHECK(during.reserved_bytes >= during.bytes_in_use);
  }
  CHECK(during.peak_reserved_bytes >= during.reserved_bytes);

  for (auto const& [ptr, size] : blocks) {
    rmm_c_free(ptr, size, 0, stream);
  }
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  rmm_c_stats const after = stats();
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.peak_bytes_in_use >= during.bytes_in_use);

  rmm_c_reset_peak();
  CHECK(stats().peak_bytes_in_use == after.bytes_in_use);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("release gives free memory back", "[rmm_c]") {
  expected_resource();
  void* ptr = rmm_c_alloc(static_cast<ssize_t>(256 * MiB), 0, nullptr);
  INFO(rmm_c_last_error());
  REQUIRE(ptr != nullptr);
  rmm_c_free(ptr, static_cast<ssize_t>(256 * MiB), 0, nullptr);
  rmm_c_stats const before = stats();
  REQUIRE(rmm_c_release() == 0);
  rmm_c_stats const after = stats();
  CHECK(after.reserved_bytes <= before.reserved_bytes);
  std::string const& kind = expected_resource();
  if (kind == "pool" || kind == "expandable") {
    CHECK(after.reserved_bytes < before.reserved_bytes);
  }
  // Still usable after release.
  void* again = rmm_c_alloc(4096, 0, nullptr);
  REQUIRE(again != nullptr);
  rmm_c_free(again, 4096, 0, nullptr);
}

TEST_CASE("the device argument", "[rmm_c][expected_api_errors]") {
  expected_resource();
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(rmm_c_alloc(1024, count, nullptr) == nullptr);
  CHECK(std::string{rmm_c_last_error()}.find("invalid device") != std::string::npos);
  CHECK(rmm_c_alloc(1024, -1, nullptr) == nullptr);

  // The last device from device 0: allocated there, and device 0 is current again afterwards.
  int const other = count - 1;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  void* ptr = rmm_c_alloc(1 << 20, other, nullptr);
  INFO(rmm_c_last_error());
  REQUIRE(ptr != nullptr);
  CHECK(is_device_memory(ptr, other));
  int current = -1;
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);
  CHECK(stats(other).bytes_in_use >= std::size_t{1} << 20U);
  rmm_c_free(ptr, 1 << 20, other, nullptr);
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);
  CHECK(rmm_c_get_stats(count, nullptr) != 0);
}

TEST_CASE("out of memory returns NULL with a message", "[rmm_c][expected_api_errors]") {
  expected_resource();
  std::uint64_t const failed_before = stats().failed_allocations;
  CHECK(rmm_c_alloc(ssize_t{1} << 50, 0, nullptr) == nullptr);
  CHECK(std::string{rmm_c_last_error()}.find("failed") != std::string::npos);
  CHECK(stats().failed_allocations == failed_before + 1);
  void* ptr = rmm_c_alloc(4096, 0, nullptr);  // still usable
  REQUIRE(ptr != nullptr);
  rmm_c_free(ptr, 4096, 0, nullptr);
}

TEST_CASE("the CuPy functions", "[rmm_c]") {
  expected_resource();
  std::size_t const in_use = stats().bytes_in_use;
  std::vector<std::intptr_t> pointers;
  for (std::size_t size : {std::size_t{8}, std::size_t{4096}, 5 * MiB}) {
    std::intptr_t const ptr = rmm_c_cupy_malloc(0, size, 0);
    INFO(rmm_c_last_error());
    REQUIRE(ptr != 0);
    REQUIRE(cudaMemset(reinterpret_cast<void*>(ptr), 1, size) == cudaSuccess);
    pointers.push_back(ptr);
  }
  CHECK(stats().bytes_in_use == in_use + 8 + 4096 + 5 * MiB);
  for (std::intptr_t ptr : pointers) {
    rmm_c_cupy_free(0, ptr, 0);
  }
  CHECK(stats().bytes_in_use == in_use);
  CHECK(rmm_c_cupy_malloc(0, 0, 0) == 0);
  rmm_c_cupy_free(0, 0x1000, 0);  // not ours: reported, not freed
  CHECK(std::string{rmm_c_last_error()}.find("not allocated by rmm_c_cupy_malloc") !=
        std::string::npos);
}

TEST_CASE("concurrent alloc and free from many threads", "[rmm_c]") {
  expected_resource();
  std::size_t const in_use = stats().bytes_in_use;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      if (cudaSetDevice(0) != cudaSuccess) {
        ++failures;
        return;
      }
      std::vector<std::pair<std::intptr_t, std::size_t>> live;
      for (int i = 0; i < 500; ++i) {
        std::size_t const size = std::size_t{256} << static_cast<unsigned>((i + t) % 12);
        if (i % 2 == 0) {
          void* ptr = rmm_c_alloc(static_cast<ssize_t>(size), 0, nullptr);
          if (ptr == nullptr) {
            ++failures;
          } else {
            live.emplace_back(reinterpret_cast<std::intptr_t>(ptr), size);
          }
        } else {
          std::intptr_t const ptr = rmm_c_cupy_malloc(0, size, 0);
          if (ptr == 0) {
            ++failures;
          } else {
            rmm_c_cupy_free(0, ptr, 0);
          }
        }
        if (live.size() > 16) {
          rmm_c_free(reinterpret_cast<void*>(live.front().first),
                     static_cast<ssize_t>(live.front().second),
                     0,
                     nullptr);
          live.erase(live.begin());
        }
      }
      for (auto const& [ptr, size] : live) {
        rmm_c_free(reinterpret_cast<void*>(ptr), static_cast<ssize_t>(size), 0, nullptr);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(failures.load() == 0);
  CHECK(stats().bytes_in_use == in_use);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("RMM_C_LOG records every allocation and free in the trace format", "[rmm_c][log]") {
  expected_resource();
  char const* path = std::getenv("RMM_C_LOG");
  if (path == nullptr || *path == '\0') {
    WARN("SKIPPED: RMM_C_LOG is not set for this run (gpu_suite.sh sets it for the pool run)");
    CHECK(rmm_c_flush_log() == 0);  // a no-op without a log
    return;
  }
  cudaStream_t stream{};
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  constexpr int count = 25;
  std::vector<void*> blocks;
  for (int i = 0; i < count; ++i) {
    blocks.push_back(rmm_c_alloc(ssize_t{4096} + i, 0, stream));
    REQUIRE(blocks.back() != nullptr);
  }
  for (int i = 0; i < count; ++i) {
    rmm_c_free(blocks[static_cast<std::size_t>(i)], ssize_t{4096} + i, 0, stream);
  }
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  REQUIRE(rmm_c_flush_log() == 0);

  std::ifstream in{path};
  REQUIRE(in.good());
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "Thread,Time,Action,Pointer,Size,Stream");
  int allocations = 0;
  int frees       = 0;
  int ours        = 0;  // this test's rows: sizes 4096 .. 4096 + count - 1
  // The fields to look for, built once with append (GCC 12 at -O3 warns, falsely, about
  // `"," + std::to_string(n) + ","`: -Wrestrict).
  std::vector<std::string> sizes;
  for (int i = 0; i < count; ++i) {
    std::string field{","};
    field.append(std::to_string(4096 + i)).append(",");
    sizes.push_back(std::move(field));
  }
  while (std::getline(in, line)) {
    allocations += line.find(",allocate,") != std::string::npos ? 1 : 0;
    frees += line.find(",free,") != std::string::npos ? 1 : 0;
    for (auto const& field : sizes) {
      if (line.find(field) != std::string::npos) {
        ++ours;
        break;
      }
    }
  }
  // Earlier test cases of this process allocated too; every row is in the log.
  CHECK(allocations >= count);
  CHECK(frees >= count);
  CHECK(ours >= 2 * count);
}
