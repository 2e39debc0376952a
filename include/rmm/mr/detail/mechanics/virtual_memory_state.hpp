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
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/mr/detail/mechanics/vmm_deferred_unmaps.hpp>
#include <rmm/mr/detail/mechanics/vmm_driver.hpp>
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
    deferred_.drain(true);
    for (auto& [base, a] : live_) {
      vmm_unmap_all(base, a.maps, counters_);
      vmm_driver::get().mem_address_free(base, a.reserved);
    }
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    check_device(device_.value(), name, "allocate", stream.get());  // debug builds only
    // Every allocation starts on a granule (2 MiB); the check keeps the contract of every other
    // resource (at most CUDA_ALLOCATION_ALIGNMENT may be asked for).
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mtx_);
    if (bytes > std::numeric_limits<std::size_t>::max() - granularity_) {
      throw_out_of_memory(bytes, "larger than any address range", stream);
    }
    std::size_t const mapped = align_up(bytes, granularity_);
    deferred_.drain(false);
    cuda_set_device_raii guard{device_};
    CUdeviceptr base = reserve(std::max(mapped, reservation_));
    allocation a{std::max(mapped, reservation_), bytes, 0, {}};
    if (base == 0) {
      a.reserved = mapped;
      base       = reserve(mapped);
    }
    if (base == 0) {
      throw_out_of_memory(
          bytes,
          std::to_string(mapped) + " bytes of address space cannot be reserved: " + last_error_,
          stream);
    }
    if (!map_more(base, a, mapped)) {
      vmm_driver::get().mem_address_free(base, a.reserved);
      throw_out_of_memory(
          bytes,
          "(" + std::to_string(mapped) + " after rounding to the granularity): " + last_error_,
          stream);
    }
    try {
      live_.try_emplace(base).first->second = std::move(a);
    } catch (...) {  // the map could not grow: `a` is untouched
      vmm_unmap_all(base, a.maps, counters_);
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
    check_device_noexcept(device_.value(), name, "deallocate", stream.get());
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
    deferred_.defer(stream, base, std::move(a.maps), base, a.reserved);
    deferred_.drain(false);
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
      deferred_.drain(false);
      deferred_.settle_range(base + a.mapped, base + target);
      cuda_set_device_raii guard{device_};
      if (!map_more(base, a, target)) {
        return false;
      }
    } else if (target < a.mapped) {
      std::vector<vmm_mapping> tail;
      while (!a.maps.empty() && a.maps.back().offset >= target) {
        tail.push_back(a.maps.back());
        a.maps.pop_back();
      }
      a.mapped = a.maps.empty() ? 0 : a.maps.back().offset + a.maps.back().bytes;
      if (!tail.empty()) {
        std::reverse(tail.begin(), tail.end());  // ascending offsets, as settle_range expects
        deferred_.defer(stream, base, std::move(tail), 0, 0);
        deferred_.drain(false);
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

  // Runs (offset, bytes) of whole pieces inside [offset, offset + bytes) of the allocation at
  // `ptr`, the piece holding its mapped end excepted: what decommit() accepts.
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> decommittable(
      void const* ptr, std::size_t offset, std::size_t bytes) const {
    std::lock_guard<std::mutex> lock(mtx_);
    allocation const& a = live_at(ptr, "decommittable");
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    std::size_t const end = offset + std::min(bytes, a.mapped - std::min(offset, a.mapped));
    for (std::size_t i = first_map_from(a, offset); i + 1 < a.maps.size(); ++i) {
      vmm_mapping const& m = a.maps[i];
      if (m.offset + m.bytes > end) {
        break;
      }
      if (!runs.empty() && runs.back().first + runs.back().second == m.offset) {
        runs.back().second += m.bytes;
      } else {
        runs.emplace_back(m.offset, m.bytes);
      }
    }
    return runs;
  }

  // Unmaps [offset, offset + bytes) of the allocation at `ptr`, after the work queued on
  // `stream`; the range must be whole pieces, as decommittable() reports.
  void decommit(void* ptr, std::size_t offset, std::size_t bytes, cuda::stream_ref stream) {
    std::lock_guard<std::mutex> lock(mtx_);
    allocation& a       = live_at(ptr, "decommit");
    std::size_t const i = first_map_from(a, offset);
    std::size_t n       = 0;
    std::size_t covered = 0;
    while (i + n + 1 < a.maps.size() && covered < bytes &&
           a.maps[i + n].offset == offset + covered) {
      covered += a.maps[i + n].bytes;
      ++n;
    }
    RMM_EXPECTS(n > 0 && covered == bytes,
                std::string{name} + ": decommit of [" + std::to_string(offset) + ", " +
                    std::to_string(offset + bytes) + ") of " + hex(ptr) +
                    ", which is not a run of whole mapped pieces before the mapped end");
    auto const first = a.maps.begin() + static_cast<std::ptrdiff_t>(i);
    std::vector<vmm_mapping> gone(first, first + static_cast<std::ptrdiff_t>(n));
    a.maps.erase(first, first + static_cast<std::ptrdiff_t>(n));
    deferred_.defer(stream, reinterpret_cast<CUdeviceptr>(ptr), std::move(gone), 0, 0);
    deferred_.drain(false);
  }

  // Maps every unmapped granule of [offset, offset + bytes), which lies below the mapped end of
  // the allocation at `ptr`. False (nothing changed) if the memory cannot be had.
  bool commit(void* ptr, std::size_t offset, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mtx_);
    allocation& a = live_at(ptr, "commit");
    RMM_EXPECTS(offset % granularity_ == 0 && bytes % granularity_ == 0 && bytes <= a.mapped &&
                    offset <= a.mapped - bytes,
                std::string{name} + ": commit of [" + std::to_string(offset) + ", " +
                    std::to_string(offset + bytes) + ") of " + hex(ptr) +
                    ": not whole granules below the mapped end " + std::to_string(a.mapped));
    auto const base = reinterpret_cast<CUdeviceptr>(ptr);
    deferred_.drain(false);
    deferred_.settle_range(base + offset, base + offset + bytes);
    // The unmapped runs of the range, found before anything is mapped (a piece before `offset`
    // may reach into it).
    std::vector<std::pair<std::size_t, std::size_t>> gaps;
    std::size_t const end = offset + bytes;
    std::size_t i         = first_map_from(a, offset);
    std::size_t at        = offset;
    if (i > 0) {
      at = std::max(at, a.maps[i - 1].offset + a.maps[i - 1].bytes);
    }
    for (; at < end; ++i) {
      std::size_t const next = i < a.maps.size() ? std::min(a.maps[i].offset, end) : end;
      if (next > at) {
        gaps.emplace_back(at, next);
      }
      if (i >= a.maps.size()) {
        break;
      }
      at = std::max(at, a.maps[i].offset + a.maps[i].bytes);
    }
    cuda_set_device_raii guard{device_};
    for (std::size_t g = 0; g < gaps.size(); ++g) {
      if (!map_gap(base, a, gaps[g].first, gaps[g].second)) {
        for (std::size_t k = 0; k < g; ++k) {
          unmap_now(base, a, gaps[k].first, gaps[k].second);
        }
        return false;
      }
    }
    return true;
  }

  void flush() {
    std::lock_guard<std::mutex> lock(mtx_);
    deferred_.drain(true);
  }

  [[nodiscard]] virtual_memory_counters counters() const {
    std::lock_guard<std::mutex> lock(mtx_);
    const_cast<virtual_memory_state*>(this)->deferred_.drain(false);
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
  struct allocation {
    std::size_t reserved;           // address space
    std::size_t size;               // bytes asked for
    std::size_t mapped;             // mapped prefix, a multiple of the granularity
    std::vector<vmm_mapping> maps;  // ascending offsets; gaps are decommitted holes
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

  allocation& live_at(void const* ptr, char const* what) {
    auto it = live_.find(reinterpret_cast<CUdeviceptr>(ptr));
    RMM_EXPECTS(it != live_.end(),
                std::string{name} + ": " + what + " of unknown pointer " + hex(ptr));
    return it->second;
  }
  allocation const& live_at(void const* ptr, char const* what) const {
    return const_cast<virtual_memory_state*>(this)->live_at(ptr, what);
  }

  // Index of the first piece at or after `offset`.
  static std::size_t first_map_from(allocation const& a, std::size_t offset) {
    auto const it = std::lower_bound(
        a.maps.begin(), a.maps.end(), offset, [](vmm_mapping const& m, std::size_t o) {
          return m.offset < o;
        });
    return static_cast<std::size_t>(it - a.maps.begin());
  }

  // Unmaps the pieces inside [from, to) at once (memory this call mapped and nobody used).
  void unmap_now(CUdeviceptr base, allocation& a, std::size_t from, std::size_t to) noexcept {
    vmm_driver const& drv = vmm_driver::get();
    auto const first      = a.maps.begin() + static_cast<std::ptrdiff_t>(first_map_from(a, from));
    auto last             = first;
    for (; last != a.maps.end() && last->offset < to; ++last) {
      drv.mem_unmap(base + last->offset, last->bytes);
      drv.mem_release(last->handle);
      counters_.mapped -= last->bytes;
    }
    a.maps.erase(first, last);
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

  // How many pieces one mapping call uses at most (beyond the one-granule minimum). Memory is
  // unmapped piece by piece, so smaller pieces let a shrink or decommit() give back more of a
  // fragmented range; fewer pieces make mapping much at once cost fewer driver calls. The
  // ResNet-50 replay under a cap (growth_sim, docs/expandable_pool.md) needs pieces of at most an
  // eighth of each growth step to reach 0.98 of its peak.
  static constexpr std::size_t pieces_per_map = 8;

  [[nodiscard]] std::size_t piece_for(std::size_t bytes) const noexcept {
    return std::max(granularity_, bytes / pieces_per_map / granularity_ * granularity_);
  }

  // Maps [a.mapped, target) of the reservation at `base` and moves the mapped end to `target`.
  bool map_more(CUdeviceptr base, allocation& a, std::size_t target) {
    if (!map_gap(base, a, a.mapped, target)) {
      return false;
    }
    a.mapped = target;
    return true;
  }

  // Maps the unmapped [from, to) of the reservation at `base` in pieces of piece_for(to - from),
  // with read-write access for the device and its peers, and files the pieces in a.maps. False
  // (last_error_ says why, nothing changed) if the device cannot provide the memory even after
  // every deferred unmap has been waited for.
  bool map_gap(CUdeviceptr base, allocation& a, std::size_t from, std::size_t to) {
    std::size_t const piece = piece_for(to - from);
    std::vector<vmm_mapping> added;
    added.reserve((to - from + piece - 1) / piece);
    a.maps.reserve(a.maps.size() + added.capacity());  // the insert below cannot throw
    CUresult r = CUDA_SUCCESS;
    for (std::size_t at = from; at < to && r == CUDA_SUCCESS; at += piece) {
      r = map_piece(base, added, at, std::min(piece, to - at));
    }
    if (r == CUDA_SUCCESS) {
      r = set_access(base + from, to - from);
      if (r != CUDA_SUCCESS) {
        last_error_ = "cuMemSetAccess returned " + vmm_driver::get().error_name(r);
      }
    }
    if (r != CUDA_SUCCESS) {
      vmm_unmap_all(base, added, counters_);
      return false;
    }
    auto const pos = std::lower_bound(
        a.maps.begin(), a.maps.end(), from, [](vmm_mapping const& m, std::size_t offset) {
          return m.offset < offset;
        });
    a.maps.insert(pos, added.begin(), added.end());
    counters_.peak_mapped = std::max(counters_.peak_mapped, counters_.mapped);
    return true;
  }

  // Creates one piece and maps it at `offset` (capacity for it is reserved in `added`).
  CUresult map_piece(CUdeviceptr base,
                     std::vector<vmm_mapping>& added,
                     std::size_t offset,
                     std::size_t bytes) {
    vmm_driver const& drv          = vmm_driver::get();
    CUmemAllocationProp const prop = properties();
    CUmemGenericAllocationHandle handle{};
    CUresult r = drv.mem_create(&handle, bytes, &prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !deferred_.empty()) {
      deferred_.drain(true);  // memory freed on streams may be what is missing
      r = drv.mem_create(&handle, bytes, &prop, 0);
    }
    if (r != CUDA_SUCCESS) {
      last_error_ = "cuMemCreate(" + std::to_string(bytes) + ") returned " + drv.error_name(r);
      return r;
    }
    r = drv.mem_map(base + offset, bytes, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
      drv.mem_release(handle);
      last_error_ = "cuMemMap(" + std::to_string(bytes) + ") returned " + drv.error_name(r);
      return r;
    }
    added.push_back({handle, offset, bytes});
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

  // The report of a failed request (mtx_ held): the physical memory this resource maps
  // (reserved) and hands out (used), the device with its memory, the stream; no free bytes or
  // largest free block: what an allocation does not use of its granules serves no other one, and
  // the largest block that can still be mapped is the device's free memory.
  [[noreturn]] void throw_out_of_memory(std::size_t bytes,
                                        std::string const& why,
                                        cuda::stream_ref stream) const {
    out_of_memory_report report;
    report.resource        = name;
    report.requested_bytes = bytes;
    report.reserved_bytes  = counters_.mapped;
    report.used_bytes      = counters_.used;
    report.stream          = reinterpret_cast<std::uintptr_t>(stream.get());
    rmm::detail::add_device_memory(report, device_.value());
    report.reason = why + "; this resource maps " + std::to_string(counters_.mapped) + " bytes (" +
                    std::to_string(counters_.used) + " in use by " +
                    std::to_string(counters_.allocations) + " allocations) and reserves " +
                    std::to_string(counters_.reserved) + " bytes of address space";
    if (report.device_free_bytes && report.device_total_bytes) {
      report.reason += "; the device has " + std::to_string(*report.device_free_bytes) +
                       " bytes free of " + std::to_string(*report.device_total_bytes) +
                       " (physical memory needs no contiguity here: the largest block that can "
                       "still be mapped is the free memory)";
    }
    throw rmm::out_of_memory{std::move(report)};
  }

  cuda_device_id device_;
  std::vector<int> peers_;
  std::size_t granularity_{};
  std::size_t reservation_{};
  mutable std::mutex mtx_;
  std::unordered_map<CUdeviceptr, allocation> live_;
  virtual_memory_counters counters_;
  vmm_deferred_unmaps deferred_{counters_};  // after counters_, which it counts into
  std::string last_error_;
};

}  // namespace rmm::mr::detail
