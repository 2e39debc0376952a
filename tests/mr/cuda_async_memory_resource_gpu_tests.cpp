// cuda_async_memory_resource: construction and its defaults, priming, the release threshold,
// export handle types, and the statistics, peaks, limits and trimming that every driver-pool
// resource shares (detail/mechanics/driver_pool.hpp), observed through the pool's attributes.
#include "../utilities/device_kernels.hpp"
#include "../utilities/messages.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::test::logic_error_message;
using rmm::test::out_of_memory_message;

using Catch::Matchers::Contains;
using rmm::mr::cuda_async_memory_resource;
using handle_type               = cuda_async_memory_resource::allocation_handle_type;
constexpr std::size_t KiB       = 1024;
constexpr std::size_t MiB       = 1024 * KiB;
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

std::uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  std::uint64_t value{0};
  RMM_CUDA_TRY(cudaMemPoolGetAttribute(pool, attr, &value));
  return value;
}

int supported_handle_types() {
  int value{0};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(
      &value, cudaDevAttrMemoryPoolSupportedHandleTypes, rmm::get_current_cuda_device().value()));
  return value;
}

}  // namespace

TEST_CASE("cuda_async: defaults", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  REQUIRE(mr.pool_handle() != nullptr);
  CHECK(pool_attribute(mr.pool_handle(), cudaMemPoolAttrReleaseThreshold) == u64_max);
  CHECK(mr.used_bytes() == 0);
  CHECK(mr.reserved_bytes() == 0);  // nothing primed
  CHECK(mr.get_limit() == 0);
  // The pool is a new one, not the device's default pool.
  cudaMemPool_t default_pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&default_pool, rmm::get_current_cuda_device().value()));
  CHECK(mr.pool_handle() != default_pool);
  // Copies share the pool; an independent resource has its own.
  auto copy = mr;
  CHECK(copy == mr);
  CHECK(copy.pool_handle() == mr.pool_handle());
  cuda_async_memory_resource other;
  CHECK(other != mr);
  CHECK(other.pool_handle() != mr.pool_handle());
  // The pool outlives the original as long as a copy holds it.
  cudaMemPool_t const pool = mr.pool_handle();
  {
    cuda_async_memory_resource survivor = cuda_async_memory_resource{};
    survivor                            = mr;
    mr                                  = cuda_async_memory_resource{};
    CHECK(survivor.pool_handle() == pool);
    rmm::cuda_stream stream;
    void* ptr = survivor.allocate(stream, MiB, 256);
    rmm::test::fill_pattern(ptr, MiB, 3, stream.value());
    CHECK(rmm::test::count_pattern_mismatches(ptr, MiB, 3, stream.value()) == 0);
    survivor.deallocate(stream, ptr, MiB, 256);
    stream.synchronize();
  }
}

TEST_CASE("cuda_async: priming and the release threshold", "[gpu][cuda_async]") {
  SECTION("primed, default threshold: the memory stays reserved") {
    cuda_async_memory_resource mr{64 * MiB};
    CHECK(mr.reserved_bytes() >= 64 * MiB);
    CHECK(mr.used_bytes() == 0);
    CHECK(mr.peak_used_bytes() >= 64 * MiB);  // the priming allocation
    CHECK(mr.free_bytes() == mr.reserved_bytes());
    rmm::cuda_stream_default.synchronize();  // a synchronisation releases nothing
    CHECK(mr.reserved_bytes() >= 64 * MiB);
  }
  SECTION("primed, threshold 0: released at the next synchronisation") {
    cuda_async_memory_resource mr{64 * MiB, 0};
    CHECK(pool_attribute(mr.pool_handle(), cudaMemPoolAttrReleaseThreshold) == 0);
    rmm::cuda_stream_default.synchronize();
    CHECK(mr.reserved_bytes() < 64 * MiB);
    CHECK(mr.peak_reserved_bytes() >= 64 * MiB);  // it was primed
  }
  SECTION("an explicit threshold is set on the pool") {
    cuda_async_memory_resource mr{std::nullopt, 32 * MiB};
    CHECK(pool_attribute(mr.pool_handle(), cudaMemPoolAttrReleaseThreshold) == 32 * MiB);
    CHECK(mr.reserved_bytes() == 0);
  }
  SECTION("initial size 0 primes nothing") {
    cuda_async_memory_resource mr{0};
    CHECK(mr.reserved_bytes() == 0);
  }
}

