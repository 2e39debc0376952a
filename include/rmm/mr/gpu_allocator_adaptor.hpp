/**
 * @file gpu_allocator_adaptor.hpp
 * @brief The GPU allocator interface of an inference runtime (TensorRT's
 * `nvinfer1::IGpuAllocator`: allocate, deallocate, the deprecated free, reallocate), implemented
 * over any device memory resource, so that an application's IGpuAllocator subclass can forward
 * every call to it.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/virtual_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <cuda/memory_resource>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace rmm::mr {

/**
 * @brief Implements the member functions of TensorRT's `nvinfer1::IGpuAllocator` (allocate,
 * deallocate, free, reallocate; same names, parameters and `noexcept`) over any device memory
 * resource. It derives from nothing of TensorRT (which this library does not need); an
 * application's `IGpuAllocator` subclass holds one and forwards each call
 * (docs/sdk_allocators.md shows one).
 *
 * The interface passes only a pointer to deallocate, free and reallocate, so the adaptor
 * remembers the size, alignment and flags of every live allocation (a hash map under a mutex) and
 * gives the upstream back exactly what it allocated.
 *
 * Choices, where the interface leaves them open:
 * - **No stream.** The interface has none, and names cudaMalloc/cudaFree as a valid
 *   implementation. Memory is therefore taken with the upstream's synchronous
 *   `allocate_sync`, so that it is usable on any stream when `allocate` returns. Before memory is
 *   handed back to the upstream (`deallocate`, the old block of a moving `reallocate`, the tail of
 *   an in-place shrink) and before a moving `reallocate` copies, the adaptor waits for the device
 *   it was constructed on (`cudaDeviceSynchronize`), as cudaFree does: the runtime may free memory
 *   that work still queued on its own (possibly non-blocking) streams uses, and an upstream that
 *   reuses memory in stream order would otherwise hand it out again too early.
 * - **Alignment** must be 0 (any) or a power of two up to `max_alignment` (256, the alignment
 *   cudaMalloc guarantees); anything else makes allocate and reallocate return nullptr. The
 *   upstream is always asked for `max_alignment`, so every pointer the adaptor returns is 256-byte
 *   aligned, whatever alignment was asked for: a pointer the upstream returns less aligned is
 *   refused (given back, and nullptr returned).
 * - **Flags**: `resizable` (bit 0, TensorRT's `AllocatorFlag::kRESIZABLE`) allows `reallocate`;
 *   other bits are remembered but have no effect.
 * - **nullptr**: `deallocate(nullptr)` and `free(nullptr)` do nothing, and `deallocate(nullptr)`
 *   returns true, like `cudaFree(nullptr)` (the runtime may pass back a nullptr that allocate
 *   returned).
 *
 * Errors: no member function of the interface throws. Every failure, including an exception from
 * the upstream, is reported as nullptr (allocate, reallocate) or false (deallocate); CUDA's last
 * error is cleared after a failed CUDA call of the adaptor's own.
 *
 * Thread safety: every member function may be called concurrently from any number of threads,
 * on one adaptor or on copies of it. The adaptor is copyable; copies share the bookkeeping and
 * the upstream, compare equal, and may free each other's allocations. Moving copies (the source
 * stays usable). The upstream must itself be thread-safe (every resource of this library is).
 */
class gpu_allocator_adaptor {
 public:
  /// @brief The type-erased upstream resource the adaptor owns (shared by copies).
  using upstream_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

  /// @brief The flag that allows `reallocate` of an allocation (TensorRT's
  /// `AllocatorFlag::kRESIZABLE`, bit 0 of `AllocatorFlags`).
  static constexpr std::uint32_t resizable = 1;

  /// @brief The largest alignment accepted (and the one every returned pointer has): 256 bytes.
  static constexpr std::size_t max_alignment = CUDA_ALLOCATION_ALIGNMENT;

  /**
   * @brief An adaptor that takes memory from @p upstream, which it owns (copies share it).
   *
   * The device that is current now is the one the adaptor waits for before memory is handed back
   * (see the class's note on streams); construct it with the upstream's device current. Where
   * there is no CUDA device (host tests over host-backed resources) it waits for nothing.
   *
   * If @p upstream holds a `virtual_memory_resource` (found with `cuda::mr::resource_cast`),
   * `reallocate` grows and shrinks in place through its `try_resize`.
   *
   * @param upstream The resource every allocation comes from. It must accept the alignment
   * `max_alignment` and be thread-safe.
   * @param stream The stream on which the adaptor queues its own device work: the copy of a
   * moving `reallocate` (synchronised before `reallocate` returns) and the unmapping of a tail that
   * `virtual_memory_resource::try_resize` defers. Default: `cuda_stream_view{}`, the default stream
   * (the legacy default stream, unless the program is built with the per-thread default stream).
   * Allocation and deallocation use the upstream's synchronous calls, which take no stream.
   * @throws Whatever allocating the shared state throws (std::bad_alloc).
   */
  explicit gpu_allocator_adaptor(upstream_resource upstream,
                                 cuda_stream_view stream = cuda_stream_view{})
      : state_{std::make_shared<state>(std::move(upstream), stream)} {}

