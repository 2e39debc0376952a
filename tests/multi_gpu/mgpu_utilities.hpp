// Helpers of the multi-GPU suite (rmm_multi_gpu_tests): device counts, the device a pointer
// belongs to, and running the suite's second program (rmm_multi_gpu_child) with its stderr
// captured, for the checks that need a fresh process (an abort, the contexts a process created,
// IPC).
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace rmm::test::mgpu {

/// The number of visible devices (the suite's main skips below 2).
inline int device_count() { return rmm::get_num_cuda_devices(); }

/// The device that owns @p ptr's memory (cudaPointerGetAttributes), -1 for host memory.
inline int pointer_device(void const* ptr) {
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr));
  return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}

/// The path of rmm_multi_gpu_child: $RMM_MULTI_GPU_CHILD, else beside this program.
inline std::string child_program() {
  if (char const* path = std::getenv("RMM_MULTI_GPU_CHILD"); path != nullptr && path[0] != '\0') {
    return path;
  }
  char self[4096];
  ssize_t const n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string{self, static_cast<std::size_t>(n)} : std::string{};
  dir.erase(dir.find_last_of('/') + 1);
  return dir + "rmm_multi_gpu_child";
}

/// How a child ended and what it wrote to stderr.
struct child_result {
  bool spawned{false};
  bool exited{false};
  int exit_code{-1};
  int signal{0};
  std::string err;
};

/**
 * @brief Runs rmm_multi_gpu_child with @p args, its stderr captured (stdout inherited); with
 * @p keep_fd >= 0 that descriptor is passed on under the same number. Waits for it to end.
 */
inline child_result run_child(std::vector<std::string> const& args, int keep_fd = -1) {
  child_result r;
  std::string const program = child_program();
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    r.err = "pipe failed";
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  if (keep_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, keep_fd, keep_fd);  // clears FD_CLOEXEC
  }
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (auto const& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid{-1};
  int const spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    r.err = "posix_spawn " + program + " failed: errno " + std::to_string(spawned);
    return r;
  }
  r.spawned = true;
  char buffer[4096];
  for (;;) {
    ssize_t const n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    r.err.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status{0};
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exited    = WIFEXITED(status);
  r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
  r.signal    = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return r;
}

}  // namespace rmm::test::mgpu