TEST_CASE("cuda_async: export handle types", "[gpu][cuda_async]") {
  int const device    = rmm::get_current_cuda_device().value();
  int const supported = supported_handle_types();
  INFO("cudaDevAttrMemoryPoolSupportedHandleTypes = " << supported);
  // Win32 handles are never supported on Linux: refused before the driver is asked.
  for (auto type : {handle_type::win32, handle_type::win32_kmt}) {
    CHECK_THAT(logic_error_message([type] {
                 cuda_async_memory_resource{{}, {}, type};
               }),
               Contains("win32") && Contains("not supported") &&
                   Contains("device " + std::to_string(device)));
  }
  cuda_async_memory_resource none{{}, {}, handle_type::none};
  CHECK(none.pool_handle() != nullptr);
  if ((supported & cudaMemHandleTypePosixFileDescriptor) != 0) {
    cuda_async_memory_resource ipc{{}, {}, handle_type::posix_file_descriptor};
    int fd{-1};
    RMM_CUDA_TRY(cudaMemPoolExportToShareableHandle(
        &fd, ipc.pool_handle(), cudaMemHandleTypePosixFileDescriptor, 0));
    CHECK(fd >= 0);
    ::close(fd);
    rmm::cuda_stream stream;
    void* ptr = ipc.allocate(stream, 2 * MiB, 256);
    cudaMemPoolPtrExportData data{};
    RMM_CUDA_TRY(cudaMemPoolExportPointer(&data, ptr));
    ipc.deallocate(stream, ptr, 2 * MiB, 256);
    stream.synchronize();
  } else {
    WARN("posix_file_descriptor export not supported on this device: only refusal checked");
    CHECK_THAT(logic_error_message([] {
                 cuda_async_memory_resource{{}, {}, handle_type::posix_file_descriptor};
               }),
               Contains("posix_file_descriptor"));
  }
}

// Where the device lists fabric handles, pool creation may still fail without an IMEX channel:
// an API error on purpose.
TEST_CASE("cuda_async: fabric handles", "[gpu][cuda_async][expected_api_errors]") {
  int const supported = supported_handle_types();
  if ((supported & cudaMemHandleTypeFabric) == 0) {
    CHECK_THAT(logic_error_message([] {
                 cuda_async_memory_resource{{}, {}, handle_type::fabric};
               }),
               Contains("fabric") && Contains("cudaDevAttrMemoryPoolSupportedHandleTypes"));
    return;
  }
  try {
    cuda_async_memory_resource mr{{}, {}, handle_type::fabric};
    CHECK(mr.pool_handle() != nullptr);
  } catch (rmm::logic_error const& e) {
    WARN("fabric listed but refused: " << e.what());
    CHECK_THAT(std::string{e.what()}, Contains("fabric"));
  }
}

TEST_CASE("cuda_async: statistics follow allocations", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  void* a = mr.allocate(stream, 64 * MiB, 256);
  stream.synchronize();
  CHECK(mr.used_bytes() >= 64 * MiB);
  CHECK(mr.reserved_bytes() >= mr.used_bytes());
  CHECK(mr.free_bytes() <= mr.reserved_bytes());
  void* b = mr.allocate(stream, 32 * MiB, 256);
  stream.synchronize();
  CHECK(mr.used_bytes() >= 96 * MiB);
  auto const peak_used = mr.peak_used_bytes();
  CHECK(peak_used >= 96 * MiB);
  mr.deallocate(stream, a, 64 * MiB, 256);
  mr.deallocate(stream, b, 32 * MiB, 256);
  stream.synchronize();
  CHECK(mr.used_bytes() == 0);
  CHECK(mr.reserved_bytes() >= 96 * MiB);  // retained: the threshold is the maximum
  CHECK(mr.free_bytes() == mr.reserved_bytes());
  CHECK(mr.peak_used_bytes() == peak_used);
  CHECK(mr.peak_reserved_bytes() >= mr.reserved_bytes());
}