  ~gpu_allocator_adaptor() = default;

  /// @brief A copy sharing the upstream and the bookkeeping (also used for moves).
  gpu_allocator_adaptor(gpu_allocator_adaptor const&) = default;
  /// @brief Makes this adaptor share @p other's upstream and bookkeeping (also used for moves).
  gpu_allocator_adaptor& operator=(gpu_allocator_adaptor const&) = default;

  /**
   * @brief Allocates @p size bytes of device memory, usable on any stream on return.
   *
   * @param size Bytes wanted; 0 returns nullptr.
   * @param alignment 0 (any) or a power of two no larger than `max_alignment`; anything else
   * returns nullptr. The pointer is always `max_alignment`-aligned.
   * @param flags `resizable` allows `reallocate`; other bits are ignored.
   * @return The memory, or nullptr if @p size is 0, the alignment is not accepted, or the upstream
   * cannot provide the memory (whatever it throws).
   *
   * Thread-safe.
   */
  [[nodiscard]] void* allocate(std::uint64_t const size,
                               std::uint64_t const alignment,
                               std::uint32_t const flags) noexcept {
    if (size == 0 || !accepted_alignment(alignment) || !fits_size_t(size)) {
      return nullptr;
    }
    auto const bytes = static_cast<std::size_t>(size);
    state& s         = *state_;
    void* ptr        = s.take(bytes);
    if (ptr == nullptr) {
      return nullptr;
    }
    try {
      std::lock_guard<std::mutex> lock(s.mtx);
      if (!s.live.try_emplace(ptr, record{bytes, static_cast<std::size_t>(alignment), flags, false})
               .second) {
        return nullptr;  // the upstream returned a live pointer: its bug; keep the first record
      }
      s.live_bytes += bytes;
    } catch (...) {  // the map could not grow
      s.give_back(ptr, bytes);
      return nullptr;
    }
    return ptr;
  }

  /**
   * @brief Gives the allocation at @p memory back to the upstream, after waiting for the device
   * (see the class's note on streams).
   *
   * @param memory A pointer that allocate or reallocate returned, or nullptr.
   * @return true if @p memory was a live allocation of this adaptor (or a copy of it), which is
   * now released; true for nullptr (nothing to release, as with cudaFree(nullptr)); false for any
   * other pointer, including one already freed, so that a live allocation yields true exactly
   * once. False also if the upstream's deallocation threw (the allocation is then forgotten).
   *
   * Thread-safe. A pointer that another thread is reallocating at this moment is not released
   * (false).
   */
  bool deallocate(void* const memory) noexcept {
    if (memory == nullptr) {
      return true;
    }
    state& s = *state_;
    std::size_t bytes{};
    {
      std::lock_guard<std::mutex> lock(s.mtx);
      auto it = s.live.find(memory);
      if (it == s.live.end() || it->second.busy) {
        return false;
      }
      bytes = it->second.size;
      s.live.erase(it);
      s.live_bytes -= bytes;
    }
    s.wait_for_device();
    return s.give_back(memory, bytes);
  }

  /**
   * @brief The deprecated form of `deallocate` (TensorRT's `free`, superseded by `deallocate`):
   * releases @p memory and discards the result; nullptr and unknown pointers do nothing.
   *
   * Deprecated in the interface, but not marked `[[deprecated]]` here: an application's
   * IGpuAllocator subclass must still override `free` and forward to it.
   *
   * Thread-safe.
   */
  void free(void* const memory) noexcept { static_cast<void>(deallocate(memory)); }

