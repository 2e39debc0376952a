// librmm_c's per-device state: installing the configured resource, its reserved-bytes counters,
// release. See device_state.hpp.
#include "device_state.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

namespace rmm::c {
// A named namespace, not an anonymous one: clang reports hidden friends of a class with internal
// linkage that are not odr-used as unneeded (-Wunneeded-internal-declaration).
namespace upstream {

/**
 * cudaMalloc upstream that counts what it holds into a device's `reserved` counter: placed under
 * pool, arena and binning, it sees only their growth (the slow path), so the C layer knows the
 * pool's reserved bytes and their peak without a statistics adaptor.
 */
class counting_cuda_resource {
 public:
  explicit counting_cuda_resource(device_counters* counters) noexcept : counters_{counters} {}

  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment) {
    void* ptr = mr::cuda_memory_resource{}.allocate_sync(bytes, alignment);
    if (ptr != nullptr) {
      raise_peak(counters_->peak_reserved,
                 counters_->reserved.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    }
    return ptr;
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    if (ptr != nullptr) {
      mr::cuda_memory_resource{}.deallocate_sync(ptr, bytes, alignment);
      counters_->reserved.fetch_sub(bytes, std::memory_order_relaxed);
    }
  }
  friend bool operator==(counting_cuda_resource const& a,
                         counting_cuda_resource const& b) noexcept {
    return a.counters_ == b.counters_;
  }
  friend bool operator!=(counting_cuda_resource const& a,
                         counting_cuda_resource const& b) noexcept {
    return !(a == b);
  }
  friend void get_property(counting_cuda_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  device_counters* counters_;
};
static_assert(cuda::mr::resource_with<counting_cuda_resource, cuda::mr::device_accessible>);

}  // namespace upstream

namespace {

using upstream::counting_cuda_resource;

// Typed handles on what was installed (copies share the registry entry's state), for stats and
// release. Never destroyed: the process may exit while allocations are live.
struct installed {
  std::atomic<int> status{0};  // 0: not yet, 1: installed, 2: failed (see error)
  resource_kind kind{resource_kind::cuda};
  std::optional<mr::pool_memory_resource> pool;  // pool, expandable, binning's upstream
  std::optional<mr::cuda_async_memory_resource> async;
  std::optional<mr::virtual_memory_resource> vmm;   // expandable's upstream
  std::optional<mr::logging_resource_adaptor> log;  // with RMM_C_LOG: around the resource
  std::string error;
};

struct device_table {
  device_counters counters[max_devices];
  installed slots[max_devices];
  std::mutex install_mutex;
};

device_table& table() noexcept {
  static device_table* const instance = new device_table{};  // leaked on purpose (see above)
  return *instance;
}

// Bins of binning: 512 B .. 1 MiB; larger requests go to the pool below.
constexpr std::int8_t binning_min_exponent = 9;
constexpr std::int8_t binning_max_exponent = 20;

// Flushes every device's allocation log (registered with atexit by the first log opened: the
// slots are never destroyed, so the logs would otherwise keep what they buffered).
extern "C" void flush_logs_at_exit() noexcept { (void)flush_logs(); }

void install(int device, config const& cfg, installed& slot) {
  std::size_t free_bytes  = 0;
  std::size_t total_bytes = 0;
  RMM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::optional<std::size_t> const initial = resolve_size(cfg.initial, total_bytes);
  std::optional<std::size_t> const maximum = resolve_size(cfg.maximum, total_bytes);
  RMM_EXPECTS(!initial || !maximum || *maximum >= *initial,
              "device " + std::to_string(device) + ": the maximum size (" +
                  std::to_string(*maximum) + " bytes) is below the initial size (" +
                  std::to_string(initial.value_or(0)) + " bytes)",
              rmm::invalid_argument);
  char const* const defragment_text =
      std::getenv(std::string{defragment_threshold_variable}.c_str());
  std::optional<std::size_t> const defragment = parse_defragment_threshold(
      cfg.resource,
      defragment_threshold_variable,
      defragment_text == nullptr ? std::nullopt : std::optional<std::string>{defragment_text});
  device_counters* const counters = &table().counters[device];
  mr::detail::any_device_resource resource{mr::cuda_memory_resource{}};
  switch (cfg.resource) {
    case resource_kind::cuda:
      break;
    case resource_kind::cuda_async:
      slot.async.emplace(initial);
      resource = *slot.async;
      break;
    case resource_kind::pool:
    case resource_kind::binning:
      slot.pool.emplace(counting_cuda_resource{counters}, initial.value_or(0), maximum);
      resource = *slot.pool;
      if (cfg.resource == resource_kind::binning) {
        resource =
            mr::binning_memory_resource{*slot.pool, binning_min_exponent, binning_max_exponent};
      }
      break;
    case resource_kind::expandable:
      slot.vmm.emplace(cuda_device_id{device});
      slot.pool.emplace(*slot.vmm, initial.value_or(0), maximum);
      if (defragment) {
        slot.pool->set_defragment_threshold(*defragment);
      }
      resource = *slot.pool;
      break;
    case resource_kind::arena:
      resource = mr::arena_memory_resource{counting_cuda_resource{counters}, initial};
      break;
  }
  if (std::string const path = log_path(device); !path.empty()) {
    slot.log.emplace(std::move(resource), path, false);
    resource                     = *slot.log;
    static bool const registered = std::atexit(flush_logs_at_exit) == 0;
    (void)registered;
  }
  slot.kind = cfg.resource;
  (void)mr::set_per_device_resource(cuda_device_id{device}, std::move(resource));
}

}  // namespace

device_counters& counters(int device) noexcept { return table().counters[device]; }

std::string log_path(int device) {
  char const* value = std::getenv("RMM_C_LOG");
  if (value == nullptr || value[0] == '\0') {
    return {};
  }
  std::string path{value};
  std::string const marker = "{device}";
  if (auto const at = path.find(marker); at != std::string::npos) {
    return path.replace(at, marker.size(), std::to_string(device));
  }
  if (device == 0) {
    return path;
  }
  auto const dot   = path.find_last_of('.');
  auto const slash = path.find_last_of('/');
  auto const split =
      dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
  return path.insert(split, ".device" + std::to_string(device));
}

bool flush_logs() noexcept {
  bool ok = true;
  for (int d = 0; d < max_devices; ++d) {
    installed& slot = table().slots[d];
    if (slot.status.load(std::memory_order_acquire) == 1 && slot.log) {
      try {
        slot.log->flush();
      } catch (...) {
        ok = false;
      }
    }
  }
  return ok;
}

char const* ensure_installed(int device, config const& cfg) {
  installed& slot = table().slots[device];
  int status      = slot.status.load(std::memory_order_acquire);
  if (status == 0) {
    std::lock_guard<std::mutex> lock{table().install_mutex};
    status = slot.status.load(std::memory_order_relaxed);
    if (status == 0) {
      try {
        install(device, cfg, slot);
        status = 1;
      } catch (std::exception const& e) {
        slot.error = std::string{"librmm_c: cannot install resource "} +
                     resource_name(cfg.resource) + " on device " + std::to_string(device) + ": " +
                     e.what() + " (every allocation on this device fails)";
        slot.pool.reset();
        slot.async.reset();
        slot.vmm.reset();
        slot.log.reset();
        status = 2;
      }
      slot.status.store(status, std::memory_order_release);
    }
  }
  return status == 1 ? nullptr : slot.error.c_str();
}

void reserved_bytes(int device, std::size_t& reserved, std::size_t& peak) {
  installed& slot          = table().slots[device];
  device_counters const& c = table().counters[device];
  reserved                 = 0;
  peak                     = 0;
  if (slot.status.load(std::memory_order_acquire) != 1) {
    return;
  }
  switch (slot.kind) {
    case resource_kind::cuda:
      reserved = c.in_use.load(std::memory_order_relaxed);
      peak     = c.peak_in_use.load(std::memory_order_relaxed);
      break;
    case resource_kind::cuda_async: {
      std::uint64_t current = 0;
      std::uint64_t high    = 0;
      cudaMemPool_t handle  = slot.async->pool_handle();
      RMM_CUDA_TRY(cudaMemPoolGetAttribute(handle, cudaMemPoolAttrReservedMemCurrent, &current));
      RMM_CUDA_TRY(cudaMemPoolGetAttribute(handle, cudaMemPoolAttrReservedMemHigh, &high));
      reserved = static_cast<std::size_t>(current);
      peak     = static_cast<std::size_t>(high);
      break;
    }
    case resource_kind::expandable: {
      device_guard guard{device};
      auto const stats = slot.vmm->statistics();
      reserved         = stats.mapped;
      peak             = stats.peak_mapped;
      break;
    }
    case resource_kind::pool:
    case resource_kind::binning:
    case resource_kind::arena:
      reserved = c.reserved.load(std::memory_order_relaxed);
      peak     = c.peak_reserved.load(std::memory_order_relaxed);
      break;
  }
}

void reset_peaks(int device) noexcept {
  device_counters& c = table().counters[device];
  c.peak_in_use.store(c.in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
  c.peak_reserved.store(c.reserved.load(std::memory_order_relaxed), std::memory_order_relaxed);
  installed& slot = table().slots[device];
  if (slot.status.load(std::memory_order_acquire) == 1 && slot.async) {
    std::uint64_t zero = 0;
    (void)cudaMemPoolSetAttribute(slot.async->pool_handle(), cudaMemPoolAttrReservedMemHigh, &zero);
  }
}

void release(int device) {
  installed& slot = table().slots[device];
  if (slot.status.load(std::memory_order_acquire) != 1) {
    return;
  }
  device_guard guard{device};
  if (slot.pool) {
    slot.pool->release();
  } else if (slot.async) {
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    RMM_CUDA_TRY(cudaMemPoolTrimTo(slot.async->pool_handle(), 0));
  }
}

device_guard::device_guard(int device) {
  int current = 0;
  RMM_CUDA_TRY(cudaGetDevice(&current));
  if (current != device) {
    RMM_CUDA_TRY(cudaSetDevice(device));
    previous_ = current;
  }
}

device_guard::~device_guard() {
  if (previous_ >= 0) {
    (void)cudaSetDevice(previous_);
  }
}

}  // namespace rmm::c
