// librmm_c's entry points (include/rmm/c/rmm_c.h): configuration, the PyTorch and CuPy
// allocation functions, errors, statistics. No exception leaves this file.
#include "config.hpp"
#include "device_state.hpp"

#include <rmm/c/rmm_c.h>
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace rmm::c {
namespace {

thread_local std::string last_error_text;

void set_error(std::string message) { last_error_text = std::move(message); }

// --- configuration: fixed ("sealed") at the first allocation -----------------------------------

struct config_state {
  std::mutex mutex;
  std::optional<config> configured;  // from rmm_c_configure; overrides the environment
  std::atomic<bool> sealed{false};
  config effective;   // valid once sealed, if error is empty
  std::string error;  // set once sealed, if the configuration is invalid
};

config_state& state() noexcept {
  static config_state* const instance = new config_state{};  // leaked: usable during exit
  return *instance;
}

std::optional<std::string> environment(std::string_view name) {
  char const* value = std::getenv(std::string{name}.c_str());
  return value == nullptr ? std::nullopt : std::optional<std::string>{value};
}

parse_result environment_config() {
  return parse_config(environment_names,
                      environment(environment_names.resource),
                      environment(environment_names.initial),
                      environment(environment_names.maximum));
}

void seal() {
  config_state& s = state();
  std::lock_guard<std::mutex> lock{s.mutex};
  if (s.sealed.load(std::memory_order_relaxed)) {
    return;
  }
  if (s.configured) {
    s.effective = *s.configured;
  } else {
    parse_result parsed = environment_config();
    if (parsed.value) {
      s.effective = *parsed.value;
    } else {
      s.error = "librmm_c: invalid configuration: " + parsed.error + " (every allocation fails)";
      std::fprintf(stderr, "%s\n", s.error.c_str());
    }
  }
  s.sealed.store(true, std::memory_order_release);
}

// The sealed configuration, or nullptr with the error set.
config const* sealed_config() {
  config_state& s = state();
  if (!s.sealed.load(std::memory_order_acquire)) {
    seal();
  }
  if (!s.error.empty()) {
    set_error(s.error);
    return nullptr;
  }
  return &s.effective;
}

// --- devices ------------------------------------------------------------------------------------

bool valid_device(int device) {
  int const count = mr::detail::registry_device_count();
  if (device < 0 || device >= count || device >= max_devices) {
    set_error("librmm_c: invalid device " + std::to_string(device) + ": the process sees " +
              std::to_string(count) + " CUDA device(s)" +
              (count > max_devices ? " and librmm_c serves the first 64" : ""));
    return false;
  }
  return true;
}

void* allocate(std::size_t bytes, int device, cudaStream_t stream) {
  config const* cfg = sealed_config();
  if (cfg == nullptr || !valid_device(device)) {
    return nullptr;
  }
  device_counters& c = counters(device);
  try {
    device_guard guard{device};
    if (char const* error = ensure_installed(device, *cfg)) {
      set_error(error);
      c.failed.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    void* ptr = mr::get_per_device_resource_ref(cuda_device_id{device})
                    .allocate(cuda::stream_ref{stream}, bytes, CUDA_ALLOCATION_ALIGNMENT);
    raise_peak(c.peak_in_use, c.in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    c.allocations.fetch_add(1, std::memory_order_relaxed);
    return ptr;
  } catch (std::exception const& e) {
    set_error(std::string{"librmm_c: allocating "} + std::to_string(bytes) + " bytes on device " +
              std::to_string(device) + " failed: " + e.what());
  }
  c.failed.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void deallocate(void* ptr, std::size_t bytes, int device, cudaStream_t stream) {
  if (device < 0 || device >= max_devices) {
    set_error("librmm_c: free with invalid device " + std::to_string(device));
    std::fprintf(stderr, "%s\n", last_error_text.c_str());
    return;
  }
  try {
    device_guard guard{device};
    mr::get_per_device_resource_ref(cuda_device_id{device})
        .deallocate(cuda::stream_ref{stream}, ptr, bytes, CUDA_ALLOCATION_ALIGNMENT);
    counters(device).in_use.fetch_sub(bytes, std::memory_order_relaxed);
  } catch (std::exception const& e) {
    set_error(std::string{"librmm_c: freeing "} + std::to_string(bytes) + " bytes on device " +
              std::to_string(device) + " failed: " + e.what());
    std::fprintf(stderr, "%s\n", last_error_text.c_str());
  }
}

// --- CuPy: its free gets no size, so remember it -----------------------------------------------

constexpr std::size_t size_map_shards = 32;

struct alignas(64) size_map_shard {
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, std::size_t> sizes;
};

size_map_shard& shard_of(std::uintptr_t ptr) noexcept {
  static size_map_shard* const shards = new size_map_shard[size_map_shards];  // leaked, as above
  // Allocations are 256-byte aligned: the bits above the alignment spread them over the shards.
  return shards[(ptr >> 8U) % size_map_shards];
}

}  // namespace
}  // namespace rmm::c

using namespace rmm::c;

extern "C" {

void* rmm_c_alloc(ssize_t size, int device, rmm_c_stream_t stream) {
  try {
    if (size <= 0) {
      if (size < 0) {
        set_error("librmm_c: rmm_c_alloc: negative size " + std::to_string(size));
      }
      return nullptr;
    }
    return allocate(static_cast<std::size_t>(size), device, static_cast<cudaStream_t>(stream));
  } catch (...) {  // std::bad_alloc while building a message
    return nullptr;
  }
}

void rmm_c_free(void* ptr, ssize_t size, int device, rmm_c_stream_t stream) {
  if (ptr == nullptr) {
    return;
  }
  try {
    deallocate(ptr,
               static_cast<std::size_t>(size < 0 ? 0 : size),
               device,
               static_cast<cudaStream_t>(stream));
  } catch (...) {
  }
}

intptr_t rmm_c_cupy_malloc(intptr_t, size_t size, int device) {
  if (size == 0) {
    return 0;
  }
  try {
    void* ptr = allocate(size, device, cudaStream_t{});
    if (ptr == nullptr) {
      return 0;
    }
    auto const address = reinterpret_cast<std::uintptr_t>(ptr);
    try {
      size_map_shard& shard = shard_of(address);
      std::lock_guard<std::mutex> lock{shard.mutex};
      shard.sizes.emplace(address, size);
    } catch (...) {
      deallocate(ptr, size, device, cudaStream_t{});
      set_error("librmm_c: rmm_c_cupy_malloc: out of host memory for the size map");
      return 0;
    }
    return static_cast<intptr_t>(address);
  } catch (...) {
    return 0;
  }
}

void rmm_c_cupy_free(intptr_t, intptr_t ptr, int device) {
  if (ptr == 0) {
    return;
  }
  try {
    auto const address = static_cast<std::uintptr_t>(ptr);
    std::size_t bytes  = 0;
    {
      size_map_shard& shard = shard_of(address);
      std::lock_guard<std::mutex> lock{shard.mutex};
      auto const found = shard.sizes.find(address);
      if (found == shard.sizes.end()) {
        set_error("librmm_c: rmm_c_cupy_free: address " + std::to_string(address) +
                  " was not allocated by rmm_c_cupy_malloc (not freed)");
        std::fprintf(stderr, "%s\n", last_error_text.c_str());
        return;
      }
      bytes = found->second;
      shard.sizes.erase(found);
    }
    deallocate(reinterpret_cast<void*>(address), bytes, device, cudaStream_t{});
  } catch (...) {
  }
}

int rmm_c_configure(const char* resource, const char* initial_size, const char* maximum_size) {
  try {
    auto const text = [](char const* s) {
      return s == nullptr ? std::nullopt : std::optional<std::string>{s};
    };
    config_state& s = state();
    std::lock_guard<std::mutex> lock{s.mutex};
    if (s.sealed.load(std::memory_order_relaxed)) {
      set_error(
          "librmm_c: rmm_c_configure called after the first allocation; the configuration is "
          "fixed then (call it before any allocation)");
      return 1;
    }
    parse_result parsed =
        parse_config(configure_names, text(resource), text(initial_size), text(maximum_size));
    if (!parsed.value) {
      set_error("librmm_c: invalid configuration: " + parsed.error);
      return 1;
    }
    s.configured = parsed.value;
    return 0;
  } catch (...) {
    return 1;
  }
}

const char* rmm_c_last_error(void) { return last_error_text.c_str(); }

int rmm_c_get_stats(int device, rmm_c_stats* out) {
  if (out == nullptr) {
    set_error("librmm_c: rmm_c_get_stats: out is NULL");
    return 1;
  }
  try {
    int const count = std::min(rmm::mr::detail::registry_device_count(), max_devices);
    if (device < -1 || device >= count) {
      set_error("librmm_c: rmm_c_get_stats: invalid device " + std::to_string(device) +
                " (valid: -1 for all, or 0.." + std::to_string(count - 1) + ")");
      return 1;
    }
    *out          = rmm_c_stats{};
    int const end = device == -1 ? count : device + 1;
    for (int d = device == -1 ? 0 : device; d < end; ++d) {
      device_counters const& c = counters(d);
      std::size_t reserved     = 0;
      std::size_t peak         = 0;
      reserved_bytes(d, reserved, peak);
      out->bytes_in_use += c.in_use.load(std::memory_order_relaxed);
      out->peak_bytes_in_use += c.peak_in_use.load(std::memory_order_relaxed);
      out->reserved_bytes += reserved;
      out->peak_reserved_bytes += peak;
      out->allocations += c.allocations.load(std::memory_order_relaxed);
      out->failed_allocations += c.failed.load(std::memory_order_relaxed);
    }
    return 0;
  } catch (std::exception const& e) {
    set_error(std::string{"librmm_c: rmm_c_get_stats: "} + e.what());
  } catch (...) {
  }
  return 1;
}

void rmm_c_reset_peak(void) {
  int const count = std::min(rmm::mr::detail::registry_device_count(), max_devices);
  for (int d = 0; d < count; ++d) {
    reset_peaks(d);
  }
}

int rmm_c_flush_log(void) {
  if (flush_logs()) {
    return 0;
  }
  set_error("librmm_c: rmm_c_flush_log: an allocation log could not be written");
  return 1;
}

int rmm_c_release(void) {
  try {
    int const count = std::min(rmm::mr::detail::registry_device_count(), max_devices);
    for (int d = 0; d < count; ++d) {
      release(d);
    }
    return 0;
  } catch (std::exception const& e) {
    set_error(std::string{"librmm_c: rmm_c_release: "} + e.what());
  } catch (...) {
  }
  return 1;
}

const char* rmm_c_resource_name(void) {
  try {
    config_state& s = state();
    std::lock_guard<std::mutex> lock{s.mutex};
    if (s.sealed.load(std::memory_order_relaxed)) {
      return s.error.empty() ? resource_name(s.effective.resource) : nullptr;
    }
    if (s.configured) {
      return resource_name(s.configured->resource);
    }
    parse_result const parsed = environment_config();
    return parsed.value ? resource_name(parsed.value->resource) : nullptr;
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"