  /**
   * @brief Resizes the allocation at @p base to @p new_size bytes, keeping its first
   * `min(old size, new_size)` bytes.
   *
   * - Over a `virtual_memory_resource`, the allocation grows or shrinks in place (its
   *   `try_resize`) and @p base is returned; a shrink first waits for the device, since the tail is
   *   unmapped.
   * - Otherwise, or if it cannot grow in place (beyond its reserved address range, or the device
   *   is out of memory), a new block of @p new_size bytes is allocated, the adaptor waits for the
   *   device, copies the bytes with `cudaMemcpyAsync(cudaMemcpyDefault)` on the adaptor's stream,
   *   synchronises it, frees the old block and returns the new address. Shrinking moves too.
   * - @p new_size equal to the current size returns @p base and does nothing.
   *
   * @param base A live allocation of this adaptor made with the `resizable` flag.
   * @param alignment 0 or a power of two no larger than `max_alignment` (the interface passes the
   * original's). Every allocation is `max_alignment`-aligned, so any accepted value is already
   * satisfied and never forces a move; a moved allocation remembers this alignment if it is not 0.
   * @param new_size The size wanted; 0 returns nullptr (free the allocation instead).
   * @return @p base (resized in place), the new address (moved), or nullptr, leaving the
   * allocation at @p base valid and unchanged: for a nullptr, unknown or non-resizable @p base,
   * an alignment not accepted, a new_size of 0, or when the new block cannot be allocated or the
   * copy fails.
   *
   * Thread-safe. While it runs, other calls leave @p base alone: a concurrent deallocate of it
   * returns false and a concurrent reallocate of it nullptr.
   */
  [[nodiscard]] void* reallocate(void* const base,
                                 std::uint64_t const alignment,
                                 std::uint64_t const new_size) noexcept {
    if (base == nullptr || new_size == 0 || !accepted_alignment(alignment) ||
        !fits_size_t(new_size)) {
      return nullptr;
    }
    auto const bytes = static_cast<std::size_t>(new_size);
    state& s         = *state_;
    std::size_t old_size{};
    std::size_t new_alignment{};
    std::uint32_t flags{};
    {
      std::lock_guard<std::mutex> lock(s.mtx);
      auto it = s.live.find(base);
      if (it == s.live.end() || it->second.busy || (it->second.flags & resizable) == 0) {
        return nullptr;
      }
      if (it->second.size == bytes) {
        return base;
      }
      it->second.busy = true;  // others now leave it alone until this call is done with it
      old_size        = it->second.size;
      new_alignment   = alignment == 0 ? it->second.alignment : static_cast<std::size_t>(alignment);
      flags           = it->second.flags;
    }
    if (s.growable != nullptr && s.resize_in_place(base, old_size, bytes)) {
      s.release_claim(base, old_size, bytes);
      return base;
    }
    void* fresh = s.take(bytes);
    if (fresh == nullptr) {
      s.release_claim(base, old_size, old_size);
      return nullptr;
    }
    s.wait_for_device();  // the old block's contents may still be being written
    if (!s.copy(fresh, base, std::min(old_size, bytes))) {
      s.give_back(fresh, bytes);
      s.release_claim(base, old_size, old_size);
      return nullptr;
    }
    bool inserted = false;
    try {
      std::lock_guard<std::mutex> lock(s.mtx);
      inserted = s.live.try_emplace(fresh, record{bytes, new_alignment, flags, false}).second;
      if (inserted) {
        s.live.erase(base);
        s.live_bytes = s.live_bytes - old_size + bytes;
      }
    } catch (...) {  // the map could not grow: keep the original
      s.give_back(fresh, bytes);
      s.release_claim(base, old_size, old_size);
      return nullptr;
    }
    if (!inserted) {  // the upstream returned a live pointer (its bug): keep both records
      s.release_claim(base, old_size, old_size);
      return nullptr;
    }
    s.give_back(base, old_size);
    return fresh;
  }

  /// @brief A reference to the upstream resource. Thread-safe.
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept {
    return device_async_resource_ref{state_->upstream};
  }

  /// @brief The stream given at construction (see the constructor). Thread-safe.
  [[nodiscard]] cuda_stream_view stream() const noexcept { return state_->stream; }

  /// @brief Bytes asked for by the live allocations, at their current sizes (shared by copies).
  /// Thread-safe; a snapshot.
  [[nodiscard]] std::size_t allocated_bytes() const noexcept {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->live_bytes;
  }

  /// @brief The number of live allocations (shared by copies). Thread-safe; a snapshot.
  [[nodiscard]] std::size_t live_allocations() const noexcept {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->live.size();
  }

  /**
   * @brief The current size of the live allocation at @p memory (its old size while another thread
   * is reallocating it), or 0 if it is not one (unknown, freed, nullptr). Thread-safe.
   */
  [[nodiscard]] std::size_t allocation_size(void const* memory) const noexcept {
    std::lock_guard<std::mutex> lock(state_->mtx);
    auto it = state_->live.find(const_cast<void*>(memory));
    return it == state_->live.end() ? 0 : it->second.size;
  }

  /// @brief True if the upstream is a `virtual_memory_resource`, so that `reallocate` resizes in
  /// place where it can. Thread-safe.
  [[nodiscard]] bool resizes_in_place() const noexcept { return state_->growable != nullptr; }

  /// @brief True if @p a and @p b are copies of one another (share their state).
  friend bool operator==(gpu_allocator_adaptor const& a, gpu_allocator_adaptor const& b) noexcept {
    return a.state_ == b.state_;
  }
  /// @brief True unless @p a and @p b are copies of one another.
  friend bool operator!=(gpu_allocator_adaptor const& a, gpu_allocator_adaptor const& b) noexcept {
    return !(a == b);
  }

