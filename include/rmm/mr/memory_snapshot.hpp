/**
 * @file memory_snapshot.hpp
 * @brief A picture of a pooling resource's memory as data: each chunk it holds and each block in
 * it, with offset, size, allocated or free, and the stream that owns a free block.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace rmm::mr {

/// @brief One block of a chunk, in address order.
struct snapshot_block {
  std::size_t offset{};     ///< from the chunk's base, in bytes
  std::size_t size{};       ///< in bytes
  bool allocated{};         ///< handed out (true) or free (false)
  std::uintptr_t stream{};  ///< a free block's owning stream handle; 0: no stream (or allocated)
};

/// @brief One range of memory a resource holds, with its blocks (which cover it exactly).
struct snapshot_chunk {
  std::uintptr_t base{};  ///< address of the first byte
  std::size_t size{};     ///< in bytes
  /// Which part of the resource holds it: 0 for memory from the upstream; for a sharded
  /// pool_memory_resource, k > 0 for a piece that shard k borrowed (the same bytes also appear
  /// as one allocated block of a shard-0 chunk).
  std::uint32_t shard{};
  std::vector<snapshot_block> blocks;
};

/**
 * @brief Every chunk and block of a resource at one moment (see pool_memory_resource::snapshot).
 *
 * A value: copying and reading it is thread-safe; the resource may have changed since it was
 * taken. The totals count shard-0 chunks only (pieces of other shards lie inside them), except
 * free_bytes() and largest_free_block(), which look inside the pieces, where the free space is.
 */
struct memory_snapshot {
  std::vector<snapshot_chunk> chunks;  ///< shard 0's in address order, then each shard's pieces

  /// @brief Bytes the resource holds from its upstream (shard-0 chunks).
  [[nodiscard]] std::size_t total_bytes() const noexcept {
    std::size_t n = 0;
    for (auto const& c : chunks) {
      n += c.shard == 0 ? c.size : 0;
    }
    return n;
  }

  /// @brief Bytes in free blocks, wherever they are (a piece is allocated in shard 0 and
  /// holds free blocks of its shard).
  [[nodiscard]] std::size_t free_bytes() const noexcept {
    std::size_t n = 0;
    for (auto const& c : chunks) {
      for (auto const& b : c.blocks) {
        n += b.allocated ? 0 : b.size;
      }
    }
    return n;
  }

  /// @brief The largest free block of any chunk.
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    std::size_t n = 0;
    for (auto const& c : chunks) {
      for (auto const& b : c.blocks) {
        n = b.allocated ? n : std::max(n, b.size);
      }
    }
    return n;
  }

  /**
   * @brief The snapshot as JSON: `{"total_bytes":…, "free_bytes":…, "largest_free_block":…,
   * "chunks":[{"base":…, "size":…, "shard":…, "blocks":[[offset, size, allocated 0/1,
   * stream], …]}, …]}` (numbers in decimal), the input of tools/pictures/render_snapshot.py.
   * @throws std::bad_alloc.
   */
  [[nodiscard]] std::string to_json() const {
    std::ostringstream out;
    out << "{\"total_bytes\":" << total_bytes() << ",\"free_bytes\":" << free_bytes()
        << ",\"largest_free_block\":" << largest_free_block() << ",\"chunks\":[";
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      auto const& c = chunks[i];
      out << (i > 0 ? "," : "") << "\n{\"base\":" << c.base << ",\"size\":" << c.size
          << ",\"shard\":" << c.shard << ",\"blocks\":[";
      for (std::size_t j = 0; j < c.blocks.size(); ++j) {
        auto const& b = c.blocks[j];
        out << (j > 0 ? "," : "") << '[' << b.offset << ',' << b.size << ','
            << (b.allocated ? 1 : 0) << ',' << b.stream << ']';
      }
      out << "]}";
    }
    out << "]}\n";
    return out.str();
  }
};

}  // namespace rmm::mr
