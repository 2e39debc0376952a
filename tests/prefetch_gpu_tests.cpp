// rmm::prefetch: managed memory prefetched to a device (pointer and span forms) and to the host is
// then read correctly; memory that is not managed, and empty ranges, are no-ops that leave no CUDA
// error behind; an invalid device is reported.
#include "utilities/device_kernels.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/prefetch.hpp>

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>
#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

bool concurrent_managed_access(rmm::cuda_device_id device) {
  int value = 0;
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&value, cudaDevAttrConcurrentManagedAccess, device.value()));
  return value != 0;
}

/// Managed memory from managed_memory_resource, freed at scope exit.
class managed_buffer {
 public:
  explicit managed_buffer(std::size_t bytes) : bytes_{bytes}, ptr_{mr_.allocate_sync(bytes)} {}
  ~managed_buffer() { mr_.deallocate_sync(ptr_, bytes_); }
  managed_buffer(managed_buffer const&)            = delete;
  managed_buffer& operator=(managed_buffer const&) = delete;
  managed_buffer(managed_buffer&&)                 = delete;
  managed_buffer& operator=(managed_buffer&&)      = delete;

  [[nodiscard]] void* data() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  rmm::mr::managed_memory_resource mr_;
  std::size_t bytes_;
  void* ptr_;
};

void note_if_no_op(rmm::cuda_device_id device) {
  if (!concurrent_managed_access(device)) {
    WARN("device " << device.value()
                   << " lacks concurrent managed access: rmm::prefetch is a no-op here, so only "
                      "the data and the absence of errors are checked");
  }
}

}  // namespace

TEST_CASE("prefetch managed memory to the device, then a kernel reads it", "[gpu][prefetch]") {
  auto const device = rmm::get_current_cuda_device();
  note_if_no_op(device);
  rmm::cuda_stream stream;
  managed_buffer buffer{4 << 20};
  rmm::test::fill_pattern_host(buffer.data(), buffer.size(), 5);

  rmm::prefetch(buffer.data(), buffer.size(), device, stream.view());
  CHECK(rmm::test::count_pattern_mismatches(buffer.data(), buffer.size(), 5, stream.value()) == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("prefetch a span of managed memory", "[gpu][prefetch]") {
  auto const device = rmm::get_current_cuda_device();
  rmm::cuda_stream stream;
  constexpr std::size_t count = 1 << 18;
  managed_buffer buffer{count * sizeof(std::uint32_t)};
  rmm::test::fill_pattern_host(buffer.data(), buffer.size(), 9);

  cuda::std::span<std::uint32_t const> const span{static_cast<std::uint32_t const*>(buffer.data()),
                                                  count};
  rmm::prefetch(span, device, stream.view());
  CHECK(rmm::test::count_pattern_mismatches(buffer.data(), buffer.size(), 9, stream.value()) == 0);

  // Part of the buffer only, by a subspan.
  rmm::prefetch(span.subspan(count / 2), device, stream.view());
  stream.synchronize();
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("prefetch managed memory back to the host", "[gpu][prefetch]") {
  note_if_no_op(rmm::get_current_cuda_device());
  rmm::cuda_stream stream;
  managed_buffer buffer{1 << 20};
  rmm::test::fill_pattern(buffer.data(), buffer.size(), 13, stream.value());

  rmm::prefetch(buffer.data(), buffer.size(), rmm::cuda_device_id{cudaCpuDeviceId}, stream.view());
  stream.synchronize();
  CHECK(rmm::test::count_pattern_mismatches_host(buffer.data(), buffer.size(), 13) == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("prefetch of memory that is not managed is a no-op", "[gpu][prefetch]") {
  auto const device = rmm::get_current_cuda_device();
  rmm::cuda_stream stream;

  rmm::mr::cuda_memory_resource device_mr;
  void* device_ptr = device_mr.allocate_sync(1 << 16);
  CHECK_NOTHROW(rmm::prefetch(device_ptr, 1 << 16, device, stream.view()));
  // The runtime's rejection is cleared: later error checks of unrelated code do not see it.
  CHECK(cudaGetLastError() == cudaSuccess);
  device_mr.deallocate_sync(device_ptr, 1 << 16);

  rmm::mr::pinned_host_memory_resource pinned_mr;
  void* pinned_ptr = pinned_mr.allocate_sync(1 << 16);
  CHECK_NOTHROW(rmm::prefetch(pinned_ptr, 1 << 16, device, stream.view()));
  CHECK(cudaGetLastError() == cudaSuccess);
  pinned_mr.deallocate_sync(pinned_ptr, 1 << 16);

  // Pageable host memory: prefetched where the GPU can access it (HMM, ATS), ignored elsewhere;
  // either way no error.
  std::vector<std::uint8_t> pageable(1 << 16, 1);
  CHECK_NOTHROW(rmm::prefetch(pageable.data(), pageable.size(), device, stream.view()));
  stream.synchronize();
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(pageable[100] == 1);
}

TEST_CASE("prefetch of an empty range is a no-op", "[gpu][prefetch]") {
  auto const device = rmm::get_current_cuda_device();
  rmm::cuda_stream stream;
  CHECK_NOTHROW(rmm::prefetch(nullptr, 0, device, stream.view()));
  CHECK_NOTHROW(rmm::prefetch(cuda::std::span<int const>{}, device, stream.view()));
  managed_buffer buffer{4096};
  CHECK_NOTHROW(rmm::prefetch(buffer.data(), 0, device, stream.view()));
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("prefetch to a device that does not exist throws rmm::cuda_error",
          "[gpu][prefetch][expected_api_errors]") {
  rmm::cuda_stream stream;
  managed_buffer buffer{4096};
  rmm::cuda_device_id const no_such_device{rmm::get_num_cuda_devices() + 7};
  CHECK_THROWS_AS(rmm::prefetch(buffer.data(), buffer.size(), no_such_device, stream.view()),
                  rmm::cuda_error);
  CHECK(cudaGetLastError() == cudaSuccess);
}
