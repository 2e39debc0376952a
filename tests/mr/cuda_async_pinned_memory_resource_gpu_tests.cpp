// cuda_async_pinned_memory_resource: owned pools from options (placement, max_size, validation),
// the driver's current pool, close(), host and device access, statistics and limits, the UUID
// registry, and IPC with a second process (rmm_ipc_child, tests/ipc_child.cpp) that imports the
// pool and one allocation, checks the parent's data and writes its own.
#include "../utilities/device_kernels.hpp"
#include "../utilities/ipc_channel.hpp"
#include "../utilities/messages.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

extern char** environ;

namespace {

using rmm::test::logic_error_message;

using Catch::Matchers::Contains;
using rmm::mr::cuda_async_pinned_memory_resource;
using rmm::mr::pinned_pool_options;
using rmm::mr::resource_uuid;
constexpr std::size_t MiB = std::size_t{1} << 20;

int device_attribute(cudaDeviceAttr attr) {
  int value{0};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, rmm::get_current_cuda_device().value()));
  return value;
}

// Why pinned host pools cannot be tested here (empty if they can).
std::string host_pools_unavailable() {
  if (device_attribute(cudaDevAttrMemoryPoolsSupported) == 0) {
    return "no memory pools on this device";
  }
  if (device_attribute(cudaDevAttrHostMemoryPoolsSupported) == 0) {
    return "cudaDevAttrHostMemoryPoolsSupported is 0";
  }
  return {};
}

// Why IPC of a pinned pool cannot be tested here (empty if it can).
std::string ipc_unavailable() {
  if (auto why = host_pools_unavailable(); !why.empty()) {
    return why;
  }
  if (device_attribute(cudaDevAttrHostNumaMemoryPoolsSupported) == 0) {
    return "cudaDevAttrHostNumaMemoryPoolsSupported is 0";
  }
  if (device_attribute(cudaDevAttrHostNumaId) < 0) {
    return "the device reports no host NUMA node (cudaDevAttrHostNumaId is -1)";
  }
  if ((device_attribute(cudaDevAttrMemoryPoolSupportedHandleTypes) &
       cudaMemHandleTypePosixFileDescriptor) == 0) {
    return "POSIX file descriptors are not a supported memory pool handle type";
  }
  return {};
}

bool skip(std::string const& why) {
  if (!why.empty()) {
    WARN("SKIPPED: " << why);
    return true;
  }
  return false;
}

// Host and device both read and write @p ptr.
void check_host_and_device_access(void* ptr, std::size_t bytes, rmm::cuda_stream const& stream) {
  rmm::test::fill_pattern(ptr, bytes, 31, stream.value());
  stream.synchronize();
  CHECK(rmm::test::count_pattern_mismatches_host(ptr, bytes, 31) == 0);
  rmm::test::fill_pattern_host(ptr, bytes, 32);
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, 32, stream.value()) == 0);
}

std::size_t host_memory() {
  return static_cast<std::size_t>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::size_t>(::sysconf(_SC_PAGE_SIZE));
}

}  // namespace

TEST_CASE("cuda_async_pinned: a new pool with default options", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  cuda_async_pinned_memory_resource mr{pinned_pool_options{}};
  REQUIRE(mr.pool_handle() != nullptr);
  CHECK(mr.is_handle_owned());
  CHECK_FALSE(mr.is_ipc_enabled());
  CHECK_FALSE(mr.is_mapped());
  CHECK(mr.numa_id() == -1);
  CHECK(mr.device_id() == -1);
  CHECK_FALSE(mr.uuid().has_value());
  std::uint64_t threshold{0};
  RMM_CUDA_TRY(
      cudaMemPoolGetAttribute(mr.pool_handle(), cudaMemPoolAttrReleaseThreshold, &threshold));
  CHECK(threshold == std::numeric_limits<std::uint64_t>::max());
  STATIC_REQUIRE(cuda::has_property<cuda_async_pinned_memory_resource, cuda::mr::host_accessible>);
  STATIC_REQUIRE(
      cuda::has_property<cuda_async_pinned_memory_resource, cuda::mr::device_accessible>);

  rmm::cuda_stream stream;
  std::size_t const bytes = 6 * MiB + 7;
  void* ptr               = mr.allocate(stream, bytes, 256);
  REQUIRE(ptr != nullptr);
  check_host_and_device_access(ptr, bytes, stream);
  CHECK(mr.used_bytes() >= bytes);
  CHECK(mr.reserved_bytes() >= mr.used_bytes());
  mr.deallocate(stream, ptr, bytes, 256);
  stream.synchronize();
  CHECK(mr.used_bytes() == 0);
  CHECK(mr.peak_used_bytes() >= bytes);
  mr.free_all_blocks();
  CHECK(mr.reserved_bytes() == 0);

  // Copies share the pool; closing through one closes it for all.
  auto copy = mr;
  CHECK(copy == mr);
  copy.close();
  CHECK(mr.pool_handle() == nullptr);
  CHECK_THAT(logic_error_message([&] { static_cast<void>(mr.allocate(stream, 1, 256)); }),
             Contains("closed"));
  CHECK_THROWS_AS(mr.used_bytes(), rmm::logic_error);
  mr.close();  // again: nothing
}

