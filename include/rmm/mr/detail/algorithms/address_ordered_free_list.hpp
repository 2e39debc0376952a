/**
 * @file address_ordered_free_list.hpp
 * @brief A coalescing set of free address ranges with address-ordered first fit in O(log n).
 * It backs the arena allocator (superblocks in the global arena, blocks within an arena).
 *
 * The ranges are GPU memory, which host code must never touch: every free block is a node of a
 * host-side treap keyed by address and augmented with the largest block size in each subtree.
 * See address_ordered_free_list.md for the design, complexities and limits.
 */
#pragma once

#include <rmm/mr/detail/algorithms/free_list_diagnostics.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

/**
 * @brief Free address ranges kept fully coalesced, with "lowest address that fits" allocation.
 *
 * Adjacent free ranges are merged unless a *boundary* separates them: a boundary is an address
 * registered with `add_boundary()` (e.g. the edges of upstream allocations or of superblocks)
 * across which ranges must never be merged, so that each piece can be handed back whole.
 * Boundaries are reference counted, so two neighbouring pieces may both register their shared
 * edge. No free block ever extends across a boundary.
 *
 * All addresses and sizes are multiples of the granularity given at construction.
 *
 * Not thread-safe: every member, const or not, must be serialised by the caller.
 */
class address_ordered_free_list {
 public:
  /**
   * @brief Creates an empty list.
   * @param granularity Unit of every address and size handled; a power of two (1 disables the
   * check).
   * @param seed Seed of the treap's node priorities; any value works, a fixed one makes the
   * tree shape (not the results) reproducible.
   * @throws std::invalid_argument if @p granularity is not a power of two.
   */
  explicit address_ordered_free_list(std::size_t granularity = 1,
                                     std::uint64_t seed      = 0x2545f4914f6cdd1dULL)
      : granularity_{granularity}, rng_state_{seed} {
    if (granularity == 0 || (granularity & (granularity - 1)) != 0) {
      throw std::invalid_argument("address_ordered_free_list: granularity " +
                                  std::to_string(granularity) + " is not a power of two");
    }
  }

  /**
   * @brief Adds [ptr, ptr + size) as free, merging it with the free blocks that end at @p ptr or
   * start at `ptr + size` unless a boundary lies at that address.
   * @throws std::invalid_argument naming the range if @p size is zero, @p ptr or @p size is not a
   * multiple of the granularity, the range wraps around, overlaps a free block (e.g. a double
   * free) or has a boundary strictly inside it. The list is then unchanged.
   * @throws std::bad_alloc (or std::length_error) if a node cannot be allocated; the list is then
   * unchanged.
   */
  void insert(std::uintptr_t ptr, std::size_t size) {
    check_range("insert", ptr, size);
    std::uintptr_t const end = ptr + size;
    auto const inner         = boundaries_.upper_bound(ptr);
    if (inner != boundaries_.end() && inner->first < end) {
      throw_range("insert of", ptr, size, "crosses the boundary at " + hex(inner->first));
    }
    index_t const prev = ptr == 0 ? nil : floor_node(ptr - 1);
    index_t const next = ceil_node(ptr);
    if ((prev != nil && end_of(prev) > ptr) || (next != nil && nodes_[next].base < end)) {
      throw_range("insert of", ptr, size, "overlaps a free block (double free?)");
    }
    bool const join_prev = prev != nil && end_of(prev) == ptr && !is_boundary(ptr);
    bool const join_next = next != nil && nodes_[next].base == end && !is_boundary(end);
    join(ptr, size, join_prev ? prev : nil, join_next ? next : nil);
    free_bytes_ += size;
  }