TEST_CASE("cuda_async: peaks and their reset", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  void* big = mr.allocate(stream, 64 * MiB, 256);
  mr.deallocate(stream, big, 64 * MiB, 256);
  stream.synchronize();
  CHECK(mr.peak_used_bytes() >= 64 * MiB);
  mr.reset_peaks();
  CHECK(mr.peak_used_bytes() < 64 * MiB);  // nothing is in use now
  CHECK(mr.peak_reserved_bytes() <= mr.reserved_bytes());
  void* small = mr.allocate(stream, 16 * MiB, 256);
  stream.synchronize();
  CHECK(mr.peak_used_bytes() >= 16 * MiB);
  CHECK(mr.peak_used_bytes() < 64 * MiB);
  mr.deallocate(stream, small, 16 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async: limits", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  CHECK(mr.get_limit() == 0);
  mr.set_limit(8 * MiB);
  CHECK(mr.get_limit() == 8 * MiB);
  void* a = mr.allocate(stream, 4 * MiB, 256);
  CHECK_THAT(out_of_memory_message([&] { static_cast<void>(mr.allocate(stream, 5 * MiB, 256)); }),
             Contains("limit of 8388608 bytes") && Contains("5242880 bytes") &&
                 Contains("4194304 bytes used") && Contains("device 0"));
  void* b = mr.allocate(stream, 4 * MiB, 256);  // exactly up to the limit
  CHECK_THROWS_AS(mr.allocate(stream, 1, 256), rmm::out_of_memory);
  mr.deallocate(stream, a, 4 * MiB, 256);
  mr.deallocate(stream, b, 4 * MiB, 256);
  // Freed bytes count again at once (the count is the library's, not the stream-ordered pool's).
  void* c = mr.allocate(stream, 8 * MiB, 256);
  mr.deallocate(stream, c, 8 * MiB, 256);

  // Copies and views of the same pool share the limit and the count.
  auto copy = mr;
  CHECK(copy.get_limit() == 8 * MiB);
  rmm::mr::cuda_async_view_memory_resource view{mr.pool_handle()};
  CHECK(view.get_limit() == 8 * MiB);
  void* d = mr.allocate(stream, 8 * MiB, 256);
  CHECK_THROWS_AS(view.allocate(stream, 1, 256), rmm::out_of_memory);
  view.deallocate(stream, d, 8 * MiB, 256);  // freed through another resource of the pool
  void* e = copy.allocate(stream, 8 * MiB, 256);
  copy.deallocate(stream, e, 8 * MiB, 256);

  // Lowering the limit below what is in use refuses until enough is freed.
  void* f = mr.allocate(stream, 6 * MiB, 256);
  mr.set_limit(4 * MiB);
  CHECK_THROWS_AS(mr.allocate(stream, 1, 256), rmm::out_of_memory);
  mr.deallocate(stream, f, 6 * MiB, 256);
  void* g = mr.allocate(stream, 4 * MiB, 256);
  mr.deallocate(stream, g, 4 * MiB, 256);

  // No limit.
  mr.set_limit(0);
  void* h = mr.allocate(stream, 64 * MiB, 256);
  mr.deallocate(stream, h, 64 * MiB, 256);

  // Fractions of the device's memory.
  auto const total = rmm::available_device_memory().second;
  mr.set_limit_fraction(0.5);
  CHECK(mr.get_limit() ==
        static_cast<std::size_t>(std::floor(static_cast<long double>(total) * 0.5L)));
  mr.set_limit_fraction(1.0);
  CHECK(mr.get_limit() == total);
  mr.set_limit_fraction(0.0);
  CHECK(mr.get_limit() == 0);
  CHECK_THAT(logic_error_message([&] { mr.set_limit_fraction(1.5); }),
             Contains("fraction 1.5") && Contains("cuda_async_memory_resource"));
  CHECK_THAT(logic_error_message([&] { mr.set_limit_fraction(-0.5); }), Contains("fraction -0.5"));
  CHECK_THAT(
      logic_error_message([&] { mr.set_limit_fraction(std::numeric_limits<double>::quiet_NaN()); }),
      Contains("fraction nan"));
  CHECK(mr.get_limit() == 0);  // a refused fraction changes nothing
  stream.synchronize();
}

TEST_CASE("cuda_async: the limit holds under concurrent allocation", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  mr.set_limit(16 * MiB);
  std::atomic<int> granted{0};
  std::atomic<int> refused{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      try {
        rmm::cuda_stream stream;
        std::vector<void*> held;
        for (int i = 0; i < 50; ++i) {
          try {
            held.push_back(mr.allocate(stream, 3 * MiB, 256));
            ++granted;
          } catch (rmm::out_of_memory const&) {
            ++refused;
          }
          if (held.size() == 2 || (i % 4 == 3 && !held.empty())) {
            mr.deallocate(stream, held.back(), 3 * MiB, 256);
            held.pop_back();
          }
        }
        for (void* p : held) {
          mr.deallocate(stream, p, 3 * MiB, 256);
        }
        stream.synchronize();
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(errors == 0);
  CHECK(granted > 0);
  CHECK(refused > 0);  // 8 threads holding up to 2 x 3 MiB exceed 16 MiB
  // Everything was given back: the whole limit is available again.
  rmm::cuda_stream stream;
  void* all = mr.allocate(stream, 16 * MiB, 256);
  mr.deallocate(stream, all, 16 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async: release and free_all_blocks trim the pool", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  void* a = mr.allocate(stream, 64 * MiB, 256);
  mr.deallocate(stream, a, 64 * MiB, 256);  // pending on the stream: release() synchronises
  mr.release(128 * MiB);                    // below what to keep: nothing goes
  CHECK(mr.reserved_bytes() >= 64 * MiB);
  mr.release();
  CHECK(mr.reserved_bytes() == 0);

  void* live = mr.allocate(stream, 64 * MiB, 256);
  void* gone = mr.allocate(stream, 64 * MiB, 256);
  mr.deallocate(stream, gone, 64 * MiB, 256);
  stream.synchronize();
  CHECK(mr.reserved_bytes() >= 128 * MiB);
  auto const before = mr.reserved_bytes();
  mr.free_all_blocks();
  INFO("reserved before " << before << ", after " << mr.reserved_bytes());
  CHECK(mr.reserved_bytes() >= 64 * MiB);  // the live allocation keeps its memory
  CHECK(mr.reserved_bytes() < before);     // the freed one's is gone
  rmm::test::fill_pattern(live, 64 * MiB, 9, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(live, 64 * MiB, 9, stream.value()) == 0);
  mr.deallocate(stream, live, 64 * MiB, 256);
  mr.free_all_blocks();
  CHECK(mr.reserved_bytes() == 0);
}

TEST_CASE("cuda_async: out of memory names the pool's state",
          "[gpu][cuda_async][expected_api_errors]") {
  cuda_async_memory_resource mr;
  rmm::cuda_stream stream;
  auto const bytes = rmm::available_device_memory().second * 2;
  auto const what =
      out_of_memory_message([&] { static_cast<void>(mr.allocate(stream, bytes, 256)); });
  CHECK_THAT(what,
             Contains("cudaMallocFromPoolAsync") && Contains(std::to_string(bytes)) &&
                 Contains("pool used") && Contains("reserved") && Contains("no limit") &&
                 Contains("device 0 free"));
  CHECK(cudaGetLastError() == cudaSuccess);
  mr.set_limit(bytes);  // the limit is mentioned when there is one
  CHECK_THAT(out_of_memory_message([&] { static_cast<void>(mr.allocate(stream, bytes, 256)); }),
             Contains("limit " + std::to_string(bytes) + " bytes"));
  // The failed requests took nothing from the limit.
  void* ptr = mr.allocate(stream, MiB, 256);
  mr.deallocate(stream, ptr, MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async: allocate_sync memory is usable at once on any stream", "[gpu][cuda_async]") {
  cuda_async_memory_resource mr;
  void* ptr = mr.allocate_sync(4 * MiB, 256);
  rmm::cuda_stream other;
  rmm::test::fill_pattern(ptr, 4 * MiB, 21, other.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, 4 * MiB, 21, other.value()) == 0);
  mr.deallocate_sync(ptr, 4 * MiB, 256);
  rmm::cuda_stream_default.synchronize();
  CHECK(mr.used_bytes() == 0);
}
