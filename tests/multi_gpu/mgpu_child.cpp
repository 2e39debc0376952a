// rmm_multi_gpu_child: the second process of the multi-GPU suite (tests/multi_gpu/), started with
// posix_spawn so that CUDA starts fresh in it. Modes:
//   free-on-other-device NAME  makes resource NAME on device 0, allocates, makes device 1 current
//                              and frees: the device check must abort the process (exit status
//                              3 if it did not)
//   only-device D              uses only device D (registry, containers, every resource, pinned
//                              memory), then checks with the driver that no other device has an
//                              active primary context: exit 0, else 1 naming them on stderr
//   ipc-import FD              imports a device pool from the socket FD and reads and writes it
//                              from another device (see mgpu_ipc.hpp)
#include "../utilities/device_kernels.hpp"
#include "../utilities/ipc_channel.hpp"
#include "mgpu_ipc.hpp"
#include "mgpu_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace {

namespace mgpu = rmm::test::mgpu;

int free_on_other_device(std::string const& name) {
  auto const f = mgpu::find_resource(name);
  if (!f.make) {
    std::fprintf(stderr, "unknown resource %s\n", name.c_str());
    return 2;
  }
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto mr = f.make();
  void* p = mr.allocate(rmm::cuda_stream_default, 4096, 256);
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  RMM_CUDA_TRY(cudaSetDevice(1));
  mr.deallocate(rmm::cuda_stream_default, p, 4096, 256);  // must abort
  return 3;
}

// Everything a program does with the library on one device.
void use_only(int device) {
  RMM_CUDA_TRY(cudaSetDevice(device));
  rmm::cuda_stream stream;
  {
    rmm::device_buffer plain(1000, stream.view());  // the registry's initial cuda_memory_resource
  }
  auto previous = rmm::mr::set_current_device_resource(
      rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0});
  {
    rmm::device_buffer buffer(1 << 20, stream.view());
    rmm::device_uvector<int> vector(1000, stream.view());
    vector.resize(5000, stream.view());
    rmm::device_scalar<int> scalar(42, stream.view());
    if (scalar.value(stream.view()) != 42) {
      throw std::runtime_error("device_scalar lost its value");
    }
  }
  stream.synchronize();
  rmm::mr::set_current_device_resource(std::move(previous));
  for (auto const& f : mgpu::device_resources()) {
    auto mr = f.make();
    void* p = mr.allocate(stream.view(), 4096, 256);
    mr.deallocate(stream.view(), p, 4096, 256);
    stream.synchronize();
  }
  rmm::mr::pinned_host_memory_resource pinned;
  void* h = pinned.allocate_sync(4096, 256);
  pinned.deallocate_sync(h, 4096, 256);
  rmm::mr::cuda_async_pinned_memory_resource pinned_pool{rmm::mr::pinned_pool_options{}};
  void* q = pinned_pool.allocate(stream.view(), 4096, 256);
  pinned_pool.deallocate(stream.view(), q, 4096, 256);
  stream.synchronize();
}

template <typename F>
bool driver_function(char const* symbol, F& fn) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &address, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || address == nullptr) {
    return false;
  }
  fn = reinterpret_cast<F>(address);
  return true;
}

int only_device(int device) {
  use_only(device);
  decltype(&cuDeviceGet) device_get{};
  decltype(&cuDevicePrimaryCtxGetState) ctx_state{};
  if (!driver_function("cuDeviceGet", device_get) ||
      !driver_function("cuDevicePrimaryCtxGetState", ctx_state)) {
    std::fprintf(stderr, "the driver lacks cuDeviceGet or cuDevicePrimaryCtxGetState\n");
    return 2;
  }
  int failures = 0;
  for (int d = 0, n = rmm::get_num_cuda_devices(); d < n; ++d) {
    CUdevice handle{};
    unsigned int flags{};
    int active{0};
    if (device_get(&handle, d) != CUDA_SUCCESS ||
        ctx_state(handle, &flags, &active) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cannot read the context state of device %d\n", d);
      return 2;
    }
    if (d == device && active == 0) {
      std::fprintf(
          stderr, "device %d, the one used, has no active context: the check is blind\n", d);
      return 2;
    }
    if (d != device && active != 0) {
      std::fprintf(stderr,
                   "device %d has an active primary context, but only device %d was used\n",
                   d,
                   device);
      ++failures;
    }
  }
  std::fprintf(stderr, "only-device %d: %s\n", device, failures == 0 ? "clean" : "contexts leaked");
  return failures == 0 ? 0 : 1;
}

int ipc_import(int sock) {
  mgpu::ipc_reply reply{};
  auto say = [&](std::string const& text) {
    std::snprintf(reply.message, sizeof(reply.message), "%s", text.c_str());
  };
  mgpu::ipc_request req{};
  int pool_fd{-1};
  if (!rmm::test::ipc::recv_with_fd(sock, &req, sizeof(req), pool_fd) || pool_fd < 0) {
    say("child: no request or no file descriptor");
    rmm::test::ipc::send_all(sock, &reply, sizeof(reply));
    return 1;
  }
  try {
    RMM_CUDA_TRY(cudaSetDevice(req.pool_device));
    cudaMemPool_t pool{};
    RMM_CUDA_TRY(cudaMemPoolImportFromShareableHandle(
        &pool,
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(pool_fd)),
        cudaMemHandleTypePosixFileDescriptor,
        0));
    ::close(pool_fd);
    {
      rmm::mr::cuda_async_view_memory_resource view{pool};
      view.enable_access_from(rmm::cuda_device_id{req.reader_device});
      reply.access_given = view.is_accessible_from(rmm::cuda_device_id{req.reader_device}) ? 1 : 0;
    }
    void* ptr{nullptr};
    RMM_CUDA_TRY(cudaMemPoolImportPointer(&ptr, pool, &req.exported));
    RMM_CUDA_TRY(cudaSetDevice(req.reader_device));
    {
      rmm::cuda_stream stream;
      auto* base = static_cast<char*>(ptr);
      reply.device_mismatches =
          rmm::test::count_pattern_mismatches(base, req.half, req.parent_seed, stream.value());
      rmm::test::fill_pattern(base + req.half, req.half, req.child_seed, stream.value());
      stream.synchronize();
    }
    RMM_CUDA_TRY(cudaFree(ptr));  // the import, before the exporter frees the allocation
    RMM_CUDA_TRY(cudaSetDevice(req.pool_device));
    RMM_CUDA_TRY(cudaMemPoolDestroy(pool));
    reply.ok = 1;
  } catch (std::exception const& e) {
    say(std::string{"child: "} + e.what());
  }
  rmm::test::ipc::send_all(sock, &reply, sizeof(reply));
  return reply.ok != 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(
        stderr, "usage: %s free-on-other-device NAME | only-device D | ipc-import FD\n", argv[0]);
    return 2;
  }
  std::string const mode = argv[1];
  try {
    if (mode == "free-on-other-device") {
      return free_on_other_device(argv[2]);
    }
    if (mode == "only-device") {
      return only_device(std::atoi(argv[2]));
    }
    if (mode == "ipc-import") {
      return ipc_import(std::atoi(argv[2]));
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "%s: %s\n", mode.c_str(), e.what());
    return 2;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