TEST_CASE("cuda_async_pinned: priming, release threshold and max_size",
          "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  pinned_pool_options options;
  options.initial_pool_size = 32 * MiB;
  options.max_size          = 64 * MiB;
  options.release_threshold = 16 * MiB;
  cuda_async_pinned_memory_resource mr{options};
  std::uint64_t threshold{0};
  RMM_CUDA_TRY(
      cudaMemPoolGetAttribute(mr.pool_handle(), cudaMemPoolAttrReleaseThreshold, &threshold));
  CHECK(threshold == 16 * MiB);
  CHECK(mr.peak_reserved_bytes() >= 32 * MiB);  // primed
  rmm::cuda_stream stream;
  try {
    void* ptr = mr.allocate(stream, 128 * MiB, 256);
    mr.deallocate(stream, ptr, 128 * MiB, 256);
    FAIL("a request above max_size did not throw");
  } catch (rmm::out_of_memory const& e) {
    CHECK_THAT(std::string{e.what()}, Contains("max_size of 67108864") && Contains("134217728"));
  }
  void* ptr = mr.allocate(stream, 48 * MiB, 256);
  mr.deallocate(stream, ptr, 48 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async_pinned: invalid options name the value", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  CHECK_THAT(logic_error_message([] {
               pinned_pool_options o;
               o.numa_id = -3;
               cuda_async_pinned_memory_resource{o};
             }),
             Contains("numa_id -3"));
  CHECK_THAT(logic_error_message([] {
               pinned_pool_options o;
               o.max_size = 0;
               cuda_async_pinned_memory_resource{o};
             }),
             Contains("max_size must not be 0"));
  CHECK_THAT(logic_error_message([] {
               pinned_pool_options o;
               o.ipc_enabled = true;
               o.numa_id     = -1;
               cuda_async_pinned_memory_resource{o};
             }),
             Contains("IPC-enabled") && Contains("numa_id is -1"));
  CHECK_THAT(logic_error_message([] {
               static_cast<void>(cuda_async_pinned_memory_resource::from_allocation_handle(-1));
             }),
             Contains("file descriptor -1"));
}

TEST_CASE("cuda_async_pinned: a pool on a host NUMA node", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  int const node = device_attribute(cudaDevAttrHostNumaId);
  if (device_attribute(cudaDevAttrHostNumaMemoryPoolsSupported) == 0 || node < 0) {
    WARN("SKIPPED: no host NUMA pools (supported "
         << device_attribute(cudaDevAttrHostNumaMemoryPoolsSupported) << ", host NUMA id " << node
         << ")");
    return;
  }
  pinned_pool_options options;
  options.numa_id = node;
  cuda_async_pinned_memory_resource mr{options};
  CHECK(mr.numa_id() == node);
  CHECK_FALSE(mr.is_ipc_enabled());
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, 2 * MiB, 256);
  check_host_and_device_access(ptr, 2 * MiB, stream);
  mr.deallocate(stream, ptr, 2 * MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async_pinned: the driver's current pool is not owned", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  auto mr = cuda_async_pinned_memory_resource::current();
  REQUIRE(mr.pool_handle() != nullptr);
  CHECK_FALSE(mr.is_handle_owned());
  CHECK_FALSE(mr.is_ipc_enabled());
  CHECK_FALSE(mr.is_mapped());
  CHECK(mr.numa_id() == -1);
  CHECK(cuda_async_pinned_memory_resource::current() == mr);  // the same pool
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeHost;
  cudaMemPool_t expected{};
  RMM_CUDA_TRY(cudaMemGetMemPool(&expected, &location, cudaMemAllocationTypePinned));
  CHECK(mr.pool_handle() == expected);
  // Accessible from the device.
  cudaMemLocation device{};
  device.type = cudaMemLocationTypeDevice;
  device.id   = rmm::get_current_cuda_device().value();
  cudaMemAccessFlags flags{};
  RMM_CUDA_TRY(cudaMemPoolGetAccess(&flags, mr.pool_handle(), &device));
  CHECK(flags == cudaMemAccessFlagsProtReadWrite);

  mr.close();  // no effect: not owned
  CHECK(mr.pool_handle() == expected);
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, MiB, 256);
  check_host_and_device_access(ptr, MiB, stream);
  mr.deallocate(stream, ptr, MiB, 256);
  stream.synchronize();
}