  /**
   * @brief insert() for a caller that knows a region [lo, hi) holding [ptr, ptr + size) with no
   * boundary strictly inside it (e.g. one superblock): the block merges with the free blocks that
   * end at @p ptr or start at `ptr + size` unless they meet at @p lo or @p hi; the boundaries are
   * not consulted. One descent finds both neighbours; the merged node is rewritten in place.
   * O(log n) expected, without insert()'s boundary lookups.
   *
   * A list whose regions are not separated by boundaries keeps blocks that meet at a region edge
   * apart: validate it with validate(is_edge).
   * @throws std::invalid_argument naming the range if the arguments fail the checks of insert(),
   * the range is not inside [lo, hi), or it overlaps a free block; the list is then unchanged.
   * @throws std::bad_alloc (or std::length_error) if a node cannot be allocated; the list is then
   * unchanged.
   */
  void insert_within(std::uintptr_t ptr, std::size_t size, std::uintptr_t lo, std::uintptr_t hi);

  /**
   * @brief Removes the first @p size bytes of the lowest-addressed free block holding at least
   * @p size bytes and returns their address; the rest of that block stays free.
   * @return The address, or std::nullopt if no free block is large enough.
   * @throws std::invalid_argument if @p size is zero or not a multiple of the granularity.
   * Never throws std::bad_alloc.
   */
  std::optional<std::uintptr_t> allocate_first_fit(std::size_t size) {
    check_size("allocate_first_fit", size);
    if (root_ == nil || nodes_[root_].max_size < size) {
      return std::nullopt;
    }
    std::uintptr_t out = 0;
    root_              = carve(root_, size, out);
    free_bytes_ -= size;
    return out;
  }

  /**
   * @brief Removes [ptr, ptr + size), which must lie inside one free block, splitting that block
   * into up to two pieces (e.g. to take a whole superblock back, or to claim a fixed address).
   * @throws std::invalid_argument naming the range if it is not entirely free, or if the
   * arguments fail the checks of `insert`. @throws std::bad_alloc if a node cannot be allocated.
   * In both cases the list is unchanged.
   */
  void remove_range(std::uintptr_t ptr, std::size_t size) {
    check_range("remove_range", ptr, size);
    if (!contains_range(ptr, size)) {
      throw_range("remove_range of", ptr, size, "is not entirely free");
    }
    node const n              = nodes_[floor_node(ptr)];
    std::uintptr_t const end  = ptr + size;
    std::uintptr_t const nend = n.base + n.size;
    if (ptr == n.base && end == nend) {
      erase(n.base);
    } else if (ptr == n.base) {
      resize(n.base, end, nend - end);
    } else if (end == nend) {
      resize(n.base, n.base, ptr - n.base);
    } else {
      add_node(end, nend - end);  // first: it is the only step that can throw
      resize(n.base, n.base, ptr - n.base);
    }
    free_bytes_ -= size;
  }

  /// @brief True if [ptr, ptr + size) lies inside one free block (false for @p size 0).
  [[nodiscard]] bool contains_range(std::uintptr_t ptr, std::size_t size) const noexcept {
    index_t const t = floor_node(ptr);
    return size != 0 && t != nil && end_of(t) > ptr && size <= end_of(t) - ptr;
  }

  /**
   * @brief Registers a boundary at @p addr (or adds a reference to an existing one). A free block
   * that extends across @p addr is split there.
   * @throws std::invalid_argument if @p addr is not a multiple of the granularity.
   * @throws std::bad_alloc if bookkeeping cannot grow; the list is then unchanged.
   */
  void add_boundary(std::uintptr_t addr) {
    check_aligned("add_boundary", addr);
    auto const [it, inserted] = boundaries_.try_emplace(addr, 0);
    if (inserted) {
      index_t const t = addr == 0 ? nil : floor_node(addr - 1);
      if (t != nil && end_of(t) > addr) {
        std::uintptr_t const base = nodes_[t].base;
        try {
          add_node(addr, end_of(t) - addr);
        } catch (...) {
          boundaries_.erase(it);
          throw;
        }
        resize(base, base, addr - base);
      }
    }
    ++it->second;
  }

