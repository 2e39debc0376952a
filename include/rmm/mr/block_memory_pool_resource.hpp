/**
 * @file block_memory_pool_resource.hpp
 * @brief A fixed number of equally sized blocks, allocated once from pinned host, device or system
 * memory and reused, stream-ordered: the sensor-streaming SDK's block memory pool.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alignment_checks.hpp>
#include <rmm/detail/oom_device_info.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/algorithms/block_pool_layout.hpp>
#include <rmm/mr/detail/algorithms/fixed_size_free_list.hpp>
#include <rmm/mr/detail/mechanics/device_binding.hpp>
#include <rmm/mr/detail/mechanics/fixed_size_core_hooks.hpp>
#include <rmm/mr/detail/mechanics/shared_state.hpp>
#include <rmm/mr/detail/mechanics/storage_resource.hpp>
#include <rmm/mr/detail/mechanics/stream_ordered_core.hpp>
#include <rmm/mr/detail/mechanics/stream_resource_base.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cuda/memory_resource>
#include <cuda/std/utility>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rmm::mr {
namespace detail {

/// @brief Shared state of block_memory_pool_resource. Not for direct use.
class block_memory_pool_resource_impl
    : public stream_ordered_core<block_memory_pool_resource_impl>,
      private fixed_size_core_hooks<block_memory_pool_resource_impl>,
      public stream_resource_base<block_memory_pool_resource_impl> {
  friend class stream_ordered_core<block_memory_pool_resource_impl>;
  static constexpr std::size_t prefetch_blocks = one_size_prefetch_blocks;  // blocks of one size
  friend class fixed_size_core_hooks<block_memory_pool_resource_impl>;
  using fixed_size_core_hooks<block_memory_pool_resource_impl>::adopt_rest;  // not the core's
  static constexpr char const* name = "block_memory_pool_resource";

 public:
  block_memory_pool_resource_impl(storage_type storage,
                                  std::size_t block_size,
                                  std::size_t num_blocks,
                                  std::optional<int> dev_id)
      : storage_{storage},
        layout_{make_block_pool_layout(name, block_size, num_blocks)},
        device_{resolve_device(dev_id)},
        upstream_{make_upstream(storage, device_)},
        free_list_{layout_.stride} {
    cuda_set_device_raii const on_device{device_};
    void* base = std::visit(
        [this](auto& mr) {
          return mr.allocate_sync(layout_.total_bytes, CUDA_ALLOCATION_ALIGNMENT);
        },
        upstream_);
    try {
      free_list_.add_chunk(reinterpret_cast<std::uintptr_t>(base), layout_.num_blocks);
    } catch (...) {
      give_back(base);
      throw;
    }
    base_ = base;
  }

  block_memory_pool_resource_impl(block_memory_pool_resource_impl const&)            = delete;
  block_memory_pool_resource_impl& operator=(block_memory_pool_resource_impl const&) = delete;

  ~block_memory_pool_resource_impl() {
    if (rmm::process_is_exiting()) {
      return;  // the CUDA context may already be gone: leave the memory to the driver
    }
    try {
      cuda_set_device_raii const on_device{device_};
      synchronize_for_teardown();
      give_back(base_);
    } catch (std::exception const& e) {
      rmm::log(level_enum::error, std::string{name} + ": leaking the pool: " + e.what());
    }
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    check_device(device_.value(), name, "allocate", stream.get());  // debug builds only
    rmm::detail::expect_supported_alignment(alignment, CUDA_ALLOCATION_ALIGNMENT, name);
    if (bytes == 0) {
      return nullptr;
    }
    if (bytes > layout_.block_size) {
      out_of_memory_report report = block_too_large_report(name, bytes, layout_.block_size);
      {
        std::lock_guard<spin_mutex> lock(mutex());  // the core's lock
        add_figures(report);
      }
      add_place(report, stream);
      throw rmm::out_of_memory(std::move(report));
    }
    return allocate_on(stream, bytes, layout_.stride);
  }

  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t, std::size_t) noexcept {
    if (ptr != nullptr) {
      check_device_noexcept(device_.value(), name, "deallocate", stream.get());
      deallocate_on(stream, ptr, layout_.stride);
    }
  }

  friend block_memory_pool_resource_impl* get_property(
      block_memory_pool_resource_impl const& self,
      state_of<block_memory_pool_resource_impl>) noexcept {
    return const_cast<block_memory_pool_resource_impl*>(&self);
  }

  [[nodiscard]] storage_type storage() const noexcept { return storage_; }
  [[nodiscard]] std::size_t block_size() const noexcept { return layout_.block_size; }
  [[nodiscard]] std::size_t num_blocks() const noexcept { return layout_.num_blocks; }
  [[nodiscard]] std::size_t block_stride() const noexcept { return layout_.stride; }
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }
  [[nodiscard]] std::size_t free_blocks() const noexcept {
    std::lock_guard<spin_mutex> lock(mutex());                    // the core's lock
    return free_list_.size() + batched_bytes() / layout_.stride;  // see stream_ordered_core.md
  }

 private:
  using tag_t = fixed_size_free_list::tag_t;

  static cuda_device_id resolve_device(std::optional<int> dev_id) {
    if (!dev_id) {
      return get_current_cuda_device();
    }
    expect_valid_device(*dev_id, name);
    return cuda_device_id{*dev_id};
  }

  // Made with dev_id current, so that system memory is checked against that device.
  static storage_resource make_upstream(storage_type storage, cuda_device_id device) {
    cuda_set_device_raii const on_device{device};
    return make_storage_resource(storage);
  }

  void give_back(void* base) noexcept {
    std::visit(
        [this, base](auto& mr) {
          mr.deallocate_sync(base, layout_.total_bytes, CUDA_ALLOCATION_ALIGNMENT);
        },
        upstream_);
  }

  // --- the other hooks of stream_ordered_core (called with the lock held) ---
  bool grow(std::size_t, cuda::stream_ref, tag_t) noexcept { return false; }  // fixed capacity
  void release_free_upstream() noexcept {}

  // Every block is in use: the pool's figures and device; the core adds the stream and the
  // device's memory. Lock held.
  [[nodiscard]] out_of_memory_report oom_report(std::size_t requested, std::size_t) const {
    out_of_memory_report report =
        blocks_exhausted_report(name, requested, layout_.num_blocks, layout_.block_size);
    add_figures(report);
    report.device = device_.value();
    return report;
  }

  // The pool's figures: it holds (and may hold at most) its one allocation; a free block serves
  // at most block_size bytes. With the core's lock held.
  void add_figures(out_of_memory_report& report) const {
    std::size_t const free    = free_list_.size() * layout_.stride + batched_bytes();
    report.reserved_bytes     = layout_.total_bytes;
    report.used_bytes         = layout_.total_bytes - free;
    report.free_bytes         = free;
    report.largest_free_block = free > 0 ? layout_.block_size : 0;
    report.maximum_bytes      = layout_.total_bytes;
  }

  // The pool's device (its memory, or for host storage the device it was made on) and the stream.
  void add_place(out_of_memory_report& report, cuda::stream_ref stream) const {
    report.stream = reinterpret_cast<std::uintptr_t>(stream.get());
    rmm::detail::add_device_memory(report, device_.value());
  }

  storage_type storage_;
  block_pool_layout layout_;
  cuda_device_id device_;
  storage_resource upstream_;
  fixed_size_free_list free_list_;
  void* base_{nullptr};
};

}  // namespace detail

/**
 * @brief A pool of `num_blocks` equally sized blocks of `block_size` bytes, allocated once and
 * reused: the sensor-streaming SDK's block memory pool.
 *
 * At construction one allocation of `num_blocks` blocks is made from the chosen storage
 * (cudaMallocHost for storage_type::pinned_host, cudaMalloc for storage_type::device, the system
 * allocator for storage_type::system) on device `dev_id` (default: the current device). Blocks
 * are spaced by block_size rounded up to 256 bytes, so that each is 256-byte aligned. The pool
 * never grows: every request of 1 to block_size bytes takes one whole block; a larger request,
 * or one made while every block is in use, throws rmm::out_of_memory, whose report() gives the
 * pool's size (reserved and maximum), its used and free bytes, the largest request a free block
 * serves, the pool's device with its memory, and the stream. The allocation goes back
 * when the last copy is destroyed (unless rmm::process_is_exiting()).
 *
 * Stream semantics are those of fixed_size_memory_resource
 * (detail/mechanics/stream_ordered_core.hpp): a block freed on a stream is reused on that stream at
 * once, with no CUDA call; another stream reuses it after waiting on an event recorded at the free;
 * when no block is free, the device is synchronised once and blocks freed on any stream are taken
 * before giving up. Host code that touches pinned or system blocks must synchronise the allocating
 * stream first, as with any stream-ordered allocation. Streams on which blocks were freed must be
 * synchronised before they are destroyed if kernels still using those blocks may be running.
 * With two or more streams a stream sets aside up to 31 free blocks of at most 1 MiB in its
 * batch, as fixed_size_memory_resource does (stream_ordered_core.md, "Prefetch").
 *
 * Properties: device_accessible. Pinned and system blocks are also host accessible, but the
 * property is not declared because device blocks are not (check storage()). storage_type::system
 * needs a device with pageable memory access (HMM or ATS), because this library's resources are
 * device accessible; the SDK's "C++ new" host memory for host-only operators has no equivalent.
 *
 * Thread-safety: allocation, deallocation and the getters may be called concurrently (one mutex
 * per pool). Copies share the pool and compare equal; independently constructed pools compare
 * unequal.
 */
