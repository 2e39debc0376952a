// The consumer's second part: what code written against RMM 26.x uses beyond the seed's page,
// the containers, the resource adaptors, Thrust interop and the compatibility headers, written as
// such code writes it. Built into rmm_consumer with consumer.cpp (same compilers, standards and
// warnings); the Thrust algorithms only where the file is compiled as CUDA.
#include "consumer_rmm26.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>

#ifdef __CUDACC__
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace consumer {
namespace {

// Containers over a pool: the pool stays alive through the containers' owning handles.
void containers(rmm::cuda_stream_view stream) {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  rmm::device_buffer buffer{1000, stream, pool};
  expect(buffer.size() == 1000 && buffer.capacity() >= 1000 && !buffer.is_empty(),
         "device_buffer size and capacity");
  buffer.resize(3000, stream);
  buffer.shrink_to_fit(stream);
  expect(buffer.size() == 3000 && buffer.capacity() == 3000, "device_buffer resize, shrink");
  rmm::device_buffer copy{buffer, stream};
  expect(copy.size() == buffer.size() && copy.data() != buffer.data(), "device_buffer copy");
  expect(copy.memory_resource() == rmm::mr::get_current_device_resource_ref(),
         "a copy without a resource uses the current device resource");
  rmm::device_buffer moved{std::move(buffer)};
  expect(moved.size() == 3000 && buffer.is_empty(), "device_buffer move");  // NOLINT
  expect(moved.memory_resource() == rmm::device_async_resource_ref{pool},
         "device_buffer keeps its resource");

  rmm::device_uvector<std::int32_t> values{100, stream, pool};
  values.set_element_to_zero_async(0, stream);
  values.set_element(99, 42, stream);
  std::int32_t const first = 7;
  values.set_element_async(1, first, stream);
  expect(values.front_element(stream) == 0 && values.back_element(stream) == 42 &&
             values.element(1, stream) == 7,
         "device_uvector elements");
  values.resize(200, stream);
  expect(values.size() == 200 && values.element(99, stream) == 42, "device_uvector resize");
  rmm::device_buffer released = values.release();
  expect(released.size() == 200 * sizeof(std::int32_t) && values.is_empty(),
         "device_uvector release");

  rmm::device_scalar<double> scalar{2.5, stream, pool};
  expect(scalar.value(stream) == 2.5, "device_scalar value");
  scalar.set_value_to_zero_async(stream);
  expect(scalar.value(stream) == 0.0, "device_scalar set_value_to_zero_async");
  stream.synchronize();
  std::printf("consumer: device_buffer, device_uvector, device_scalar: ok\n");
}

bool retry_once(std::size_t, void* arg) {
  auto* calls = static_cast<int*>(arg);
  return (*calls)++ == 0;
}

// The adaptors over a pool, stacked as applications stack them.
void adaptors(rmm::cuda_stream_view stream) {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::size_t{1} << 30U};
  rmm::mr::statistics_resource_adaptor stats{pool};
  rmm::mr::tracking_resource_adaptor tracking{stats, true};
  std::ostringstream log;
  rmm::mr::logging_resource_adaptor logging{tracking, log};
  rmm::mr::limiting_resource_adaptor limited{logging, std::size_t{64} << 20U};
  void* ptr = limited.allocate(stream, 4096, 256);
  expect(stats.get_bytes_counter().value == 4096 && stats.get_allocations_counter().value == 1,
         "statistics_resource_adaptor counts");
  expect(tracking.get_outstanding_allocations().size() == 1 &&
             tracking.get_allocated_bytes() == 4096 &&
             !tracking.get_outstanding_allocations_str().empty(),
         "tracking_resource_adaptor outstanding allocations");
  expect(limited.get_allocated_bytes() == 4096, "limiting_resource_adaptor bytes");
  try {
    static_cast<void>(limited.allocate(stream, std::size_t{128} << 20U, 256));
    expect(false, "limiting_resource_adaptor refuses over its limit");
  } catch (rmm::out_of_memory const&) {
  }
  auto const outer = stats.push_counters();
  expect(outer.first.value == 4096 && stats.get_bytes_counter().value == 0, "push_counters");
  limited.deallocate(stream, ptr, 4096, 256);
  static_cast<void>(stats.pop_counters());
  logging.flush();
  expect(
      log.str().rfind(logging.header(), 0) == 0 && log.str().find("allocate") != std::string::npos,
      "logging_resource_adaptor writes the CSV");

  int calls = 0;
  rmm::mr::failure_callback_resource_adaptor<> retrying{pool, retry_once, &calls};
  rmm::mr::aligned_resource_adaptor aligned{retrying, 4096, 65536};
  rmm::mr::thread_safe_resource_adaptor locked{aligned};
  void* big = locked.allocate(stream, 65536, 256);
  expect(rmm::is_pointer_aligned(big, 4096), "aligned_resource_adaptor aligns above the threshold");
  locked.deallocate(stream, big, 65536, 256);
  rmm::mr::prefetch_resource_adaptor prefetching{rmm::mr::managed_memory_resource{}};
  void* managed = prefetching.allocate(stream, 1 << 20, 256);
  prefetching.deallocate(stream, managed, 1 << 20, 256);
  stream.synchronize();
  std::printf("consumer: the eight resource adaptors: ok\n");
}

// Thrust interop and prefetch; the algorithms need nvcc.
void thrust_and_prefetch(rmm::cuda_stream_view stream) {
  rmm::mr::thrust_allocator<int> alloc{stream, rmm::mr::cuda_memory_resource{}};
  rmm::mr::thrust_allocator<int> const copy{alloc};
  expect(copy == alloc && copy.stream() == stream, "thrust_allocator copies");
  static_assert(
      std::is_same_v<rmm::device_vector<int>::allocator_type, rmm::mr::thrust_allocator<int>>);
#ifdef __CUDACC__
  rmm::device_vector<int> vec(16);
  thrust::sequence(rmm::exec_policy(stream), vec.begin(), vec.end());
  thrust::sort(rmm::exec_policy_nosync(stream), vec.begin(), vec.end());
  expect(thrust::reduce(rmm::exec_policy(stream), vec.begin(), vec.end()) == 120,
         "Thrust algorithms through rmm::exec_policy");
#endif
  rmm::mr::managed_memory_resource managed;
  void* ptr = managed.allocate_sync(4096);
  rmm::prefetch(ptr, 4096, rmm::get_current_cuda_device(), stream);
  stream.synchronize();
  managed.deallocate_sync(ptr, 4096);
  std::printf("consumer: thrust_allocator, device_vector, exec_policy, prefetch: ok\n");
}

}  // namespace

void rmm26_with_gpu(rmm::cuda_stream_view stream) {
  containers(stream);
  adaptors(stream);
  thrust_and_prefetch(stream);
}

void rmm26_host_only() {
  // Explicit, as in RMM: an owning stream does not decay to a raw handle silently.
  static_assert(!std::is_convertible_v<rmm::cuda_stream, cudaStream_t>);
  static_assert(std::is_constructible_v<cudaStream_t, rmm::cuda_stream>);
  static_assert(!std::is_copy_constructible_v<rmm::device_buffer>);
  static_assert(std::is_nothrow_move_constructible_v<rmm::device_uvector<int>>);
  try {
    RMM_EXPECTS(false, "deliberate");
  } catch (rmm::logic_error const& e) {
    expect(std::string{e.what()}.rfind("RMM failure at: ", 0) == 0,
           "RMM_EXPECTS's message starts as RMM's does");
  }
  expect(rmm::detail::is_pow2(std::size_t{256}), "rmm/detail/aligned.hpp");
  static_cast<void>(rmm::detail::runtime_async_alloc::is_supported());
  std::printf("consumer: RMM compatibility (messages, explicit conversions): ok\n");
}

}  // namespace consumer