  /**
   * @brief Drops one reference to the boundary at @p addr; when the last goes, the free blocks
   * that meet at @p addr (if both exist) are merged.
   * @throws std::invalid_argument naming @p addr if no boundary is registered there.
   */
  void remove_boundary(std::uintptr_t addr) {
    auto const it = boundaries_.find(addr);
    if (it == boundaries_.end()) {
      throw std::invalid_argument("address_ordered_free_list: remove_boundary of " + hex(addr) +
                                  ", which is not a boundary");
    }
    if (--it->second != 0) {
      return;
    }
    boundaries_.erase(it);
    index_t const prev = addr == 0 ? nil : floor_node(addr - 1);
    index_t const next = ceil_node(addr);
    if (prev != nil && next != nil && end_of(prev) == addr && nodes_[next].base == addr) {
      std::size_t const grown = nodes_[prev].size + nodes_[next].size;
      erase(addr);
      resize(nodes_[prev].base, nodes_[prev].base, grown);
    }
  }

  /// @brief True if a boundary is registered at @p addr.
  [[nodiscard]] bool is_boundary(std::uintptr_t addr) const noexcept {
    return boundaries_.find(addr) != boundaries_.end();
  }
  /// @brief Number of distinct boundary addresses.
  [[nodiscard]] std::size_t num_boundaries() const noexcept { return boundaries_.size(); }
  /// @brief The granularity given at construction.
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  /// @brief Sum of the sizes of the free blocks.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_; }
  /// @brief Size of the largest free block (0 if none); O(1), read from the root.
  [[nodiscard]] std::size_t largest_free_block() const noexcept {
    return root_ == nil ? 0 : nodes_[root_].max_size;
  }
  /// @brief Number of free blocks.
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  /// @brief True if there is no free block.
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

  /// @brief Forgets every free block and every boundary.
  void clear() noexcept {
    nodes_.clear();
    boundaries_.clear();
    root_       = nil;
    spare_      = nil;
    count_      = 0;
    free_bytes_ = 0;
  }

  /**
   * @brief Calls `f(ptr, size)` for each free block in increasing address order. O(n); for
   * logging and tests. @p f must not modify this list.
   */
  template <typename F>
  void for_each(F&& f) const {
    visit(root_, f);
  }

