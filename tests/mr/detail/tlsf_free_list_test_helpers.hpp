// Shared by the tlsf_free_list test files: the list's blocks as seen from outside.
#pragma once

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace rmm::test::tlsf {

using rmm::mr::detail::tlsf_free_list;
using tag_t = tlsf_free_list::tag_t;
using range = std::pair<std::uintptr_t, std::size_t>;

// A block as seen from outside: (base, size, free, tag of a free block).
using block_view = std::tuple<std::uintptr_t, std::size_t, bool, tag_t>;

inline std::vector<block_view> blocks_of(tlsf_free_list const& list) {
  std::vector<block_view> out;
  list.for_each_block([&out](std::uintptr_t b, std::size_t s, bool f, std::size_t, tag_t t) {
    out.emplace_back(b, s, f, f ? t : 0);
  });
  return out;
}

// The entry of `live` (a vector of records with `ptr` and `size`) for the block at ptr, or end().
template <class Live>
typename std::vector<Live>::iterator find_live(std::vector<Live>& live, std::uintptr_t ptr) {
  return std::find_if(live.begin(), live.end(), [ptr](Live const& l) { return l.ptr == ptr; });
}

// Mirrors join_allocated(first, second) in `live`: the entry of second leaves it and its size
// joins first's, whose entry is returned. Both must be in `live`.
template <class Live>
Live& join_live(std::vector<Live>& live, std::uintptr_t first, std::uintptr_t second) {
  auto const gone         = find_live(live, second);
  std::size_t const extra = gone->size;
  *gone                   = live.back();
  live.pop_back();
  Live& joined = *find_live(live, first);
  joined.size += extra;
  return joined;
}

}  // namespace rmm::test::tlsf
