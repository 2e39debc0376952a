// Thread ids for per-thread default streams: one counter per process.
#include <rmm/mr/detail/mechanics/stream_key.hpp>

#include <atomic>
#include <cstdint>

namespace rmm::mr::detail {

std::uint64_t this_thread_uid() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local std::uint64_t const uid = next.fetch_add(1, std::memory_order_relaxed);
  return uid;
}

std::uint64_t next_resource_uid() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace rmm::mr::detail
