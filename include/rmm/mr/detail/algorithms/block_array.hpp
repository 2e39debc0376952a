/**
 * @file block_array.hpp
 * @brief A superblock's free blocks for chunk_stream_arena: up to a few hundred disjoint blocks
 * sorted by address, as two arrays of 32-bit units (places and sizes, relative to the
 * superblock), searched with SSE2 sixteen at a time. Plain host data structure, no CUDA, no locks.
 * Design: chunk_stream_arena.md, "Free blocks of a superblock".
 */
#pragma once

#include <rmm/mr/detail/algorithms/sse2_u32.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

namespace rmm::mr::detail::arena {

/// @brief Asks for the cache line holding @p p ahead of its use (a hint: no effect on the
/// result, nothing where the compiler has no prefetch).
inline void prefetch_line(void const* p) noexcept {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  __builtin_prefetch(p);
#else
  static_cast<void>(p);
#endif
}

/**
 * @brief Free blocks `{place, size}` in units (the caller's: chunk_stream_arena's are 256 bytes
 * from the superblock's base), kept sorted by place; the caller keeps them disjoint.
 *
 * Places and sizes are two arrays (a structure of arrays) so that SSE2 compares test four
 * entries at once: first fit (the first block of at least a size), the largest size and the index
 * of the first block at or after a place. Each search steps 16 entries (four vectors) at a time,
 * so that for up to 16 blocks its loop runs once whatever the count: a loop over ceil(n / 4)
 * vectors mispredicted its exit on almost every call, the counts varying from superblock to
 * superblock (chunk_stream_arena.md, "Free blocks of a superblock"). The values are stored
 * biased (x ^ 2^31), the form in which SSE2's signed compares order them as unsigned, so that
 * no load needs converting. The lanes past the last block are padding that no search can match:
 * size 0 and place 2^32 - 1. One allocation holds both arrays (capacity a multiple of 16);
 * clear() keeps it, so that a recycled superblock record does not allocate again; release()
 * frees it.
 *
 * Not thread-safe: the caller serialises every member.
 */
class block_array {
 public:
  using unit = std::uint32_t;

  /// @brief The capacity's granule: every search steps this many entries at a time.
  static constexpr std::size_t lanes_per_step = 16;

  block_array() noexcept = default;
  block_array(block_array&& o) noexcept : data_{std::move(o.data_)}, n_{o.n_}, cap_{o.cap_} {
    o.n_   = 0;
    o.cap_ = 0;
  }
  block_array& operator=(block_array&& o) noexcept {
    data_  = std::move(o.data_);
    n_     = o.n_;
    cap_   = o.cap_;
    o.n_   = 0;
    o.cap_ = 0;
    return *this;
  }
  block_array(block_array const&)            = delete;
  block_array& operator=(block_array const&) = delete;
  ~block_array()                             = default;

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }
  /// @brief Whether every lane past the last block is padding (size 0, place 2^32 - 1) and the
  /// capacity a multiple of lanes_per_step: what the vector searches rely on. O(capacity), for
  /// validate().
  [[nodiscard]] bool padded() const noexcept {
    for (std::size_t i = n_; i < cap_; ++i) {
      if (places()[i] != biased(pad_place) || sizes()[i] != biased(0)) {
        return false;
      }
    }
    return cap_ % lanes_per_step == 0;
  }
  /// @brief The place of block @p i (< size()).
  [[nodiscard]] unit place(std::size_t i) const noexcept { return biased(places()[i]); }
  /// @brief The size of block @p i (< size()).
  [[nodiscard]] unit length(std::size_t i) const noexcept { return biased(sizes()[i]); }

  /// @brief Prefetches the first step of sizes (the lines of its first and last entries), for a
  /// caller that will read a size after searching the places. A hint; never throws.
  void prefetch_sizes() const noexcept {
    prefetch_line(sizes());
    prefetch_line(sizes() + lanes_per_step - 1);
  }

  /// @brief Prefetches the first step of places, as prefetch_sizes(), for a caller that will
  /// read a place after searching the sizes.
  void prefetch_places() const noexcept {
    prefetch_line(places());
    prefetch_line(places() + lanes_per_step - 1);
  }

