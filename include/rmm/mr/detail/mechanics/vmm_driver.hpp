/**
 * @file vmm_driver.hpp
 * @brief The CUDA driver's virtual memory management calls (cuMemAddressReserve, cuMemCreate,
 * cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease, ...), reached through the runtime's
 * cudaGetDriverEntryPointByVersion.
 *
 * Why entry points rather than linking libcuda: every rmm consumer links only the CUDA runtime
 * (CUDA::cudart). Calling cu* functions from a header would make every consumer of
 * virtual_memory_resource add CUDA::cuda_driver to its link line, and a missing one would only
 * show as an undefined symbol. The runtime already loads the driver, and hands out its functions
 * by name and ABI version, so the header needs nothing more than cuda.h's types.
 */
#pragma once

#include <rmm/error.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

namespace rmm::mr::detail {

/// @brief The driver functions that virtual memory management needs, looked up once.
struct vmm_driver {
  // The ABI version each function is requested at: the version its current signature appeared
  // in (CUDA 10.2 for the virtual memory calls), so that any CUDA 13 driver has them.
  static constexpr unsigned int abi_version = 10020;

  decltype(&cuMemAddressReserve) mem_address_reserve{};
  decltype(&cuMemAddressFree) mem_address_free{};
  decltype(&cuMemCreate) mem_create{};
  decltype(&cuMemRelease) mem_release{};
  decltype(&cuMemMap) mem_map{};
  decltype(&cuMemUnmap) mem_unmap{};
  decltype(&cuMemSetAccess) mem_set_access{};
  decltype(&cuMemGetAllocationGranularity) mem_get_allocation_granularity{};
  decltype(&cuDeviceGetAttribute) device_get_attribute{};
  decltype(&cuGetErrorName) get_error_name{};
  bool loaded{false};
  std::string load_error;

  /// @brief The process-wide table; `loaded` is false (and `load_error` says why) if the
  /// runtime could not find a function.
  static vmm_driver const& get() {
    static vmm_driver const table = load();
    return table;
  }

  /// @brief "CUDA_ERROR_OUT_OF_MEMORY" and the like, for messages.
  [[nodiscard]] std::string error_name(CUresult r) const {
    char const* text = nullptr;
    if (get_error_name != nullptr && get_error_name(r, &text) == CUDA_SUCCESS && text != nullptr) {
      return text;
    }
    return "CUresult " + std::to_string(static_cast<int>(r));
  }

 private:
  template <typename F>
  static bool find(char const* symbol, F& fn, std::string& error) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cudaError_t const status =
        cudaGetDriverEntryPointByVersion(symbol, &address, abi_version, cudaEnableDefault, &found);
    if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || address == nullptr) {
      cudaGetLastError();
      error = std::string{"the CUDA driver does not provide "} + symbol + " (" +
              cudaGetErrorName(status) + ")";
      return false;
    }
    fn = reinterpret_cast<F>(address);
    return true;
  }

  static vmm_driver load() {
    vmm_driver d;
    std::string& e = d.load_error;
    d.loaded       = find("cuMemAddressReserve", d.mem_address_reserve, e) &&
               find("cuMemAddressFree", d.mem_address_free, e) &&
               find("cuMemCreate", d.mem_create, e) && find("cuMemRelease", d.mem_release, e) &&
               find("cuMemMap", d.mem_map, e) && find("cuMemUnmap", d.mem_unmap, e) &&
               find("cuMemSetAccess", d.mem_set_access, e) &&
               find("cuMemGetAllocationGranularity", d.mem_get_allocation_granularity, e) &&
               find("cuDeviceGetAttribute", d.device_get_attribute, e) &&
               find("cuGetErrorName", d.get_error_name, e);
    return d;
  }
};

}  // namespace rmm::mr::detail
