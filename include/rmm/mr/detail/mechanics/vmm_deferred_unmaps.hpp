/**
 * @file vmm_deferred_unmaps.hpp
 * @brief The pieces of physical memory a virtual_memory_resource maps, and the unmaps it defers
 * until the work queued on the freeing stream has completed (mapping calls are not
 * stream-ordered: unmapping at once would pull memory from under running kernels).
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/vmm_driver.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <cstddef>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/// @brief One cuMemCreate'd piece of physical memory, mapped at `offset` into its reservation.
struct vmm_mapping {
  CUmemGenericAllocationHandle handle;
  std::size_t offset;
  std::size_t bytes;
};

/// @brief Byte counters of a virtual_memory_resource.
struct virtual_memory_counters {
  std::size_t reserved{};     ///< address space reserved (live allocations and deferred frees)
  std::size_t mapped{};       ///< physical memory mapped, including unmaps not yet done
  std::size_t used{};         ///< bytes asked for by live allocations (their current sizes)
  std::size_t peak_mapped{};  ///< the most `mapped` has been
  std::size_t allocations{};  ///< live allocations
};

/// @brief Unmaps and releases @p maps (offsets from @p base) at once and counts them out.
inline void vmm_unmap_all(CUdeviceptr base,
                          std::vector<vmm_mapping> const& maps,
                          virtual_memory_counters& counters) noexcept {
  vmm_driver const& drv = vmm_driver::get();
  for (vmm_mapping const& m : maps) {
    drv.mem_unmap(base + m.offset, m.bytes);
    drv.mem_release(m.handle);
    counters.mapped -= m.bytes;
  }
}

/**
 * @brief Unmaps (and address ranges) waiting for an event, each given back on a later call once
 * its event has completed. Not thread-safe: the owner's mutex guards it.
 */
class vmm_deferred_unmaps {
 public:
  explicit vmm_deferred_unmaps(virtual_memory_counters& counters) : counters_{&counters} {}
  vmm_deferred_unmaps(vmm_deferred_unmaps const&)            = delete;
  vmm_deferred_unmaps& operator=(vmm_deferred_unmaps const&) = delete;
  ~vmm_deferred_unmaps() {
    for (cudaEvent_t e : spare_events_) {
      cudaEventDestroy(e);
    }
  }

  [[nodiscard]] bool empty() const noexcept { return pending_.empty(); }

  // Queues the unmap of `maps` (offsets from `maps_base`) and the release of `reservation` (if not
  // 0, with `reserved` bytes) after the work queued so far on `stream`. If no event can be
  // recorded, the stream is synchronised and the memory given back at once.
  void defer(cuda::stream_ref stream,
             CUdeviceptr maps_base,
             std::vector<vmm_mapping> maps,
             CUdeviceptr reservation,
             std::size_t reserved) noexcept {
    entry d{nullptr, reservation, reserved, maps_base, std::move(maps)};
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

  // Gives back every entry whose event has completed (all of them, waiting, if `wait`). Unmaps
  // inside a reservation go first: a reservation can be freed only once nothing is mapped in it,
  // and an unmap deferred on one stream may complete after the whole allocation's free on
  // another.
  void drain(bool wait) noexcept {
    drain_pass(wait, false);
    drain_pass(wait, true);
  }

  // Waits for (and performs) the deferred unmaps inside [lo, hi) of live allocations: the range
  // is about to be mapped again.
  void settle_range(CUdeviceptr lo, CUdeviceptr hi) noexcept {
    for (std::size_t i = 0; i < pending_.size();) {
      entry& d            = pending_[i];
      bool const overlaps = d.base == 0 && !d.maps.empty() &&
                            d.maps_base + d.maps.back().offset < hi &&
                            d.maps_base + d.maps.front().offset + d.maps.front().bytes > lo;
      if (!overlaps) {
        ++i;
        continue;
      }
      cudaEventSynchronize(d.event);
      cudaGetLastError();
      remove(i);
    }
  }

 private:
  struct entry {
    cudaEvent_t event;  // null: the stream was synchronised instead
    CUdeviceptr base;   // reservation to free (with `reserved` bytes), or 0 for pieces only
    std::size_t reserved;
    CUdeviceptr maps_base;
    std::vector<vmm_mapping> maps;  // ascending offsets
  };

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

  void give_back(entry& d) noexcept {
    vmm_unmap_all(d.maps_base, d.maps, *counters_);
    if (d.base != 0) {
      vmm_driver::get().mem_address_free(d.base, d.reserved);
      counters_->reserved -= d.reserved;
    }
    if (d.event != nullptr) {
      spare_events_.push_back(d.event);
    }
  }

  void remove(std::size_t i) noexcept {
    give_back(pending_[i]);
    pending_[i] = std::move(pending_.back());
    pending_.pop_back();
  }

  void drain_pass(bool wait, bool reservations) noexcept {
    for (std::size_t i = 0; i < pending_.size();) {
      entry& d = pending_[i];
      if ((d.base != 0) != reservations || (reservations && has_pending_pieces(d.base))) {
        ++i;
        continue;
      }
      cudaError_t const s = wait ? cudaEventSynchronize(d.event) : cudaEventQuery(d.event);
      if (s == cudaErrorNotReady) {
        ++i;
        continue;
      }
      cudaGetLastError();
      remove(i);
    }
  }

  [[nodiscard]] bool has_pending_pieces(CUdeviceptr reservation) const noexcept {
    for (entry const& d : pending_) {
      if (d.base == 0 && d.maps_base == reservation) {
        return true;
      }
    }
    return false;
  }

  virtual_memory_counters* counters_;
  std::vector<entry> pending_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace rmm::mr::detail