  /// @brief Room for at least @p n blocks. @throws std::bad_alloc; the array is then unchanged.
  void reserve(std::size_t n) {
    if (n > cap_) {
      grow(n);
    }
  }

  /// @brief Removes every block, keeping the capacity. Never throws.
  void clear() noexcept {
    for (std::size_t i = 0; i < n_; ++i) {
      places()[i] = biased(pad_place);
      sizes()[i]  = biased(0);
    }
    n_ = 0;
  }

  /// @brief Removes every block and frees the storage (capacity 0), for a record whose array grew
  /// far past what its next superblock is likely to need. Never throws.
  void release() noexcept {
    data_.reset();
    n_   = 0;
    cap_ = 0;
  }

  /// @brief The one block {place, size}: clear() and then insert(0, ...). @throws std::bad_alloc
  /// (only where the capacity is 0); the array is then unchanged.
  void assign_one(unit place, unit size) {
    reserve(1);
    clear();
    insert(0, place, size);
  }

  /// @brief Inserts {place, size} before block @p i (<= size()); the caller reserved room
  /// (size() < capacity()) and keeps the order. Never throws.
  void insert(std::size_t i, unit place, unit size) noexcept {
    unit* const p = places();
    unit* const s = sizes();
    std::memmove(p + i + 1, p + i, (n_ - i) * sizeof(unit));
    std::memmove(s + i + 1, s + i, (n_ - i) * sizeof(unit));
    p[i] = biased(place);
    s[i] = biased(size);
    ++n_;
  }

  /// @brief Removes block @p i (< size()). Never throws.
  void erase(std::size_t i) noexcept {
    unit* const p = places();
    unit* const s = sizes();
    --n_;
    std::memmove(p + i, p + i + 1, (n_ - i) * sizeof(unit));
    std::memmove(s + i, s + i + 1, (n_ - i) * sizeof(unit));
    p[n_] = biased(pad_place);
    s[n_] = biased(0);
  }

  /// @brief Block @p i is now {place, size} (the caller keeps the order). Never throws.
  void set(std::size_t i, unit place, unit size) noexcept {
    places()[i] = biased(place);
    sizes()[i]  = biased(size);
  }

  /// @brief The index of the first block of at least @p u (>= 1) units, or size() if none.
  [[nodiscard]] std::size_t first_fit(unit u) const noexcept {
    unit const* const s = sizes();
#ifdef RMM_DETAIL_SSE2
    __m128i const key = sse2::splat_biased(u - 1);  // >= u as > u - 1
    auto const ge     = [&](std::size_t i) { return _mm_cmpgt_epi32(load(s + i), key); };
    for (std::size_t i = 0; i < n_; i += lanes_per_step) {
      // The four masks packed to 16 bytes, one bit per entry.
      __m128i const lo = _mm_packs_epi32(ge(i), ge(i + 4));
      __m128i const hi = _mm_packs_epi32(ge(i + 8), ge(i + 12));
      if (auto const m = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
          m != 0) {
        return i + static_cast<std::size_t>(__builtin_ctz(m));
      }
    }
    return n_;
#else
    return first_at_least(s, n_, u);
#endif
  }