 private:
  struct record {
    std::size_t size;       // bytes asked for (what the upstream was given)
    std::size_t alignment;  // as asked (0: any); the upstream always got max_alignment
    std::uint32_t flags;
    bool busy;  // a reallocate is working on it: deallocate and reallocate leave it alone
  };

  struct state {
    state(upstream_resource up, cuda_stream_view s)
        : upstream{std::move(up)},
          stream{s},
          growable{cuda::mr::resource_cast<virtual_memory_resource>(&upstream)} {
      if (cudaGetDevice(&device) != cudaSuccess) {
        device = -1;  // no CUDA device: nothing to wait for
        rmm::detail::clear_last_cuda_error();
      }
    }
    state(state const&)            = delete;
    state& operator=(state const&) = delete;
    ~state()                       = default;

    // A new block of `bytes` (max_alignment-aligned), or nullptr.
    void* take(std::size_t bytes) noexcept {
      try {
        void* ptr = upstream.allocate_sync(bytes, max_alignment);
        if (ptr != nullptr && !is_pointer_aligned(ptr, max_alignment)) {
          give_back(ptr, bytes);  // never used: no need to wait for the device
          return nullptr;
        }
        return ptr;
      } catch (...) {
        rmm::detail::clear_last_cuda_error();
        return nullptr;
      }
    }

    // Hands `ptr` back to the upstream; false if the upstream threw.
    bool give_back(void* ptr, std::size_t bytes) noexcept {
      try {
        upstream.deallocate_sync(ptr, bytes, max_alignment);
        return true;
      } catch (...) {
        rmm::detail::clear_last_cuda_error();
        return false;
      }
    }

    // try_resize of the virtual_memory_resource upstream; false if it refuses or throws. A
    // shrink unmaps the tail, so it first waits for the device.
    bool resize_in_place(void* ptr, std::size_t old_bytes, std::size_t new_bytes) noexcept {
      if (new_bytes < old_bytes) {
        wait_for_device();
      }
      try {
        return growable->try_resize(ptr, old_bytes, new_bytes, stream);
      } catch (...) {  // not expected (the sizes are the ones it was given): move instead
        rmm::detail::clear_last_cuda_error();
        return false;
      }
    }

    // Ends a reallocate's claim on the record of `ptr`, which now has `new_bytes` bytes.
    void release_claim(void* ptr, std::size_t old_bytes, std::size_t new_bytes) noexcept {
      std::lock_guard<std::mutex> lock(mtx);
      auto it         = live.find(ptr);  // present: nobody removes a busy record
      it->second.size = new_bytes;
      it->second.busy = false;
      live_bytes      = live_bytes - old_bytes + new_bytes;
    }

    // Waits for all work on the adaptor's device, as cudaFree does before releasing memory.
    void wait_for_device() const noexcept {
      if (device < 0) {
        return;
      }
      int current         = -1;
      bool ok             = cudaGetDevice(&current) == cudaSuccess;
      bool const switched = ok && current != device;
      if (switched) {
        ok = cudaSetDevice(device) == cudaSuccess;
      }
      if (ok) {
        ok = cudaDeviceSynchronize() == cudaSuccess;
      }
      if (switched) {
        ok = (cudaSetDevice(current) == cudaSuccess) && ok;
      }
      if (!ok) {
        rmm::detail::clear_last_cuda_error();
      }
    }

    // Copies `bytes` from `src` to `dst` on the adaptor's stream and waits for it.
    bool copy(void* dst, void const* src, std::size_t bytes) const noexcept {
      bool const ok =
          cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.value()) == cudaSuccess &&
          cudaStreamSynchronize(stream.value()) == cudaSuccess;
      if (!ok) {
        rmm::detail::clear_last_cuda_error();
      }
      return ok;
    }

    upstream_resource upstream;
    cuda_stream_view stream;
    virtual_memory_resource* growable;  // the upstream itself if it is one, else nullptr
    int device{-1};
    mutable std::mutex mtx;
    std::unordered_map<void*, record> live;
    std::size_t live_bytes{0};  // sum of the live records' sizes
  };

  [[nodiscard]] static constexpr bool accepted_alignment(std::uint64_t alignment) noexcept {
    return alignment == 0 || (alignment <= max_alignment && (alignment & (alignment - 1)) == 0);
  }

  [[nodiscard]] static constexpr bool fits_size_t(std::uint64_t value) noexcept {
    if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
      return value <= std::numeric_limits<std::size_t>::max();
    } else {
      return true;
    }
  }

  std::shared_ptr<state> state_;
};

}  // namespace rmm::mr
