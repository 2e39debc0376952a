// A consumer of the installed package that uses every public class: construction, copy, move,
// comparison, allocation through resource_refs and any_resource, the per-device registry's
// setters and getters, the allocators in a standard container. scripts/compile_matrix.sh builds
// it as C++17 and C++20 with g++, clang++ and nvcc (this file is then compiled as CUDA), with
// warnings as errors, through find_package(rmm).
//
// Everything is instantiated whatever the machine; the parts that need a GPU run only where
// there is one (scripts/gpu_suite.sh runs it there). Exit code 0: every check held.
#include "consumer_rmm26.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/memory_size.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/block_memory_pool_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/device_host_pool_pair.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/gpu_allocator_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/pool_size_strings.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/mr/stream_ordered_allocator.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/unbounded_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace consumer {
namespace {
int failures = 0;
}  // namespace

void expect(bool condition, char const* what) {
  if (!condition) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace consumer

namespace {

using consumer::expect;

using any_device = cuda::mr::any_resource<cuda::mr::device_accessible>;

// Copy, move, both assignments and both comparisons: what the issue saw fail to compile in C++20.
template <typename Resource>
void value_semantics(Resource const& resource) {
  static_assert(cuda::mr::resource_with<Resource, cuda::mr::device_accessible>);
  Resource copy{resource};
  expect(copy == resource, "a copy compares equal");
  expect(!(copy != resource), "a copy does not compare unequal");
  Resource moved{std::move(copy)};
  expect(moved == resource, "a moved-to resource compares equal to the original");
  Resource assigned{resource};
  assigned = moved;
  expect(assigned == resource, "copy assignment");
  assigned = std::move(moved);
  expect(assigned == resource, "move assignment");
}

// Allocation through every kind of reference and through any_resource, on a stream and
// synchronously.
template <typename Resource>
void allocate_through_refs(Resource& resource, rmm::cuda_stream_view stream) {
  rmm::device_async_resource_ref async_ref{resource};
  void* ptr = async_ref.allocate(stream, 1000, rmm::CUDA_ALLOCATION_ALIGNMENT);
  expect(ptr != nullptr && rmm::is_pointer_aligned(ptr),
         "allocate through device_async_resource_ref");
  RMM_CUDA_TRY(cudaMemsetAsync(ptr, 0, 1000, stream.value()));
  async_ref.deallocate(stream, ptr, 1000, rmm::CUDA_ALLOCATION_ALIGNMENT);

  rmm::device_resource_ref sync_ref{resource};
  ptr = sync_ref.allocate_sync(512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  expect(ptr != nullptr, "allocate_sync through device_resource_ref");
  sync_ref.deallocate_sync(ptr, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);

  any_device owner{resource};
  expect(owner == any_device{resource}, "any_resource over copies compares equal");
  rmm::device_async_resource_ref from_any{owner};
  expect(from_any == async_ref, "resource_refs to equal resources compare equal");
  ptr = from_any.allocate(stream, 256, 256);
  from_any.deallocate(stream, ptr, 256, 256);
  stream.synchronize();
}

template <typename Resource>
void exercise(char const* name, Resource resource, rmm::cuda_stream_view stream) {
  value_semantics(resource);
  allocate_through_refs(resource, stream);
  std::printf("consumer: %s: copy, move, compare, allocate: ok\n", name);
}

// The per-device registry: owning setters hand back the previous resource; getters return refs.
void registry(rmm::cuda_stream_view stream) {
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  any_device previous = rmm::mr::set_current_device_resource(pool);
  expect(rmm::mr::get_current_device_resource_ref() == rmm::device_async_resource_ref{pool},
         "get_current_device_resource_ref returns what was set");
  auto const device = rmm::get_current_cuda_device();
  any_device const replaced =
      rmm::mr::set_per_device_resource(device, rmm::mr::arena_memory_resource{pool, 64U << 20U});
  expect(replaced == any_device{pool}, "set_per_device_resource returns the previous resource");
  void* ptr = rmm::mr::get_per_device_resource_ref(device).allocate(stream, 4096, 256);
  rmm::mr::get_per_device_resource_ref(device).deallocate(stream, ptr, 4096, 256);
  static_cast<void>(rmm::mr::reset_per_device_resource(device));
  static_cast<void>(rmm::mr::reset_current_device_resource());
  static_cast<void>(rmm::mr::set_current_device_resource(std::move(previous)));
  stream.synchronize();
  std::printf("consumer: per-device registry setters and getters: ok\n");
}

// Allocators: construction, copy, rebind, comparison and a std::vector through the adaptor.
void allocators(rmm::cuda_stream_view stream) {
  rmm::mr::polymorphic_allocator<int> alloc{rmm::mr::managed_memory_resource{}};
  rmm::mr::polymorphic_allocator<int> copy{alloc};
  rmm::mr::polymorphic_allocator<double> rebound{alloc};
  expect(copy == alloc && rebound == alloc && !(rebound != alloc),
         "polymorphic_allocator equality");
  rmm::mr::polymorphic_allocator<int> moved{std::move(copy)};
  expect(moved == alloc, "a moved-to polymorphic_allocator compares equal");
  rmm::mr::polymorphic_allocator<int> on_current{};
  static_cast<void>(on_current);

  auto adapted = rmm::mr::stream_allocator_adaptor{alloc, stream};
  auto made    = rmm::mr::make_stream_allocator_adaptor(alloc, stream);
  expect(adapted == made && !(adapted != made), "stream_allocator_adaptor equality");
  std::vector<int, decltype(adapted)> values(1000, 0, adapted);
  std::iota(values.begin(), values.end(), 1);
  expect(std::accumulate(values.begin(), values.end(), 0LL) == 500500LL,
         "std::vector over the adapted allocator");
  std::printf("consumer: polymorphic_allocator and stream_allocator_adaptor: ok\n");
}

// The inference runtime's GPU allocator interface over a resource of this library: what an
// application's IGpuAllocator subclass forwards to.
template <typename Resource>
void gpu_allocator(Resource const& upstream, rmm::cuda_stream_view stream) {
  rmm::mr::gpu_allocator_adaptor adaptor{upstream, stream};
  rmm::mr::gpu_allocator_adaptor copy{adaptor};
  expect(copy == adaptor && !(copy != adaptor), "gpu_allocator_adaptor copies compare equal");
  void* ptr = adaptor.allocate(1000, 256, rmm::mr::gpu_allocator_adaptor::resizable);
  expect(ptr != nullptr && rmm::is_pointer_aligned(ptr), "gpu_allocator_adaptor::allocate");
  RMM_CUDA_TRY(cudaMemset(ptr, 0, 1000));
  void* grown = adaptor.reallocate(ptr, 256, 5000);
  expect(grown != nullptr && adaptor.allocated_bytes() == 5000,
         "gpu_allocator_adaptor::reallocate");
  RMM_CUDA_TRY(cudaMemset(grown, 1, 5000));
  expect(copy.deallocate(grown) && !adaptor.deallocate(grown),
         "gpu_allocator_adaptor::deallocate is true exactly once");
  void* fixed = adaptor.allocate(64, 0, 0);
  expect(adaptor.reallocate(fixed, 0, 128) == nullptr, "only resizable allocations reallocate");
  adaptor.free(fixed);
  expect(adaptor.live_allocations() == 0 && adaptor.stream() == stream,
         "gpu_allocator_adaptor bookkeeping");
  void* direct = adaptor.get_upstream_resource().allocate(stream, 256, 256);
  adaptor.get_upstream_resource().deallocate(stream, direct, 256, 256);
  stream.synchronize();
  std::printf("consumer: gpu_allocator_adaptor: allocate, reallocate, deallocate, free: ok\n");
}

// Resources that need memory the machine may lack (HMM/ATS) refuse construction with a
// logic_error; the consumer then checks the refusal instead.
template <typename Make>
void maybe_unsupported(char const* name, Make make, rmm::cuda_stream_view stream) {
  try {
    exercise(name, make(), stream);
  } catch (rmm::logic_error const& e) {
    std::printf("consumer: %s: refused on this machine (%s)\n", name, e.what());
  }
}

void* callback_allocate(std::size_t bytes, rmm::cuda_stream_view, void*) {
  void* ptr = nullptr;
  RMM_CUDA_TRY(cudaMalloc(&ptr, bytes));
  return ptr;
}
void callback_deallocate(void* ptr, std::size_t, rmm::cuda_stream_view, void*) {
  RMM_ASSERT_CUDA_SUCCESS(cudaFree(ptr));
}

// The virtual memory resource's own operations, and the expandable pool's release().
void expandable(rmm::cuda_stream_view stream) {
  try {
    rmm::mr::virtual_memory_resource vmm;
    void* ptr = vmm.allocate(stream, 1000, 256);
    expect(vmm.try_resize(ptr, 1000, 3U << 20U, stream), "virtual_memory_resource::try_resize");
    expect(vmm.mapped_size(ptr) >= (3U << 20U) && vmm.used_bytes() == (3U << 20U),
           "virtual_memory_resource statistics");
    vmm.deallocate(stream, ptr, 3U << 20U, 256);
    rmm::mr::pool_memory_resource pool{vmm, 0};
    expect(pool.grows_in_place(), "pool over virtual_memory_resource grows in place");
    pool.set_release_threshold(0);
    void* block = pool.allocate(stream, 1U << 20U, 256);
    pool.deallocate(stream, block, 1U << 20U, 256);
    pool.release();
    vmm.flush();
    expect(pool.pool_size() == 0 && vmm.mapped_bytes() == 0, "pool release() unmaps");
    std::printf("consumer: virtual_memory_resource and the expandable pool: ok\n");
  } catch (rmm::logic_error const& e) {
    std::printf("consumer: virtual_memory_resource: refused on this machine (%s)\n", e.what());
  }
}

void with_gpu() {
  rmm::cuda_stream stream;
  rmm::cuda_stream moved_stream{std::move(stream)};
  rmm::cuda_stream_view const view = moved_stream.view();
  rmm::cuda_stream_pool streams{2};
  expect(streams.get_pool_size() == 2 && streams.get_stream(0) != streams.get_stream(1),
         "cuda_stream_pool hands out distinct streams");
  { rmm::cuda_set_device_raii const same_device{rmm::get_current_cuda_device()}; }

  exercise("cuda_memory_resource", rmm::mr::cuda_memory_resource{}, view);
  exercise("managed_memory_resource", rmm::mr::managed_memory_resource{}, view);
  exercise("pinned_host_memory_resource", rmm::mr::pinned_host_memory_resource{}, view);
  exercise("callback_memory_resource",
           rmm::mr::callback_memory_resource{callback_allocate, callback_deallocate},
           view);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::size_t{2} << 30U};
  exercise("pool_memory_resource", pool, view);
  exercise("fixed_size_memory_resource", rmm::mr::fixed_size_memory_resource{pool}, view);
  exercise("binning_memory_resource", rmm::mr::binning_memory_resource{pool, 10, 16}, view);
  exercise("arena_memory_resource", rmm::mr::arena_memory_resource{pool, 64U << 20U}, view);
  rmm::mr::cuda_async_memory_resource async{};
  exercise("cuda_async_memory_resource", async, view);
  exercise("cuda_async_view_memory_resource",
           rmm::mr::cuda_async_view_memory_resource{async.pool_handle()},
           view);
  exercise(
      "cuda_async_managed_memory_resource", rmm::mr::cuda_async_managed_memory_resource{}, view);
  rmm::mr::cuda_async_pinned_memory_resource pinned{rmm::mr::pinned_pool_options{}};
  exercise("cuda_async_pinned_memory_resource", pinned, view);
  rmm::host_device_async_resource_ref pinned_ref{pinned};
  void* host_visible = pinned_ref.allocate(view, 64, 64);
  view.synchronize();
  static_cast<char*>(host_visible)[0] = 1;
  pinned_ref.deallocate(view, host_visible, 64, 64);
  exercise("unbounded_memory_resource",
           rmm::mr::unbounded_memory_resource{rmm::mr::storage_type::device},
           view);
  exercise("block_memory_pool_resource",
           rmm::mr::block_memory_pool_resource{rmm::mr::storage_type::device, 1U << 20U, 4},
           view);
  rmm::mr::device_host_pool_pair pair{rmm::mr::device_host_pool_config{}};
  expect(pair == rmm::mr::device_host_pool_pair{pair},
         "device_host_pool_pair copies compare equal");
  exercise("device_host_pool_pair::device_memory_resource", pair.device_memory_resource(), view);
  exercise("make_stream_ordered_allocator", rmm::mr::make_stream_ordered_allocator(), view);
  maybe_unsupported(
      "system_memory_resource", [] { return rmm::mr::system_memory_resource{}; }, view);
  maybe_unsupported(
      "sam_headroom_memory_resource",
      [] { return rmm::mr::sam_headroom_memory_resource{1U << 30U}; },
      view);

  maybe_unsupported(
      "virtual_memory_resource", [] { return rmm::mr::virtual_memory_resource{}; }, view);
  maybe_unsupported(
      "pool_memory_resource over virtual_memory_resource",
      [] {
        return rmm::mr::pool_memory_resource{rmm::mr::virtual_memory_resource{}, 0};
      },
      view);
  expandable(view);

  registry(view);
  allocators(view);
  gpu_allocator(pool, view);
  consumer::rmm26_with_gpu(view);
}

// What runs everywhere, GPU or not.
void host_only() {
  expect(rmm::parse_memory_size("512MB") == (512U << 20U), "parse_memory_size");
  expect(rmm::align_up(1, 256) == 256 && rmm::is_pow2(64), "aligned.hpp");
  expect(rmm::mr::storage_type_from_int(1) == rmm::mr::storage_type::device &&
             !rmm::mr::storage_type_name(rmm::mr::storage_type::pinned_host).empty(),
         "storage_type");
  expect(rmm::cuda_stream_view{} == rmm::cuda_stream_default, "cuda_stream_view comparison");
  expect(rmm::cuda_device_id{1} != rmm::cuda_device_id{2}, "cuda_device_id comparison");
  expect(!rmm::process_is_exiting(), "process_is_exiting");
  rmm::set_log_level(rmm::get_log_level());
  {  // its refusals need no GPU
    rmm::mr::gpu_allocator_adaptor adaptor{rmm::mr::cuda_memory_resource{}};
    expect(adaptor.allocate(0, 0, 0) == nullptr && adaptor.allocate(64, 3, 0) == nullptr &&
               adaptor.deallocate(nullptr) && adaptor.reallocate(nullptr, 0, 64) == nullptr,
           "gpu_allocator_adaptor refusals");
    adaptor.free(nullptr);
  }
  try {
    RMM_FAIL("deliberate", rmm::out_of_memory);
  } catch (rmm::bad_alloc const& e) {
    expect(std::string{e.what()}.find("deliberate") != std::string::npos,
           "out_of_memory is a bad_alloc with the message");
  }
  {
    rmm::out_of_memory_report report;
    report.resource        = "consumer";
    report.requested_bytes = 64;
    report.maximum_bytes   = 32;
    rmm::out_of_memory const e{report};
    expect(e.report() != nullptr && e.report()->requested_bytes == 64 &&
               rmm::to_string(report) == "consumer: cannot allocate 64 bytes [maximum 32 bytes]",
           "out_of_memory carries its report, which its message spells out");
  }
}

}  // namespace

int main() {
  host_only();
  consumer::rmm26_host_only();
  if (rmm::get_num_cuda_devices() == 0) {
    std::printf("consumer: no CUDA device: every class compiled and linked; GPU parts not run\n");
  } else {
    try {
      with_gpu();
    } catch (std::exception const& e) {
      std::fprintf(stderr, "consumer: unexpected exception: %s\n", e.what());
      ++consumer::failures;
    }
  }
  std::printf("consumer: %s\n", consumer::failures == 0 ? "all checks held" : "FAILED");
  return consumer::failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
