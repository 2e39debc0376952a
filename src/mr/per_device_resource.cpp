// The per-device registry and the process-exit flag: one definition per process.
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/process_is_exiting.hpp>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace rmm {
namespace {

// Constant-initialised and trivially destructible: readable at any point of exit.
std::atomic<bool> exiting_flag{false};

extern "C" void mark_process_exiting() noexcept {
  exiting_flag.store(true, std::memory_order_release);
}

struct registry {
  std::mutex lock;
  // Node-based map: references to entries stay valid while other entries change.
  std::map<int, mr::detail::any_device_resource> resources;
};

registry& get_registry() {
  // atexit handlers and static destructors run in reverse order of registration. The handler is
  // registered right after the storage is constructed, so it runs before the storage (and the
  // resources in it) is destroyed: their destructors see process_is_exiting() == true.
  static registry* const instance = [] {
    static registry storage;
    std::atexit(mark_process_exiting);
    return &storage;
  }();
  return *instance;
}

}  // namespace

bool process_is_exiting() noexcept { return exiting_flag.load(std::memory_order_acquire); }

namespace mr::detail {

device_async_resource_ref registry_get(int device_index) {
  auto& reg = get_registry();
  std::lock_guard<std::mutex> guard{reg.lock};
  auto found = reg.resources.find(device_index);
  if (found == reg.resources.end()) {
    found = reg.resources.emplace(device_index, any_device_resource{cuda_memory_resource{}}).first;
  }
  return device_async_resource_ref{found->second};
}

any_device_resource registry_set(int device_index, any_device_resource new_resource) {
  auto& reg = get_registry();
  std::lock_guard<std::mutex> guard{reg.lock};
  auto found = reg.resources.find(device_index);
  if (found == reg.resources.end()) {
    reg.resources.emplace(device_index, std::move(new_resource));
    return any_device_resource{cuda_memory_resource{}};
  }
  return std::exchange(found->second, std::move(new_resource));
}

int registry_device_count() noexcept {
  static int const count = get_num_cuda_devices();
  return count;
}

}  // namespace mr::detail
}  // namespace rmm
