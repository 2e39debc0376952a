/**
 * @file fixed_size_free_list_model.hpp
 * @brief The reference for fixed_size_free_list::release_free_chunks over the naive models of the
 * property test (fixed_size_free_list_tests.cpp) and the fuzz target
 * (fuzz/fixed_size_free_list_fuzz.cpp).
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

namespace rmm::test {

/**
 * @brief Drops every chunk of @p chunks (base -> a value with `.blocks`) whose blocks of
 * @p block_size bytes are all in @p free, with those blocks, from @p free and from every stack of
 * @p stacks (which keep their order).
 * @return The chunks dropped as (base, bytes), in address order.
 */
template <class Chunks, class Stacks>
std::vector<std::pair<std::uintptr_t, std::size_t>> release_free_chunks(
    Chunks& chunks, std::set<std::uintptr_t>& free, Stacks& stacks, std::size_t block_size) {
  std::vector<std::pair<std::uintptr_t, std::size_t>> out;
  for (auto it = chunks.begin(); it != chunks.end();) {
    std::uintptr_t const b = it->first;
    std::uintptr_t const e = b + it->second.blocks * block_size;
    auto const lo          = free.lower_bound(b);
    auto const hi          = free.lower_bound(e);
    if (static_cast<std::size_t>(std::distance(lo, hi)) != it->second.blocks) {
      ++it;
      continue;
    }
    out.emplace_back(b, e - b);
    free.erase(lo, hi);
    for (auto& st : stacks) {
      st.erase(std::remove_if(st.begin(), st.end(), [&](auto p) { return b <= p && p < e; }),
               st.end());
    }
    it = chunks.erase(it);
  }
  return out;
}

}  // namespace rmm::test
