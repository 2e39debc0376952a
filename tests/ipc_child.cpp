// rmm_ipc_child: the second process of the pinned-pool IPC test
// (tests/mr/cuda_async_pinned_memory_resource_gpu_tests.cpp). Started with posix_spawn, so that
// CUDA is initialised in a fresh program; it talks to the parent over the socket it finds as
// descriptor rmm::test::ipc::child_socket_fd (or argv[1]). See tests/utilities/ipc_channel.hpp for
// the protocol. Exit status 0 if every step ran (the parent judges the results), 1 otherwise.
#include "utilities/device_kernels.hpp"
#include "utilities/ipc_channel.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace {

namespace ipc = rmm::test::ipc;

void set_message(ipc::reply& r, std::string const& text) {
  std::snprintf(r.message, sizeof(r.message), "%s", text.c_str());
}

int run(int sock) {
  ipc::reply r{};
  r.at = ipc::stage::failed;
  ipc::request req{};
  int pool_fd{-1};
  if (!ipc::recv_with_fd(sock, &req, sizeof(req), pool_fd) || pool_fd < 0) {
    set_message(r, "child: did not receive the request and the pool's file descriptor");
    ipc::send_all(sock, &r, sizeof(r));
    return 1;
  }
  try {
    RMM_CUDA_TRY(cudaSetDevice(req.device));
    rmm::mr::resource_uuid::bytes_type bytes{};
    std::memcpy(bytes.data(), req.uuid, bytes.size());
    rmm::mr::resource_uuid const uuid{bytes};

    auto mr = rmm::mr::cuda_async_pinned_memory_resource::from_allocation_handle(pool_fd, uuid);
    ::close(pool_fd);  // the caller's responsibility; the import holds its own reference
    r.is_mapped = mr.is_mapped() ? 1 : 0;
    r.uuid_ok   = mr.uuid() == uuid ? 1 : 0;
    try {
      void* p = mr.allocate(rmm::cuda_stream_default, 1024, 256);
      mr.deallocate(rmm::cuda_stream_default, p, 1024, 256);
    } catch (rmm::logic_error const&) {
      r.allocate_refused = 1;
    }
    auto const registered = mr.register_resource(uuid);
    bool const found      = rmm::mr::cuda_async_pinned_memory_resource::from_registry(uuid) == mr;
    bool const erased     = rmm::mr::cuda_async_pinned_memory_resource::unregister_resource(uuid);
    r.registry_ok         = (registered == mr && found && erased) ? 1 : 0;

    rmm::cuda_stream stream;
    void* ptr        = mr.import_pointer(req.exported);
    auto const half  = static_cast<std::size_t>(req.half);
    auto* const base = static_cast<unsigned char*>(ptr);
    r.device_mismatches =
        rmm::test::count_pattern_mismatches(base, half, req.parent_seed, stream.value());
    rmm::test::fill_pattern(base + half, half, req.child_seed, stream.value());
    stream.synchronize();
    r.at = ipc::stage::device_done;
    if (!ipc::send_all(sock, &r, sizeof(r))) {
      mr.free_imported_pointer(stream, ptr);
      stream.synchronize();
      return 1;
    }
    // Last, because a pointer the CPU cannot read ends this process here.
    r.host_mismatches = rmm::test::count_pattern_mismatches_host(base, half, req.parent_seed);
    mr.free_imported_pointer(stream, ptr);  // before the exporter frees the allocation
    stream.synchronize();
    mr.close();
    r.at = ipc::stage::finished;
  } catch (std::exception const& e) {
    r.at = ipc::stage::failed;
    set_message(r, std::string{"child: "} + e.what());
  }
  ipc::send_all(sock, &r, sizeof(r));
  return r.at == ipc::stage::finished ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int const sock = argc > 1 ? std::atoi(argv[1]) : ipc::child_socket_fd;
  int const rc   = run(sock);
  ::close(sock);
  return rc;
}