  /// @brief The free blocks as (ptr, size) in increasing address order. O(n).
  [[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> blocks() const {
    std::vector<std::pair<std::uintptr_t, std::size_t>> out;
    out.reserve(count_);
    for_each([&out](std::uintptr_t p, std::size_t s) { out.emplace_back(p, s); });
    return out;
  }

  /**
   * @brief Checks every invariant (tree order, heap order, subtree maxima, coalescing, boundary
   * rules, counters); O(n). For tests.
   * @throws std::logic_error describing the first violation found.
   */
  void validate() const {
    validate([](std::uintptr_t) { return false; });
  }

  /**
   * @brief As validate(), for a list filled (also) through insert_within: two free blocks may
   * also meet uncoalesced at an address where `is_edge(address)` is true (the region edges the
   * caller passed as lo and hi). O(n) calls of @p is_edge at most.
   * @throws std::logic_error describing the first violation found.
   */
  template <typename IsEdge>
  void validate(IsEdge&& is_edge) const;

 private:
  using index_t                = std::uint32_t;
  static constexpr index_t nil = std::numeric_limits<index_t>::max();

  struct node {
    std::uintptr_t base{};
    std::size_t size{};
    std::size_t max_size{};  // largest size in this subtree: steers first fit
    index_t left{nil};       // also chains spare nodes
    index_t right{nil};
    std::uint32_t priority{};  // max-heap ordered: keeps the expected depth O(log n)
  };

  struct walk_state {
    std::size_t count{};
    std::size_t bytes{};
    bool any{false};
    std::uintptr_t prev_end{};
  };

  [[nodiscard]] std::uintptr_t end_of(index_t t) const noexcept {
    return nodes_[t].base + nodes_[t].size;
  }

  std::uint32_t next_priority() noexcept {
    // splitmix64: cheap, and good enough that adversarial address patterns cannot skew the tree.
    std::uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
    z               = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z               = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return static_cast<std::uint32_t>((z ^ (z >> 31U)) >> 32U);
  }

  void pull(index_t t) noexcept {
    node& n    = nodes_[t];
    n.max_size = n.size;
    if (n.left != nil && nodes_[n.left].max_size > n.max_size) {
      n.max_size = nodes_[n.left].max_size;
    }
    if (n.right != nil && nodes_[n.right].max_size > n.max_size) {
      n.max_size = nodes_[n.right].max_size;
    }
  }

  // Adds [ptr, ptr + size) merged with prev (ending at ptr) and next (starting at its end), each
  // nil if not to be merged. Only the new node (neither merged) can throw.
  void join(std::uintptr_t ptr, std::size_t size, index_t prev, index_t next) {
    if (prev != nil && next != nil) {
      std::size_t const grown = nodes_[prev].size + size + nodes_[next].size;
      erase(ptr + size);
      resize(nodes_[prev].base, nodes_[prev].base, grown);
    } else if (prev != nil) {
      resize(nodes_[prev].base, nodes_[prev].base, nodes_[prev].size + size);
    } else if (next != nil) {
      resize(ptr + size, ptr, size + nodes_[next].size);
    } else {
      add_node(ptr, size);
    }
  }

  // Recomputes the maxima of path[top], ..., path[0] (bottom up).
  void pull_path(index_t const* path, int top) noexcept {
    for (int i = top; i >= 0; --i) {
      pull(path[i]);
    }
  }

  // Node with the greatest base <= addr.
  [[nodiscard]] index_t floor_node(std::uintptr_t addr) const noexcept {
    index_t best = nil;
    for (index_t t = root_; t != nil;) {
      if (nodes_[t].base <= addr) {
        best = t;
        t    = nodes_[t].right;
      } else {
        t = nodes_[t].left;
      }
    }
    return best;
  }

  // Node with the smallest base >= addr.
  [[nodiscard]] index_t ceil_node(std::uintptr_t addr) const noexcept {
    index_t best = nil;
    for (index_t t = root_; t != nil;) {
      if (nodes_[t].base >= addr) {
        best = t;
        t    = nodes_[t].left;
      } else {
        t = nodes_[t].right;
      }
    }
    return best;
  }

  // Splits t into keys < key (l) and keys >= key (r).
  void split(index_t t, std::uintptr_t key, index_t& l, index_t& r) noexcept {
    if (t == nil) {
      l = r = nil;
      return;
    }
    if (nodes_[t].base < key) {
      index_t right = nil;
      split(nodes_[t].right, key, right, r);
      nodes_[t].right = right;
      l               = t;
    } else {
      index_t left = nil;
      split(nodes_[t].left, key, l, left);
      nodes_[t].left = left;
      r              = t;
    }
    pull(t);
  }

  // Joins two treaps whose keys are all ordered l < r.
  index_t merge(index_t l, index_t r) noexcept {
    if (l == nil) {
      return r;
    }
    if (r == nil) {
      return l;
    }
    if (nodes_[l].priority >= nodes_[r].priority) {
      index_t const right = merge(nodes_[l].right, r);
      nodes_[l].right     = right;
      pull(l);
      return l;
    }
    index_t const left = merge(l, nodes_[r].left);
    nodes_[r].left     = left;
    pull(r);
    return r;
  }

  index_t insert_node(index_t t, index_t n) noexcept {
    if (t == nil) {
      return n;
    }
    if (nodes_[n].priority > nodes_[t].priority) {
      index_t l = nil;
      index_t r = nil;
      split(t, nodes_[n].base, l, r);
      nodes_[n].left  = l;
      nodes_[n].right = r;
      pull(n);
      return n;
    }
    if (nodes_[n].base < nodes_[t].base) {
      index_t const left = insert_node(nodes_[t].left, n);
      nodes_[t].left     = left;
    } else {
      index_t const right = insert_node(nodes_[t].right, n);
      nodes_[t].right     = right;
    }
    pull(t);
    return t;
  }

  index_t erase_from(index_t t, std::uintptr_t key) noexcept {
    if (nodes_[t].base == key) {
      index_t const joined = merge(nodes_[t].left, nodes_[t].right);
      release(t);
      return joined;
    }
    if (key < nodes_[t].base) {
      index_t const left = erase_from(nodes_[t].left, key);
      nodes_[t].left     = left;
    } else {
      index_t const right = erase_from(nodes_[t].right, key);
      nodes_[t].right     = right;
    }
    pull(t);
    return t;
  }

  void erase(std::uintptr_t key) noexcept {
    root_ = erase_from(root_, key);
    --count_;
  }

  // Rewrites the node keyed `key`; the new base must keep the address order.
  void resize(std::uintptr_t key, std::uintptr_t new_base, std::size_t new_size) noexcept {
    resize_in(root_, key, new_base, new_size);
  }

  void resize_in(index_t t,
                 std::uintptr_t key,
                 std::uintptr_t new_base,
                 std::size_t new_size) noexcept {
    node& n = nodes_[t];
    if (key < n.base) {
      resize_in(n.left, key, new_base, new_size);
    } else if (key > n.base) {
      resize_in(n.right, key, new_base, new_size);
    } else {
      n.base = new_base;
      n.size = new_size;
    }
    pull(t);
  }

  // Takes `size` bytes from the front of the lowest-addressed fitting block in subtree t.
  index_t carve(index_t t, std::size_t size, std::uintptr_t& out) noexcept {
    node& n = nodes_[t];
    if (n.left != nil && nodes_[n.left].max_size >= size) {
      index_t const left = carve(n.left, size, out);
      n.left             = left;
    } else if (n.size >= size) {
      out = n.base;
      if (n.size == size) {
        index_t const joined = merge(n.left, n.right);
        release(t);
        --count_;
        return joined;
      }
      n.base += size;
      n.size -= size;
    } else {
      index_t const right = carve(n.right, size, out);
      n.right             = right;
    }
    pull(t);
    return t;
  }

  void add_node(std::uintptr_t base, std::size_t size) {
    index_t idx = spare_;
    if (idx != nil) {
      spare_ = nodes_[idx].left;
    } else {
      if (nodes_.size() >= nil) {
        throw std::length_error("address_ordered_free_list: too many free blocks");
      }
      nodes_.emplace_back();
      idx = static_cast<index_t>(nodes_.size() - 1);
    }
    nodes_[idx] = node{base, size, size, nil, nil, next_priority()};
    root_       = insert_node(root_, idx);
    ++count_;
  }

  void release(index_t t) noexcept {
    nodes_[t]      = node{};
    nodes_[t].left = spare_;
    spare_         = t;
  }

  template <typename F>
  void visit(index_t t, F& f) const {
    if (t == nil) {
      return;
    }
    visit(nodes_[t].left, f);
    f(nodes_[t].base, nodes_[t].size);
    visit(nodes_[t].right, f);
  }

  // Invariant checks behind validate() (address_ordered_free_list_impl.hpp).
  std::size_t validate_subtree(index_t t, std::uint32_t max_priority, walk_state& st) const;
  void validate_block(node const& n, walk_state& st) const;

  // Argument checks (address_ordered_free_list_impl.hpp): each throws std::invalid_argument
  // naming the values, before anything changes.
  void check_size(char const* what, std::size_t size) const;
  void check_aligned(char const* what, std::uintptr_t addr) const;
  void check_range(char const* what, std::uintptr_t ptr, std::size_t size) const;
  [[noreturn]] static void throw_range(char const* what,
                                       std::uintptr_t ptr,
                                       std::size_t size,
                                       std::string const& why);

  static std::string hex(std::uintptr_t v) { return format_hex(v); }

  static void expect(bool ok, char const* what) {
    expect_invariant(ok, "address_ordered_free_list", what);
  }
  static void expect(bool ok, char const* what, std::uintptr_t at) {
    expect_invariant(ok, "address_ordered_free_list", what, at);
  }

  std::size_t granularity_;
  std::uint64_t rng_state_;
  std::vector<node> nodes_;
  index_t root_{nil};
  index_t spare_{nil};
  std::size_t count_{};
  std::size_t free_bytes_{};
  std::map<std::uintptr_t, std::size_t> boundaries_;  // address -> reference count
};

}  // namespace rmm::mr::detail

#include <rmm/mr/detail/algorithms/address_ordered_free_list_impl.hpp>
