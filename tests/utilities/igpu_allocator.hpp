// A test-local copy of the inference runtime's allocator interface (TensorRT 8.2's
// nvinfer1::IGpuAllocator, seed 003) and an application-style subclass forwarding every call to
// rmm::mr::gpu_allocator_adaptor: shared by the adaptor's host and GPU tests.
#pragma once

#include <rmm/mr/gpu_allocator_adaptor.hpp>

#include <cstdint>
#include <utility>

namespace rmm::test {

using rmm::mr::gpu_allocator_adaptor;

// TensorRT 8.2's nvinfer1::IGpuAllocator, written from its reference (seed 003): the signatures
// exactly, with the documented default bodies (free is TRT_DEPRECATED there; the attribute is left
// out here). TensorRT itself is not needed.
using AllocatorFlags = std::uint32_t;
using std::uint64_t;
class IGpuAllocator {
 public:
  virtual void* allocate(uint64_t const size,
                         uint64_t const alignment,
                         AllocatorFlags const flags) noexcept = 0;
  virtual void free(void* const memory) noexcept              = 0;
  virtual ~IGpuAllocator()                                    = default;
  virtual void* reallocate(void*, uint64_t, uint64_t) noexcept { return nullptr; }
  virtual bool deallocate(void* const memory) noexcept {
    free(memory);
    return true;
  }
};

// What an application writes: every call forwarded to the adaptor.
class forwarding_allocator final : public IGpuAllocator {
 public:
  explicit forwarding_allocator(gpu_allocator_adaptor adaptor) : adaptor_{std::move(adaptor)} {}
  void* allocate(uint64_t const size,
                 uint64_t const alignment,
                 AllocatorFlags const flags) noexcept override {
    return adaptor_.allocate(size, alignment, flags);
  }
  void free(void* const memory) noexcept override { adaptor_.free(memory); }
  void* reallocate(void* base, uint64_t alignment, uint64_t new_size) noexcept override {
    return adaptor_.reallocate(base, alignment, new_size);
  }
  bool deallocate(void* const memory) noexcept override { return adaptor_.deallocate(memory); }

 private:
  gpu_allocator_adaptor adaptor_;
};

}  // namespace rmm::test
