/**
 * @file address_ordered_free_list_impl.hpp
 * @brief Members of address_ordered_free_list defined out of line: insert_within(), the argument
 * checks (misuse throws std::invalid_argument naming the values, before anything changes) and the
 * invariant checks behind validate() (std::logic_error). Included at the end of
 * address_ordered_free_list.hpp; including it alone includes that header.
 */
#pragma once

#include <rmm/mr/detail/algorithms/address_ordered_free_list.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace rmm::mr::detail {

inline void address_ordered_free_list::insert_within(std::uintptr_t ptr,
                                                     std::size_t size,
                                                     std::uintptr_t lo,
                                                     std::uintptr_t hi) {
  check_range("insert_within", ptr, size);
  std::uintptr_t const end = ptr + size;
  if (ptr < lo || end > hi) {
    throw_range("insert_within of",
                ptr,
                size,
                "lies outside its region [" + hex(lo) + ", " + hex(hi) + ")");
  }
  constexpr int max_path = 96;  // far beyond the expected depth of any list that fits memory
  index_t path[max_path];
  int depth     = 0;
  int dp        = -1;  // depths of prev and next on the path
  int dn        = -1;
  index_t prev  = nil;  // greatest base < ptr, and least base >= ptr
  index_t next  = nil;
  bool too_deep = false;
  for (index_t t = root_; t != nil; ++depth) {
    if (depth == max_path) {
      too_deep = true;
      break;
    }
    path[depth] = t;
    if (nodes_[t].base < ptr) {
      prev = t;
      dp   = depth;
      t    = nodes_[t].right;
    } else {
      next = t;
      dn   = depth;
      t    = nodes_[t].left;
    }
  }
  if (too_deep) {  // pathological shape: find the neighbours again without a path
    prev = ptr == 0 ? nil : floor_node(ptr - 1);
    next = ceil_node(ptr);
  }
  if ((prev != nil && end_of(prev) > ptr) || (next != nil && nodes_[next].base < end)) {
    throw_range("insert_within of", ptr, size, "overlaps a free block (double free?)");
  }
  bool const join_prev = prev != nil && ptr != lo && end_of(prev) == ptr;
  bool const join_next = next != nil && end != hi && nodes_[next].base == end;
  if (too_deep || (!join_prev && !join_next)) {
    join(ptr, size, join_prev ? prev : nil, join_next ? next : nil);
  } else if (join_prev && join_next) {
    nodes_[prev].size += size + nodes_[next].size;
    for (int i = dp; i > dn; --i) {  // prev below next: its path up to next's left child
      pull(path[i]);
    }
    index_t const joined = merge(nodes_[next].left, nodes_[next].right);
    if (dn == 0) {
      root_ = joined;
    } else if (nodes_[path[dn - 1]].left == next) {
      nodes_[path[dn - 1]].left = joined;
    } else {
      nodes_[path[dn - 1]].right = joined;
    }
    release(next);
    --count_;
    pull_path(path, dn - 1);
  } else if (join_prev) {
    nodes_[prev].size += size;
    pull_path(path, dp);
  } else {
    nodes_[next].base = ptr;
    nodes_[next].size += size;
    pull_path(path, dn);
  }
  free_bytes_ += size;
}

inline void address_ordered_free_list::check_size(char const* what, std::size_t size) const {
  if (size == 0 || (size & (granularity_ - 1)) != 0) {
    throw std::invalid_argument(std::string{"address_ordered_free_list: "} + what + " size " +
                                std::to_string(size) + " is not a non-zero multiple of " +
                                std::to_string(granularity_));
  }
}

inline void address_ordered_free_list::check_aligned(char const* what, std::uintptr_t addr) const {
  if ((addr & (granularity_ - 1)) != 0) {
    throw std::invalid_argument(std::string{"address_ordered_free_list: "} + what + " address " +
                                hex(addr) + " is not aligned to " + std::to_string(granularity_));
  }
}

inline void address_ordered_free_list::check_range(char const* what,
                                                   std::uintptr_t ptr,
                                                   std::size_t size) const {
  check_size(what, size);
  check_aligned(what, ptr);
  if (size > std::numeric_limits<std::uintptr_t>::max() - ptr) {
    throw_range(what, ptr, size, "wraps around the address space");
  }
}

[[noreturn]] inline void address_ordered_free_list::throw_range(char const* what,
                                                                std::uintptr_t ptr,
                                                                std::size_t size,
                                                                std::string const& why) {
  throw std::invalid_argument(std::string{"address_ordered_free_list: "} + what + " [" + hex(ptr) +
                              ", +" + std::to_string(size) + ") " + why);
}

template <typename IsEdge>
void address_ordered_free_list::validate(IsEdge&& is_edge) const {
  walk_state st;
  validate_subtree(root_, std::numeric_limits<std::uint32_t>::max(), st);
  expect(st.count == count_, "node count is off");
  expect(st.bytes == free_bytes_, "free byte count is off");
  std::size_t spare = 0;
  for (index_t i = spare_; i != nil; i = nodes_[i].left) {
    ++spare;
  }
  expect(spare + count_ == nodes_.size(), "node pool accounting is off");
  for (auto const& [addr, refs] : boundaries_) {
    expect(refs != 0 && (addr & (granularity_ - 1)) == 0, "bad boundary", addr);
  }
  // Coalescing: blocks meet only at a boundary or at an edge of an insert_within region.
  bool any                = false;
  std::uintptr_t prev_end = 0;
  for_each([&](std::uintptr_t b, std::size_t s) {
    expect(!any || prev_end != b || is_boundary(b) || is_edge(b), "block is not coalesced", b);
    any      = true;
    prev_end = b + s;
  });
}

// Returns the subtree's largest size; checks order, heap, maxima and boundaries in-order.
inline std::size_t address_ordered_free_list::validate_subtree(index_t t,
                                                               std::uint32_t max_priority,
                                                               walk_state& st) const {
  if (t == nil) {
    return 0;
  }
  node const& n = nodes_[t];
  expect(n.priority <= max_priority, "heap order broken", n.base);
  std::size_t best = validate_subtree(n.left, n.priority, st);
  validate_block(n, st);
  std::size_t const right = validate_subtree(n.right, n.priority, st);
  best                    = std::max({best, right, n.size});
  expect(best == n.max_size, "subtree maximum wrong", n.base);
  return best;
}

inline void address_ordered_free_list::validate_block(node const& n, walk_state& st) const {
  expect(n.size != 0 && ((n.base | n.size) & (granularity_ - 1)) == 0, "block misaligned", n.base);
  expect(n.size <= std::numeric_limits<std::uintptr_t>::max() - n.base, "block wraps", n.base);
  expect(!st.any || st.prev_end <= n.base, "block overlaps or is out of order", n.base);
  auto const inner = boundaries_.upper_bound(n.base);
  expect(inner == boundaries_.end() || inner->first >= n.base + n.size,
         "block crosses a boundary",
         n.base);
  st.any      = true;
  st.prev_end = n.base + n.size;
  ++st.count;
  st.bytes += n.size;
}

}  // namespace rmm::mr::detail