TEST_CASE("cuda_async_pinned: limits and statistics", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  cuda_async_pinned_memory_resource mr{pinned_pool_options{}};
  rmm::cuda_stream stream;
  mr.set_limit(4 * MiB);
  void* a = mr.allocate(stream, 3 * MiB, 256);
  try {
    void* b = mr.allocate(stream, 2 * MiB, 256);
    mr.deallocate(stream, b, 2 * MiB, 256);
    FAIL("exceeding the limit did not throw");
  } catch (rmm::out_of_memory const& e) {
    CHECK_THAT(std::string{e.what()},
               Contains("limit of 4194304 bytes") && Contains("2097152 bytes") &&
                   Contains("3145728 bytes used"));
  }
  mr.deallocate(stream, a, 3 * MiB, 256);
  void* c = mr.allocate(stream, 4 * MiB, 256);
  stream.synchronize();
  CHECK(mr.used_bytes() >= 4 * MiB);
  mr.deallocate(stream, c, 4 * MiB, 256);
  stream.synchronize();
  mr.reset_peaks();
  CHECK(mr.peak_used_bytes() < 4 * MiB);
  // A fraction of the host's memory.
  mr.set_limit_fraction(0.25);
  CHECK(mr.get_limit() ==
        static_cast<std::size_t>(std::floor(static_cast<long double>(host_memory()) * 0.25L)));
  CHECK_THROWS_AS(mr.set_limit_fraction(2.0), rmm::logic_error);
  mr.set_limit(0);
  mr.release();
  CHECK(mr.reserved_bytes() == 0);
}

TEST_CASE("cuda_async_pinned: the registry by UUID", "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  cuda_async_pinned_memory_resource first{pinned_pool_options{}};
  cuda_async_pinned_memory_resource second{pinned_pool_options{}};
  auto const id = resource_uuid::generate();
  CHECK_THAT(logic_error_message(
                 [&] { static_cast<void>(cuda_async_pinned_memory_resource::from_registry(id)); }),
             Contains("no resource is registered under UUID " + id.to_string()));
  CHECK(first.register_resource(id) == first);
  CHECK(second.register_resource(id) == first);  // the one registered before wins
  CHECK(cuda_async_pinned_memory_resource::from_registry(id) == first);
  CHECK(cuda_async_pinned_memory_resource::from_registry(id) != second);
  // The registry's copy keeps the pool alive.
  cudaMemPool_t const pool = first.pool_handle();
  first                    = second;
  auto found               = cuda_async_pinned_memory_resource::from_registry(id);
  CHECK(found.pool_handle() == pool);
  rmm::cuda_stream stream;
  void* ptr = found.allocate(stream, MiB, 256);
  found.deallocate(stream, ptr, MiB, 256);
  stream.synchronize();
  CHECK(cuda_async_pinned_memory_resource::unregister_resource(id));
  CHECK_FALSE(cuda_async_pinned_memory_resource::unregister_resource(id));
  CHECK_THROWS_AS(cuda_async_pinned_memory_resource::from_registry(id), rmm::logic_error);
}

TEST_CASE("cuda_async_pinned: IPC calls are refused where they do not apply",
          "[gpu][cuda_async_pinned]") {
  if (skip(host_pools_unavailable())) {
    return;
  }
  cuda_async_pinned_memory_resource mr{pinned_pool_options{}};
  CHECK_THAT(logic_error_message([&] { static_cast<void>(mr.get_allocation_handle()); }),
             Contains("IPC is not enabled"));
  rmm::cuda_stream stream;
  void* ptr = mr.allocate(stream, MiB, 256);
  CHECK_THAT(logic_error_message([&] { static_cast<void>(mr.export_pointer(ptr, MiB)); }),
             Contains("IPC-enabled"));
  CHECK_THAT(logic_error_message([&] {
               static_cast<void>(mr.import_pointer(rmm::mr::pinned_pool_pointer_export{}));
             }),
             Contains("from_allocation_handle"));
  mr.deallocate(stream, ptr, MiB, 256);
  stream.synchronize();
}

namespace {

std::string child_program() {
  if (char const* path = std::getenv("RMM_IPC_CHILD"); path != nullptr && path[0] != '\0') {
    return path;
  }
  char self[4096];
  ssize_t const n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    return "rmm_ipc_child";
  }
  std::string dir{self, static_cast<std::size_t>(n)};
  dir.erase(dir.find_last_of('/') + 1);
  return dir + "rmm_ipc_child";
}

}  // namespace

