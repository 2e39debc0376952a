// The registry of cuda_async_pinned_memory_resource by UUID: one per process.
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace rmm::mr::detail {
namespace {

struct pinned_registry {
  std::mutex lock;
  std::map<resource_uuid, cuda_async_pinned_memory_resource> entries;
};

pinned_registry& get_registry() {
  // Never destroyed: resources still registered at exit are leaked rather than destroyed after
  // the CUDA runtime may have shut down.
  static auto* const instance = new pinned_registry{};
  return *instance;
}

}  // namespace

cuda_async_pinned_memory_resource pinned_registry_insert(
    resource_uuid const& uuid, cuda_async_pinned_memory_resource const& resource) {
  auto& reg = get_registry();
  std::lock_guard<std::mutex> guard{reg.lock};
  return reg.entries.try_emplace(uuid, resource).first->second;
}

std::optional<cuda_async_pinned_memory_resource> pinned_registry_find(resource_uuid const& uuid) {
  auto& reg = get_registry();
  std::lock_guard<std::mutex> guard{reg.lock};
  auto found = reg.entries.find(uuid);
  if (found == reg.entries.end()) {
    return std::nullopt;
  }
  return found->second;
}

bool pinned_registry_erase(resource_uuid const& uuid) {
  std::optional<cuda_async_pinned_memory_resource> removed;  // destroyed after the lock is gone
  auto& reg = get_registry();
  {
    std::lock_guard<std::mutex> guard{reg.lock};
    auto found = reg.entries.find(uuid);
    if (found == reg.entries.end()) {
      return false;
    }
    removed.emplace(std::move(found->second));
    reg.entries.erase(found);
  }
  return true;
}

}  // namespace rmm::mr::detail
