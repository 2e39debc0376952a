// The cross-device IPC test of the multi-GPU suite (ipc_mgpu_tests.cpp and the child's
// "ipc-import" mode): what the parent sends with the pool's file descriptor, and the reply.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace rmm::test::mgpu {

/// Parent -> child, with the pool's POSIX file descriptor attached (SCM_RIGHTS).
struct ipc_request {
  cudaMemPoolPtrExportData exported{};
  std::uint64_t half{};          // the parent wrote [0, half), the child writes [half, 2 half)
  std::uint32_t parent_seed{};   // pattern of the parent's half
  std::uint32_t child_seed{};    // pattern of the child's half
  std::int32_t pool_device{};    // the exporting pool's device
  std::int32_t reader_device{};  // the device whose kernels read and write in the child
};

/// Child -> parent, once, before it exits.
struct ipc_reply {
  std::int32_t ok{};                  // every step ran
  std::int32_t access_given{};        // is_accessible_from(reader) after enable_access_from
  std::uint64_t device_mismatches{};  // the parent's half as a kernel on the reader saw it
  char message[512]{};                // why, when !ok
};

}  // namespace rmm::test::mgpu
