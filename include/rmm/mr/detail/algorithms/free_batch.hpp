/**
 * @file free_batch.hpp
 * @brief A fixed-capacity batch of freed blocks, held by one stream's slot of the
 * stream-ordered core while the core's shared lock is busy (see stream_ordered_core.md).
 *
 * Plain host data: no CUDA calls, no locks (the slot's lock guards it), no allocation.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace rmm::mr::detail {

/**
 * @brief Up to `Capacity` blocks (address, size) freed on one stream and not yet returned to the
 * shared free list.
 *
 * A batch is full when it holds `Capacity` blocks or at least `byte_limit` bytes (a limit of 0:
 * blocks only); the caller then takes every block out (`take_all`), or the oldest ones
 * (`take_oldest`, keeping the newest for its own stream), and returns them under the shared
 * lock. A block of exactly the size asked can be taken back by its own stream (`take_exact`),
 * most recently freed first: stream order makes that safe with no ordering call.
 *
 * @tparam Capacity the most blocks held
 */
template <std::size_t Capacity>
class free_batch {
 public:
  struct block {
    void* ptr{};
    std::size_t size{};
  };

  /// @brief A batch whose byte limit is @p byte_limit (full once it holds that many bytes).
  explicit free_batch(std::size_t byte_limit = 0) noexcept : byte_limit_{byte_limit} {}

  /// @brief Adds a block. Precondition: `!full()`. @return whether the batch is now full.
  bool push(void* ptr, std::size_t size) noexcept {
    blocks_[count_++] = block{ptr, size};
    bytes_ += size;
    return full();
  }

  /// @brief Removes and returns the most recently added block of exactly @p size bytes, if any.
  std::optional<void*> take_exact(std::size_t size) noexcept {
    for (std::size_t i = count_; i > 0; --i) {
      if (blocks_[i - 1].size == size) {
        void* const p = blocks_[i - 1].ptr;
        for (std::size_t j = i; j < count_; ++j) {  // keep the order of the others
          blocks_[j - 1] = blocks_[j];
        }
        --count_;
        bytes_ -= size;
        return p;
      }
    }
    return std::nullopt;
  }

  /// @brief Moves every block into @p out (which must hold `Capacity`); @return how many.
  std::size_t take_all(std::array<block, Capacity>& out) noexcept {
    return take_oldest(count_, out);
  }

  /// @brief Moves the @p n least recently added blocks (all if fewer) into @p out, oldest first;
  /// the others stay, in their order. @return how many moved.
  std::size_t take_oldest(std::size_t n, std::array<block, Capacity>& out) noexcept {
    n = n < count_ ? n : count_;
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = blocks_[i];
      bytes_ -= blocks_[i].size;
    }
    for (std::size_t i = n; i < count_; ++i) {
      blocks_[i - n] = blocks_[i];
    }
    count_ -= n;
    return n;
  }

  /// @brief Whether pushing one more block of @p size bytes would make the batch full.
  [[nodiscard]] bool full_after(std::size_t size) const noexcept {
    return count_ + 1 >= Capacity || (byte_limit_ != 0 && bytes_ + size >= byte_limit_);
  }

  [[nodiscard]] bool full() const noexcept {
    return count_ == Capacity || (byte_limit_ != 0 && bytes_ >= byte_limit_);
  }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] static constexpr std::size_t capacity() noexcept { return Capacity; }

 private:
  std::array<block, Capacity> blocks_{};
  std::size_t count_{};
  std::size_t bytes_{};
  std::size_t byte_limit_{};
};

}  // namespace rmm::mr::detail
