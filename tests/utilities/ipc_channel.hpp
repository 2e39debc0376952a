// The two-process IPC test of cuda_async_pinned_memory_resource: the messages the parent (the GPU
// test) and the child (tests/ipc_child.cpp, built as rmm_ipc_child) exchange over a Unix
// socketpair, and the socket helpers that carry a file descriptor with SCM_RIGHTS.
//
// Protocol: the parent spawns the child (posix_spawn: a fresh program, no CUDA after fork) with
// the socket as descriptor ipc_child_socket_fd, then sends one ipc_request with the pool's file
// descriptor attached. The child imports the pool and the pointer, checks the parent's half on
// the device, writes its own half, and replies ipc_reply{stage = device_done}; then it checks the
// parent's half on the host, frees its import, closes the pool and replies
// ipc_reply{stage = finished}. A child that dies in between leaves the parent an end of file.
#pragma once

#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rmm::test::ipc {

/// The descriptor number under which the child finds its end of the socket.
inline constexpr int child_socket_fd = 200;

/// What the parent sends (trivially copyable; the pool's descriptor travels beside it).
struct request {
  std::uint8_t uuid[16];
  rmm::mr::pinned_pool_pointer_export exported;
  std::uint64_t half;  // the parent wrote [0, half), the child writes [half, 2 * half)
  std::uint32_t parent_seed;
  std::uint32_t child_seed;
  std::int32_t device;
};

enum class stage : std::int32_t { failed = 0, device_done = 1, finished = 2 };

/// What the child replies (twice: after the device checks, and at the end).
struct reply {
  stage at;
  std::int32_t is_mapped;           // the imported resource said is_mapped()
  std::int32_t allocate_refused;    // allocate() on it threw rmm::logic_error
  std::int32_t registry_ok;         // register/from_registry/unregister behaved
  std::int32_t uuid_ok;             // uuid() returned what the parent sent
  std::uint64_t device_mismatches;  // parent's half, checked by a kernel
  std::uint64_t host_mismatches;    // parent's half, read by the CPU (second reply)
  char message[512];                // why, when at == failed
};

/// Writes all @p len bytes; false on error.
inline bool send_all(int sock, void const* data, std::size_t len) {
  auto const* p = static_cast<char const*>(data);
  while (len > 0) {
    ssize_t const n = ::send(sock, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Reads exactly @p len bytes; false on error, timeout or end of file.
inline bool recv_all(int sock, void* data, std::size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t const n = ::recv(sock, p, len, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Sends @p len bytes with descriptor @p fd attached (SCM_RIGHTS); false on error.
inline bool send_with_fd(int sock, void const* data, std::size_t len, int fd) {
  iovec iov{const_cast<void*>(data), len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof(control));
  msghdr msg{};
  msg.msg_iov        = &iov;
  msg.msg_iovlen     = 1;
  msg.msg_control    = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg      = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level   = SOL_SOCKET;
  cmsg->cmsg_type    = SCM_RIGHTS;
  cmsg->cmsg_len     = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  ssize_t n{};
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return false;
  }
  auto const sent = static_cast<std::size_t>(n);
  return sent == len || send_all(sock, static_cast<char const*>(data) + sent, len - sent);
}

/// Receives @p len bytes and the descriptor sent with them (-1 if none); false on error.
inline bool recv_with_fd(int sock, void* data, std::size_t len, int& fd) {
  fd = -1;
  iovec iov{data, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof(control));
  msghdr msg{};
  msg.msg_iov        = &iov;
  msg.msg_iovlen     = 1;
  msg.msg_control    = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n{};
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    return false;
  }
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
    }
  }
  auto const got = static_cast<std::size_t>(n);
  return got == len || recv_all(sock, static_cast<char*>(data) + got, len - got);
}

}  // namespace rmm::test::ipc