  /// @brief The largest size, 0 if there is no block.
  [[nodiscard]] unit max_length() const noexcept {
#ifdef RMM_DETAIL_SSE2
    unit const* const s = sizes();
    __m128i m           = sse2::splat_biased(0);  // the padding, 0, is the least
    for (std::size_t i = 0; i < n_; i += lanes_per_step) {
      __m128i const a = sse2::max_biased(load(s + i), load(s + i + 4));
      __m128i const b = sse2::max_biased(load(s + i + 8), load(s + i + 12));
      m               = sse2::max_biased(m, sse2::max_biased(a, b));
    }
    return sse2::fold_max(m);
#else
    unit m = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      m = m < length(i) ? length(i) : m;
    }
    return m;
#endif
  }

  /**
   * @brief The largest size once block @p i (< size()) has size @p value (0: once it is erased),
   * read before that change is stored: as max_length() after it, without loading the lanes that
   * the change's store has just written (such a load waits for the store to reach the cache).
   */
  [[nodiscard]] unit max_length_replacing(std::size_t i, unit value) const noexcept {
#ifdef RMM_DETAIL_SSE2
    unit const* const s = sizes();
    __m128i const at    = _mm_set1_epi32(static_cast<int>(i));
    __m128i const rep   = sse2::splat_biased(value);
    auto const get      = [&](std::size_t j) {
      return sse2::lane_replaced(load(s + j), static_cast<int>(j), at, rep);
    };
    __m128i m = sse2::splat_biased(0);  // the padding, 0, is the least
    for (std::size_t j = 0; j < n_; j += lanes_per_step) {
      __m128i const a = sse2::max_biased(get(j), get(j + 4));
      __m128i const b = sse2::max_biased(get(j + 8), get(j + 12));
      m               = sse2::max_biased(m, sse2::max_biased(a, b));
    }
    return sse2::fold_max(m);
#else
    unit m = 0;
    for (std::size_t j = 0; j < n_; ++j) {
      unit const x = j == i ? value : length(j);
      m            = m < x ? x : m;
    }
    return m;
#endif
  }

  /// @brief The index of the first block whose place is at least @p place (size() if none): the
  /// number of places below it, counted over every step (no exit that depends on the data).
  [[nodiscard]] std::size_t first_at_or_after(unit place) const noexcept {
    unit const* const p = places();
#ifdef RMM_DETAIL_SSE2
    __m128i const key = sse2::splat_biased(place);
    __m128i count     = _mm_setzero_si128();
    auto const lt     = [&](std::size_t i) { return _mm_cmplt_epi32(load(p + i), key); };
    for (std::size_t i = 0; i < n_; i += lanes_per_step) {  // a hit is -1
      count = _mm_sub_epi32(
          count,
          _mm_add_epi32(_mm_add_epi32(lt(i), lt(i + 4)), _mm_add_epi32(lt(i + 8), lt(i + 12))));
    }
    count = _mm_add_epi32(count, _mm_shuffle_epi32(count, 0x4E));
    count = _mm_add_epi32(count, _mm_shuffle_epi32(count, 0xB1));
    return static_cast<std::size_t>(_mm_cvtsi128_si32(count));
#else
    return first_at_least(p, n_, place);
#endif
  }

 private:
  static constexpr unit pad_place = std::numeric_limits<unit>::max();
  static constexpr unit bias      = 0x80000000U;

  // A value to its stored form and back (the same flip).
  static constexpr unit biased(unit v) noexcept { return v ^ bias; }

#ifdef RMM_DETAIL_SSE2
  // Four stored (already biased) values.
  static __m128i load(unit const* v) noexcept {
    return _mm_loadu_si128(reinterpret_cast<__m128i const*>(v));
  }
#endif

  // The capacity doubled (from lanes_per_step) until it holds n; the blocks moved, the new lanes
  // padding.
  void grow(std::size_t n) {
    std::size_t cap = cap_ == 0 ? lanes_per_step : cap_;
    while (cap < n) {
      cap *= 2;
    }
    auto d = std::make_unique<unit[]>(2 * cap);
    if (n_ != 0) {  // data_ may be null otherwise
      std::memcpy(d.get(), places(), n_ * sizeof(unit));
      std::memcpy(d.get() + cap, sizes(), n_ * sizeof(unit));
    }
    for (std::size_t i = n_; i < cap; ++i) {
      d[i]       = biased(pad_place);
      d[cap + i] = biased(0);
    }
    data_ = std::move(d);
    cap_  = static_cast<std::uint32_t>(cap);
  }

  // The scalar searches: the index of the first of the stored v[0 .. n) whose value is at least
  // key, n if none.
  [[maybe_unused]] static std::size_t first_at_least(unit const* v, std::size_t n, unit key) {
    std::size_t i = 0;
    while (i < n && biased(v[i]) < key) {
      ++i;
    }
    return i;
  }

  [[nodiscard]] unit* places() const noexcept { return data_.get(); }
  [[nodiscard]] unit* sizes() const noexcept { return data_.get() + cap_; }

  // places()[cap_], then sizes()[cap_], biased; cap_ a multiple of lanes_per_step
  std::unique_ptr<unit[]> data_;
  std::uint32_t n_{};
  std::uint32_t cap_{};
};

}  // namespace rmm::mr::detail::arena
