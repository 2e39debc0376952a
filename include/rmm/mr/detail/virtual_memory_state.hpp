/**
 * @file virtual_memory_state.hpp
 * @brief Shared state of virtual_memory_resource: address reservations, the physical memory
 * mapped into them, and the unmaps deferred until the freeing stream's work has completed.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/shared_state.hpp>
#include <rmm/mr/detail/stream_resource_base.hpp>
#include <rmm/mr/detail/vmm_driver.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/// @brief Counters of a virtual_memory_resource (bytes).
struct virtual_memory_counters {
  std::size_t reserved{};     ///< address space reserved (live allocations and deferred frees)
  std::size_t mapped{};       ///< physical memory mapped, including unmaps not yet done
  std::size_t used{};         ///< bytes asked for by live allocations (their current sizes)
  std::size_t peak_mapped{};  ///< the most `mapped` has been
  std::size_t allocations{};  ///< live allocations
};

/// @brief Shared state of virtual_memory_resource. Not for direct use.
class virtual_memory_state : public stream_resource_base<virtual_memory_state> {
 public:
  static constexpr char const* name = "virtual_memory_resource";

  virtual_memory_state(cuda_device_id device, std::size_t reservation, std::vector<int> peers)
      : device_{device}, peers_{std::move(peers)} {
    vmm_driver const& drv = vmm_driver::get();
    RMM_EXPECTS(drv.loaded, std::string{name} + ": " + drv.load_error);
    RMM_EXPECTS(device.value() >= 0 && device.value() < get_num_cuda_devices(),
                std::string{name} + ": device " + std::to_string(device.value()) +
                    " does not exist (" + std::to_string(get_num_cuda_devices()) + " devices)");
    cuda_set_device_raii guard{device_};
    RMM_CUDA_TRY(cudaFree(nullptr));  // the primary context: the driver calls below need one
    int supported = 0;
    check(drv.device_get_attribute(
              &supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device.value()),
          "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
    RMM_EXPECTS(supported != 0,
                std::string{name} + ": device " + std::to_string(device.value()) +
                    " does not support virtual memory management (cuMemCreate/cuMemMap)");
    for (int const peer : peers_) {
      RMM_EXPECTS(peer != device.value() && peer >= 0 && peer < get_num_cuda_devices(),
                  std::string{name} + ": peer device " + std::to_string(peer) +
                      " is not another existing device");
      int can = 0;
      RMM_CUDA_TRY(cudaDeviceCanAccessPeer(&can, peer, device.value()));
      RMM_EXPECTS(can != 0,
                  std::string{name} + ": device " + std::to_string(peer) +
                      " cannot access the memory of device " + std::to_string(device.value()));
    }
    CUmemAllocationProp const prop = properties();
    check(drv.mem_get_allocation_granularity(
              &granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
          "cuMemGetAllocationGranularity");
    std::size_t free  = 0;
    std::size_t total = 0;
    RMM_CUDA_TRY(cudaMemGetInfo(&free, &total));
    reservation_ = align_up(reservation == 0 ? total : reservation, granularity_);
  }

  virtual_memory_state(virtual_memory_state const&)            = delete;
  virtual_memory_state& operator=(virtual_memory_state const&) = delete;

  ~virtual_memory_state() {
    if (rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the memory to the driver
    }
    std::lock_guard<std::mutex> lock(mtx_);
    try {
      cuda_set_device_raii guard{device_};
      cudaDeviceSynchronize();  // leaked allocations and deferred unmaps may still be in use
    } catch (...) {
    }
    cudaGetLastError();
    drain(true);
    for (auto& [base, a] : live_) {
      unmap_all(base, a.maps);
      vmm_driver::get().mem_address_free(base, a.reserved);
    }
    for (cudaEvent_t e : spare_events_) {
      cudaEventDestroy(e);
    }
  }

  void* allocate(cuda::stream_ref /*stream*/, std::size_t bytes, std::size_t alignment) {
    // Every allocation starts on a granule (2 MiB); the check keeps the contract of every other
    // resource (at most CUDA_ALLOCATION_ALIGNMENT may be asked for).
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    RMM_EXPECTS(bytes <= std::numeric_limits<std::size_t>::max() - granularity_,
                std::string{name} + ": cannot allocate " + std::to_string(bytes) +
                    " bytes: larger than any address range",
                rmm::out_of_memory);
    std::size_t const mapped = align_up(bytes, granularity_);
    std::lock_guard<std::mutex> lock(mtx_);
    drain(false);
    cuda_set_device_raii guard{device_};
    CUdeviceptr base = reserve(std::max(mapped, reservation_));
    allocation a{std::max(mapped, reservation_), bytes, 0, {}};
    if (base == 0) {
      a.reserved = mapped;
      base       = reserve(mapped);
    }
    if (base == 0) {
      throw rmm::out_of_memory(report("cannot reserve " + std::to_string(mapped) +
                                          " bytes of address space for " + std::to_string(bytes) +
                                          " bytes",
                                      last_error_));
    }
    if (!map_more(base, a, mapped)) {
      vmm_driver::get().mem_address_free(base, a.reserved);
      throw rmm::out_of_memory(report("cannot allocate " + std::to_string(bytes) + " bytes (" +
                                          std::to_string(mapped) +
                                          " after rounding to the granularity)",
                                      last_error_));
    }
    try {
      live_.try_emplace(base).first->second = std::move(a);
    } catch (...) {  // the map could not grow: `a` is untouched
      unmap_all(base, a.maps);
      vmm_driver::get().mem_address_free(base, a.reserved);
      throw;
    }
    counters_.reserved += live_.at(base).reserved;
    counters_.used += bytes;
    ++counters_.allocations;
    return reinterpret_cast<void*>(base);
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t /*bytes*/,
                  std::size_t /*alignment*/) noexcept {
    if (ptr == nullptr) {
      return;
    }
    std::lock_guard<std::mutex> lock(mtx_);
    auto it = live_.find(reinterpret_cast<CUdeviceptr>(ptr));
    if (it == live_.end()) {
      rmm::log(level_enum::error,
               std::string{name} + ": deallocate of unknown pointer " + hex(ptr) + " ignored");
      return;
    }
    allocation a = std::move(it->second);
    live_.erase(it);
    counters_.used -= a.size;
    --counters_.allocations;
    auto const base = reinterpret_cast<CUdeviceptr>(ptr);
    defer(stream, base, std::move(a.maps), base, a.reserved);
    drain(false);
  }

  bool try_resize(void* ptr,
                  std::size_t old_bytes,
                  std::size_t new_bytes,
                  cuda::stream_ref stream) {
    RMM_EXPECTS(new_bytes > 0,
                std::string{name} + ": try_resize to 0 bytes (deallocate the allocation instead)");
    std::lock_guard<std::mutex> lock(mtx_);
    allocation& a   = find_live(ptr, old_bytes);
    auto const base = reinterpret_cast<CUdeviceptr>(ptr);
    if (new_bytes > a.reserved) {
      return false;
    }
    std::size_t const target = align_up(new_bytes, granularity_);
    if (target > a.mapped) {
      drain(false);
      settle_range(base + a.mapped, base + target);
      cuda_set_device_raii guard{device_};
      if (!map_more(base, a, target)) {
        return false;
      }
    } else if (target < a.mapped) {
      std::vector<mapping> tail;
      while (!a.maps.empty() && a.maps.back().offset >= target) {
        tail.push_back(a.maps.back());
        a.maps.pop_back();
      }
      a.mapped = a.maps.empty() ? 0 : a.maps.back().offset + a.maps.back().bytes;
      if (!tail.empty()) {
        std::reverse(tail.begin(), tail.end());  // ascending offsets, as settle_range expects
        defer(stream, base, std::move(tail), 0, 0);
        drain(false);
      }
    }
    counters_.used = counters_.used - a.size + new_bytes;
    a.size         = new_bytes;
    return true;
  }

  [[nodiscard]] std::size_t mapped_size(void const* ptr) const {
    std::lock_guard<std::mutex> lock(mtx_);
    auto it = live_.find(reinterpret_cast<CUdeviceptr>(ptr));
    RMM_EXPECTS(it != live_.end(),
                std::string{name} + ": mapped_size of unknown pointer " + hex(ptr));
    return it->second.mapped;
  }

  [[nodiscard]] std::size_t reserved_size(void const* ptr) const {
    std::lock_guard<std::mutex> lock(mtx_);
    auto it = live_.find(reinterpret_cast<CUdeviceptr>(ptr));
    RMM_EXPECTS(it != live_.end(),
                std::string{name} + ": reserved_size of unknown pointer " + hex(ptr));
    return it->second.reserved;
  }

  void flush() {
    std::lock_guard<std::mutex> lock(mtx_);
    drain(true);
  }

  [[nodiscard]] virtual_memory_counters counters() const {
    std::lock_guard<std::mutex> lock(mtx_);
    const_cast<virtual_memory_state*>(this)->drain(false);
    return counters_;
  }

  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  [[nodiscard]] std::size_t reservation_size() const noexcept { return reservation_; }
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }
  [[nodiscard]] std::vector<int> const& peers() const noexcept { return peers_; }

  friend virtual_memory_state* get_property(virtual_memory_state const& self,
                                            state_of<virtual_memory_state>) noexcept {
    return const_cast<virtual_memory_state*>(&self);
  }

 private:
  // One cuMemCreate'd piece of physical memory, mapped at `offset` into its reservation.
  struct mapping {
    CUmemGenericAllocationHandle handle;
    std::size_t offset;
    std::size_t bytes;
  };
  struct allocation {
    std::size_t reserved;  // address space
    std::size_t size;      // bytes asked for
    std::size_t mapped;    // mapped prefix, a multiple of the granularity
    std::vector<mapping> maps;
  };
  // Physical memory (and possibly the reservation) to give back once `event` has completed.
  struct deferred {
    cudaEvent_t event;  // null: the stream was synchronised instead
    CUdeviceptr base;   // reservation to free (with `reserved` bytes), or 0 for a tail only
    std::size_t reserved;
    CUdeviceptr maps_base;
    std::vector<mapping> maps;
  };

  void check(CUresult r, char const* what) const {
    if (r != CUDA_SUCCESS) {
      throw rmm::cuda_error(std::string{name} + ": " + what + " failed on device " +
                            std::to_string(device_.value()) + ": " +
                            vmm_driver::get().error_name(r));
    }
  }

  [[nodiscard]] CUmemAllocationProp properties() const noexcept {
    CUmemAllocationProp prop{};
    prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id   = device_.value();
    return prop;
  }

  static std::string hex(void const* p) {
    char text[2 + 2 * sizeof(void*) + 1];
    std::snprintf(text, sizeof(text), "%p", p);
    return text;
  }

  allocation& find_live(void* ptr, std::size_t old_bytes) {
    auto it = live_.find(reinterpret_cast<CUdeviceptr>(ptr));
    RMM_EXPECTS(it != live_.end(),
                std::string{name} + ": try_resize of unknown pointer " + hex(ptr));
    RMM_EXPECTS(it->second.size == old_bytes,
                std::string{name} + ": try_resize of " + hex(ptr) + " from " +
                    std::to_string(old_bytes) + " bytes, but its size is " +
                    std::to_string(it->second.size));
    return it->second;
  }

  // A reservation of `bytes` aligned to the granularity, or 0 (last_error_ says why).
  CUdeviceptr reserve(std::size_t bytes) {
    CUdeviceptr base = 0;
    CUresult const r = vmm_driver::get().mem_address_reserve(&base, bytes, granularity_, 0, 0);
    if (r != CUDA_SUCCESS) {
      last_error_ = "cuMemAddressReserve(" + std::to_string(bytes) + ") returned " +
                    vmm_driver::get().error_name(r);
      return 0;
    }
    return base;
  }

  // The most physical memory one cuMemCreate provides. Memory is unmapped piece by piece, so
  // this bounds what a shrink must leave mapped beyond the new end (a piece straddling it stays);
  // larger pieces make growing by much cost fewer driver calls.
  [[nodiscard]] std::size_t piece_bytes() const noexcept { return 16 * granularity_; }

  // Maps [a.mapped, target) of the reservation at `base` in pieces of at most piece_bytes(), with
  // read-write access for the device and its peers. False (last_error_ says why, nothing changed)
  // if the device cannot provide the memory even after every deferred unmap has been waited for.
  bool map_more(CUdeviceptr base, allocation& a, std::size_t target) {
    std::size_t const start = a.mapped;
    std::size_t const kept  = a.maps.size();
    a.maps.reserve(kept + (target - start + piece_bytes() - 1) / piece_bytes());
    CUresult r = CUDA_SUCCESS;
    while (a.mapped < target && r == CUDA_SUCCESS) {
      r = map_piece(base, a, std::min(target - a.mapped, piece_bytes()));
    }
    if (r == CUDA_SUCCESS) {
      r = set_access(base + start, target - start);
      if (r != CUDA_SUCCESS) {
        last_error_ = "cuMemSetAccess returned " + vmm_driver::get().error_name(r);
      }
    }
    if (r != CUDA_SUCCESS) {
      std::vector<mapping> added(a.maps.begin() + static_cast<std::ptrdiff_t>(kept), a.maps.end());
      a.maps.resize(kept);
      a.mapped = start;
      unmap_all(base, added);
      return false;
    }
    counters_.peak_mapped = std::max(counters_.peak_mapped, counters_.mapped);
    return true;
  }

  // Creates and maps one piece at the mapped end (capacity for it is reserved in a.maps).
  CUresult map_piece(CUdeviceptr base, allocation& a, std::size_t bytes) {
    vmm_driver const& drv          = vmm_driver::get();
    CUmemAllocationProp const prop = properties();
    CUmemGenericAllocationHandle handle{};
    CUresult r = drv.mem_create(&handle, bytes, &prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !pending_.empty()) {
      drain(true);  // memory freed on streams may be what is missing
      r = drv.mem_create(&handle, bytes, &prop, 0);
    }
    if (r != CUDA_SUCCESS) {
      last_error_ = "cuMemCreate(" + std::to_string(bytes) + ") returned " + drv.error_name(r);
      return r;
    }
    r = drv.mem_map(base + a.mapped, bytes, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
      drv.mem_release(handle);
      last_error_ = "cuMemMap(" + std::to_string(bytes) + ") returned " + drv.error_name(r);
      return r;
    }
    a.maps.push_back({handle, a.mapped, bytes});  // no allocation: capacity was reserved
    a.mapped += bytes;
    counters_.mapped += bytes;
    return CUDA_SUCCESS;
  }

  CUresult set_access(CUdeviceptr at, std::size_t bytes) const {
    std::vector<CUmemAccessDesc> desc(1 + peers_.size());
    for (std::size_t i = 0; i < desc.size(); ++i) {
      desc[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      desc[i].location.id   = i == 0 ? device_.value() : peers_[i - 1];
      desc[i].flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return vmm_driver::get().mem_set_access(at, bytes, desc.data(), desc.size());
  }

  void unmap_all(CUdeviceptr base, std::vector<mapping> const& maps) noexcept {
    vmm_driver const& drv = vmm_driver::get();
    for (mapping const& m : maps) {
      drv.mem_unmap(base + m.offset, m.bytes);
      drv.mem_release(m.handle);
      counters_.mapped -= m.bytes;
    }
  }

  // Queues the unmap of `maps` (offsets from `maps_base`) and the release of `reservation` (if not
  // 0) after the
  // work queued so far on `stream`. Mapping calls are not stream-ordered: unmapping now would pull
  // the memory from under kernels still running. If no event can be recorded, the stream is
  // synchronised and the memory given back at once.
  void defer(cuda::stream_ref stream,
             CUdeviceptr maps_base,
             std::vector<mapping> maps,
             CUdeviceptr reservation,
             std::size_t reserved) noexcept {
    deferred d{nullptr, reservation, reserved, maps_base, std::move(maps)};
    try {
      d.event = take_event();
      if (cudaEventRecord(d.event, stream.get()) != cudaSuccess) {
        cudaGetLastError();
        spare_events_.push_back(d.event);
        d.event = nullptr;
      }
      if (d.event != nullptr) {
        pending_.push_back(std::move(d));
        return;
      }
    } catch (...) {
      cudaGetLastError();
    }
    cudaStreamSynchronize(stream.get());
    give_back(d);
  }

  cudaEvent_t take_event() {
    if (!spare_events_.empty()) {
      cudaEvent_t e = spare_events_.back();
      spare_events_.pop_back();
      return e;
    }
    cudaEvent_t e{};
    RMM_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }

  void give_back(deferred& d) noexcept {
    unmap_all(d.maps_base, d.maps);
    if (d.base != 0) {
      vmm_driver::get().mem_address_free(d.base, d.reserved);
      counters_.reserved -= d.reserved;
    }
    if (d.event != nullptr) {
      spare_events_.push_back(d.event);
    }
  }

  // Gives back every deferred entry whose event has completed (all of them, waiting, if `wait`).
  // Tails go first: a reservation can be freed only once nothing is mapped in it, and a tail
  // unmap deferred on one stream may complete after the whole allocation's free on another.
  void drain(bool wait) noexcept {
    drain_pass(wait, false);
    drain_pass(wait, true);
  }

  void drain_pass(bool wait, bool reservations) noexcept {
    for (std::size_t i = 0; i < pending_.size();) {
      deferred& d = pending_[i];
      if ((d.base != 0) != reservations || (reservations && has_pending_tail(d.base))) {
        ++i;
        continue;
      }
      cudaError_t const s = wait ? cudaEventSynchronize(d.event) : cudaEventQuery(d.event);
      if (s == cudaErrorNotReady) {
        ++i;
        continue;
      }
      cudaGetLastError();
      give_back(d);
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    }
  }

  [[nodiscard]] bool has_pending_tail(CUdeviceptr reservation) const noexcept {
    for (deferred const& d : pending_) {
      if (d.base == 0 && d.maps_base == reservation) {
        return true;
      }
    }
    return false;
  }

  // Waits for (and performs) the deferred unmaps of tails inside [lo, hi): the range is about
  // to be mapped again.
  void settle_range(CUdeviceptr lo, CUdeviceptr hi) noexcept {
    for (std::size_t i = 0; i < pending_.size();) {
      deferred& d         = pending_[i];
      bool const overlaps = d.base == 0 && !d.maps.empty() &&
                            d.maps_base + d.maps.back().offset < hi &&
                            d.maps_base + d.maps.front().offset + d.maps.front().bytes > lo;
      if (!overlaps) {
        ++i;
        continue;
      }
      cudaEventSynchronize(d.event);
      cudaGetLastError();
      give_back(d);
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    }
  }

  [[nodiscard]] std::string report(std::string const& what, std::string const& why) const {
    std::size_t free  = 0;
    std::size_t total = 0;
    {
      cuda_set_device_raii guard{device_};
      if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
        cudaGetLastError();
      }
    }
    return std::string{name} + ": " + what + " on device " + std::to_string(device_.value()) +
           ": " + why + "; this resource maps " + std::to_string(counters_.mapped) + " bytes (" +
           std::to_string(counters_.used) + " in use by " + std::to_string(counters_.allocations) +
           " allocations) and reserves " + std::to_string(counters_.reserved) +
           " bytes of address space; the device has " + std::to_string(free) + " bytes free of " +
           std::to_string(total) +
           " (physical memory needs no contiguity here: the largest block that can still be "
           "mapped is the free memory)";
  }

  cuda_device_id device_;
  std::vector<int> peers_;
  std::size_t granularity_{};
  std::size_t reservation_{};
  mutable std::mutex mtx_;
  std::unordered_map<CUdeviceptr, allocation> live_;
  std::vector<deferred> pending_;
  std::vector<cudaEvent_t> spare_events_;
  virtual_memory_counters counters_;
  std::string last_error_;
};

}  // namespace rmm::mr::detail
