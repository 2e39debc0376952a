/**
 * @file block_array_fuzz.cpp
 * @brief libFuzzer target: decodes the input into inserts, erases, changes, clears, releases and
 * reserves on a block_array (chunk_stream_arena's free blocks of one superblock), applies the same
 * ones to a sorted std::vector of {place, size}, and aborts on any disagreement: the blocks, the
 * largest size (also with one block's size replaced, max_length_replacing), and first_fit and
 * first_at_or_after for probes from the input (32-bit values, so both sides of 2^31, where the
 * SSE2 searches bias their compares).
 *
 * Input: each operation is an opcode byte and its operands; a missing byte reads as zero, so every
 * input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/block_array.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace {

using rmm::fuzz::reader;
using rmm::mr::detail::arena::block_array;
using unit  = block_array::unit;
using model = std::vector<std::pair<unit, unit>>;  // {place, size}, sorted by place, distinct

unit u32(reader& in) { return static_cast<unit>(in.u16() | (in.u16() << 16U)); }

std::size_t at_or_after(model const& m, unit place) {
  return static_cast<std::size_t>(
      std::lower_bound(
          m.begin(), m.end(), place, [](auto const& b, unit p) { return b.first < p; }) -
      m.begin());
}

void check(block_array const& a, model const& m, reader& in) {
  FUZZ_CHECK(a.size() == m.size() && a.capacity() >= a.size() && a.capacity() % 4 == 0 &&
             a.padded());
  unit mx = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    FUZZ_CHECK(a.place(i) == m[i].first && a.length(i) == m[i].second);
    mx = std::max(mx, m[i].second);
  }
  FUZZ_CHECK(a.max_length() == mx);
  unit const p = u32(in);
  FUZZ_CHECK(a.first_at_or_after(p) == at_or_after(m, p));
  unit const u = std::max<unit>(1, u32(in));
  auto const fit =
      std::find_if(m.begin(), m.end(), [u](auto const& b) { return b.second >= u; }) - m.begin();
  FUZZ_CHECK(a.first_fit(u) == static_cast<std::size_t>(fit));
  if (!m.empty()) {  // one block's size replaced, as a carve reads it before its store
    std::size_t const i = in.u16() % m.size();
    unit const v        = u32(in);
    unit r              = v;
    for (std::size_t j = 0; j < m.size(); ++j) {
      r = j == i ? r : std::max(r, m[j].second);
    }
    FUZZ_CHECK(a.max_length_replacing(i, v) == r);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  block_array a;
  model m;
  while (!in.done()) {
    switch (in.byte() % 8U) {
      case 0:
      case 1:
      case 2: {  // insert at a free place
        unit const place = u32(in);
        unit const len   = u32(in);
        auto const at    = at_or_after(m, place);
        if (m.size() < 1024 && (at == m.size() || m[at].first != place)) {
          a.reserve(a.size() + 1);
          a.insert(at, place, len);
          m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), {place, len});
        }
        break;
      }
      case 3:
      case 4:
        if (!m.empty()) {
          auto const i = in.u16() % m.size();
          a.erase(i);
          m.erase(m.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 5:
        if (!m.empty()) {  // a new size, the place unchanged (the order stays)
          auto const i = in.u16() % m.size();
          m[i].second  = u32(in);
          a.set(i, m[i].first, m[i].second);
        }
        break;
      case 6:  // clear (the storage kept) or release (freed), as the operand's low bit says
        if ((in.byte() & 1U) != 0) {
          a.release();
          FUZZ_CHECK(a.capacity() == 0);
        } else {
          a.clear();
        }
        m.clear();
        break;
      default:
        a.reserve(a.size() + in.byte());
        break;
    }
    check(a, m, in);
  }
  return 0;
}
