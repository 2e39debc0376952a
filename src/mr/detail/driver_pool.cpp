// The map from a CUDA memory pool to the limit that this library's resources over it share: one
// per process.
#include <rmm/mr/detail/mechanics/driver_pool.hpp>

#include <memory>
#include <mutex>
#include <unordered_map>

namespace rmm::mr::detail {
namespace {

struct pool_limit_map {
  std::mutex lock;
  // Weak: an entry lives as long as a resource over the pool holds its limit.
  std::unordered_map<cudaMemPool_t, std::weak_ptr<pool_limit>> entries;

  // Drops expired entries now and then, so that a program that creates many pools does not
  // grow the map without bound. Called with the lock held.
  void sweep() {
    if (entries.size() < next_sweep) {
      return;
    }
    for (auto it = entries.begin(); it != entries.end();) {
      it = it->second.expired() ? entries.erase(it) : std::next(it);
    }
    next_sweep = 2 * entries.size() + 16;
  }

  std::size_t next_sweep{16};
};

pool_limit_map& get_map() {
  // Never destroyed: resources destroyed during exit may still look their limit up.
  static auto* const instance = new pool_limit_map{};
  return *instance;
}

}  // namespace

std::shared_ptr<pool_limit> shared_pool_limit(cudaMemPool_t pool) {
  auto& map = get_map();
  std::lock_guard<std::mutex> guard{map.lock};
  auto& slot = map.entries[pool];
  if (auto existing = slot.lock()) {
    return existing;
  }
  auto made = std::make_shared<pool_limit>();
  slot      = made;
  map.sweep();
  return made;
}

std::shared_ptr<pool_limit> fresh_pool_limit(cudaMemPool_t pool) {
  auto& map = get_map();
  std::lock_guard<std::mutex> guard{map.lock};
  auto made         = std::make_shared<pool_limit>();
  map.entries[pool] = made;
  map.sweep();
  return made;
}

}  // namespace rmm::mr::detail