class block_memory_pool_resource
    : public cuda::mr::shared_resource<detail::block_memory_pool_resource_impl> {
  using shared_base = cuda::mr::shared_resource<detail::block_memory_pool_resource_impl>;

 public:
  /**
   * @brief Allocates the pool: `num_blocks` blocks of `block_size` bytes of @p storage memory.
   *
   * @param storage Where the blocks come from.
   * @param block_size The largest request a block serves, in bytes.
   * @param num_blocks The number of blocks; the pool's fixed capacity.
   * @param dev_id The device on which the pool is created; default the current device.
   * @throws rmm::logic_error if @p block_size or @p num_blocks is 0, if their product (with the
   * block size rounded up to 256) overflows, if @p storage is not an enumerator, or if it is
   * storage_type::system and the device cannot access pageable memory.
   * @throws rmm::out_of_range if @p dev_id is not a visible device.
   * @throws rmm::out_of_memory (or what the storage's resource throws) if the pool cannot be
   * allocated.
   */
  block_memory_pool_resource(storage_type storage,
                             std::size_t block_size,
                             std::size_t num_blocks,
                             std::optional<int> dev_id = {})
      : shared_base{cuda::std::in_place_type<detail::block_memory_pool_resource_impl>,
                    storage,
                    block_size,
                    num_blocks,
                    dev_id} {}

  ~block_memory_pool_resource() = default;

  /// @brief The storage the blocks come from. @pre Not moved-from (as for every getter here).
  [[nodiscard]] storage_type storage() const noexcept { return state().storage(); }

  /// @brief The block size given at construction: the largest request served.
  [[nodiscard]] std::size_t block_size() const noexcept { return state().block_size(); }

  /// @brief The number of blocks (the fixed capacity).
  [[nodiscard]] std::size_t num_blocks() const noexcept { return state().num_blocks(); }

  /// @brief The number of blocks not in use (in every stream's list, or never handed out).
  [[nodiscard]] std::size_t free_blocks() const noexcept { return state().free_blocks(); }

  /// @brief The device the pool was created on.
  [[nodiscard]] cuda_device_id device() const noexcept { return state().device(); }

  /// @brief Enables the cuda::mr::device_accessible property.
  friend void get_property(block_memory_pool_resource const&,
                           cuda::mr::device_accessible) noexcept {}

 private:
  [[nodiscard]] detail::block_memory_pool_resource_impl& state() const noexcept {
    return detail::shared_state<detail::block_memory_pool_resource_impl>(
        static_cast<shared_base const&>(*this));
  }
};

static_assert(cuda::mr::resource_with<block_memory_pool_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