TEST_CASE("cuda_async_pinned: IPC with a second process", "[gpu][cuda_async_pinned][ipc]") {
  if (skip(ipc_unavailable())) {
    return;
  }
  namespace ipc           = rmm::test::ipc;
  std::string const child = child_program();
  INFO("child program " << child << " (RMM_IPC_CHILD overrides it)");
  REQUIRE(::access(child.c_str(), X_OK) == 0);

  pinned_pool_options options;
  options.ipc_enabled = true;
  cuda_async_pinned_memory_resource mr{options};
  CHECK(mr.is_ipc_enabled());
  CHECK(mr.is_handle_owned());
  CHECK(mr.numa_id() == device_attribute(cudaDevAttrHostNumaId));
  REQUIRE(mr.uuid().has_value());
  auto const handle = mr.get_allocation_handle();
  REQUIRE(handle.fd >= 0);
  CHECK(handle.uuid == mr.uuid());
  CHECK(mr.get_allocation_handle().fd == handle.fd);  // cached

  rmm::cuda_stream stream;
  std::size_t const half  = MiB;
  std::size_t const bytes = 2 * half;
  void* ptr               = mr.allocate(stream, bytes, 256);
  auto* const base        = static_cast<unsigned char*>(ptr);
  rmm::test::fill_pattern(base, half, 41, stream.value());
  RMM_CUDA_TRY(cudaMemsetAsync(base + half, 0, half, stream.value()));
  stream.synchronize();  // the allocation and the data are complete before the child looks

  ipc::request req{};
  std::memcpy(req.uuid, mr.uuid()->bytes().data(), sizeof(req.uuid));
  req.exported    = mr.export_pointer(ptr, bytes);
  req.half        = half;
  req.parent_seed = 41;
  req.child_seed  = 42;
  req.device      = rmm::get_current_cuda_device().value();

  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  timeval timeout{300, 0};  // compute-sanitizer makes the child slow
  ::setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  int const child_fd =
      sv[1] == ipc::child_socket_fd ? ipc::child_socket_fd + 1 : ipc::child_socket_fd;
  std::string const fd_arg = std::to_string(child_fd);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], child_fd);  // without FD_CLOEXEC
  char* argv[] = {const_cast<char*>(child.c_str()), const_cast<char*>(fd_arg.c_str()), nullptr};
  pid_t pid{-1};
  int const spawned = posix_spawn(&pid, child.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  if (spawned != 0) {
    ::close(sv[0]);
    mr.deallocate(stream, ptr, bytes, 256);
    stream.synchronize();
    FAIL("posix_spawn " << child << ": " << std::strerror(spawned));
  }

  bool const sent = ipc::send_with_fd(sv[0], &req, sizeof(req), handle.fd);
  ipc::reply first{};
  ipc::reply last{};
  bool const got_first = sent && ipc::recv_all(sv[0], &first, sizeof(first));
  bool const got_last =
      got_first && first.at == ipc::stage::device_done && ipc::recv_all(sv[0], &last, sizeof(last));
  if (!got_last) {
    ::kill(pid, SIGKILL);  // a hung child must not hang the suite (no effect if it exited)
  }
  int status{0};
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(sv[0]);
  // Only now, with the child gone (and its import freed), may the allocation be freed.

  // The child's writes, seen here on the device and on the host (only if it got that far).
  std::size_t device_mismatches = half;
  std::size_t host_mismatches   = half;
  if (got_first && first.at == ipc::stage::device_done) {
    device_mismatches = rmm::test::count_pattern_mismatches(base + half, half, 42, stream.value());
    host_mismatches   = rmm::test::count_pattern_mismatches_host(base + half, half, 42);
  }
  mr.deallocate(stream, ptr, bytes, 256);
  stream.synchronize();

  CHECK(sent);
  INFO("child exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ", signal "
                            << (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  REQUIRE(got_first);
  INFO("child says (first reply): " << first.message);
  REQUIRE(first.at == ipc::stage::device_done);
  CHECK(first.is_mapped == 1);
  CHECK(first.allocate_refused == 1);
  CHECK(first.registry_ok == 1);
  CHECK(first.uuid_ok == 1);
  CHECK(first.device_mismatches == 0);  // the child's device read the parent's data
  CHECK(device_mismatches == 0);        // the parent's device reads the child's data
  CHECK(host_mismatches == 0);          // and so does the parent's CPU
  // No second reply means the child died or hung reading the imported memory on the host.
  REQUIRE(got_last);
  INFO("child says (last reply): " << last.message);
  CHECK(last.at == ipc::stage::finished);
  CHECK(last.host_mismatches == 0);  // the child's CPU read the parent's data
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  mr.close();
  CHECK(mr.pool_handle() == nullptr);
  CHECK_THROWS_AS(mr.get_allocation_handle(), rmm::logic_error);
}
