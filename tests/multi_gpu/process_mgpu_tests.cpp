// What needs a second process (rmm_multi_gpu_child): no context on a device the program did not
// use (issue 14, item 1), and IPC of a device pool between two processes on two devices (item 3).
#include "../utilities/device_kernels.hpp"
#include "../utilities/ipc_channel.hpp"
#include "mgpu_ipc.hpp"
#include "mgpu_utilities.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <string>

namespace mgpu = rmm::test::mgpu;

TEST_CASE("multi-GPU: a program that uses one device creates no context on the others",
          "[mgpu][contexts]") {
  int const n = mgpu::device_count();
  for (int const d : std::set<int>{1, n - 1, 0}) {  // a set: with 2 GPUs, 1 is also the last
    DYNAMIC_SECTION("only device " << d) {
      auto const r = mgpu::run_child({"only-device", std::to_string(d)});
      INFO("child stderr: " << r.err);
      REQUIRE(r.spawned);
      CHECK(r.exited);
      CHECK(r.exit_code == 0);
    }
  }
}

TEST_CASE("multi-GPU: IPC of a device pool between two processes on two devices", "[mgpu][ipc]") {
  using rmm::mr::cuda_async_memory_resource;
  rmm::cuda_set_device_raii const on0{rmm::cuda_device_id{0}};
  cuda_async_memory_resource mr{
      {}, {}, cuda_async_memory_resource::allocation_handle_type::posix_file_descriptor};
  rmm::cuda_stream stream;
  std::size_t const half = std::size_t{4} << 20;
  void* ptr              = mr.allocate(stream.view(), 2 * half, 256);
  auto* base             = static_cast<char*>(ptr);
  rmm::test::fill_pattern(base, half, 51, stream.value());
  stream.synchronize();

  int pool_fd{-1};
  RMM_CUDA_TRY(cudaMemPoolExportToShareableHandle(
      &pool_fd, mr.pool_handle(), cudaMemHandleTypePosixFileDescriptor, 0));
  mgpu::ipc_request req{};
  RMM_CUDA_TRY(cudaMemPoolExportPointer(&req.exported, ptr));
  req.half          = half;
  req.parent_seed   = 51;
  req.child_seed    = 52;
  req.pool_device   = 0;
  req.reader_device = mgpu::device_count() - 1;

  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  // The request waits in the socket's buffer until the child reads it.
  REQUIRE(rmm::test::ipc::send_with_fd(sv[0], &req, sizeof(req), pool_fd));
  ::close(pool_fd);
  auto const r = mgpu::run_child({"ipc-import", std::to_string(sv[1])}, sv[1]);
  ::close(sv[1]);
  mgpu::ipc_reply reply{};
  bool const got = rmm::test::ipc::recv_all(sv[0], &reply, sizeof(reply));
  ::close(sv[0]);
  // The child has exited and freed its import: the parent reads what the other device wrote.
  std::size_t const seen =
      rmm::test::count_pattern_mismatches(base + half, half, 52, stream.value());
  mr.deallocate(stream.view(), ptr, 2 * half, 256);
  stream.synchronize();

  INFO("child stderr: " << r.err << "; child says: " << reply.message);
  REQUIRE(got);
  CHECK(reply.ok == 1);
  CHECK(reply.access_given == 1);
  CHECK(reply.device_mismatches == 0);  // device B read what device A wrote, in another process
  CHECK(seen == 0);                     // and device A reads what device B wrote there
  CHECK(r.exit_code == 0);
}
