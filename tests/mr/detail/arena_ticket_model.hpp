// Reference model of the global arena's tickets, shared by the property tests
// (arena_model_tests.cpp) and the fuzz target (fuzz/arena_fuzz.cpp): which releases a grant must
// wait for; and the byte sums both check the arenas against.
#pragma once

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::test {

/// The released ranges, each with the ticket of its release, that no grant has taken yet.
class arena_ticket_model {
 public:
  using ticket = rmm::mr::detail::arena::ticket;
  using range  = rmm::mr::detail::arena::range;

  /// A release of @p r with ticket @p t.
  void release(range r, ticket t) { outstanding_.push_back({r, t}); }

  /// After a device synchronisation every release is complete: nothing to wait for.
  void clear() noexcept { outstanding_.clear(); }

  /// The sorted, distinct tickets of the outstanding releases overlapping [b, b + n); those
  /// parts are consumed (a grant waits for them once).
  std::vector<ticket> take(std::uintptr_t b, std::size_t n) {
    std::vector<ticket> out;
    std::vector<std::pair<range, ticket>> rest;
    for (auto const& [r, t] : outstanding_) {
      std::uintptr_t const lo = std::max(r.base, b);
      std::uintptr_t const hi = std::min(r.base + r.size, b + n);
      if (lo >= hi) {
        rest.push_back({r, t});
        continue;
      }
      out.push_back(t);
      if (r.base < lo) {
        rest.push_back({range{r.base, lo - r.base}, t});
      }
      if (hi < r.base + r.size) {
        rest.push_back({range{hi, r.base + r.size - hi}, t});
      }
    }
    outstanding_ = std::move(rest);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  std::vector<std::pair<range, ticket>> outstanding_;
};

/// What take_untracked did: the block's base (none if nothing fits) and whether the tickets it
/// dropped were right to drop.
struct untracked_take {
  std::optional<std::uintptr_t> base;
  bool tickets_ok;
};

/// A large block of @p n bytes as arena_state takes one while a single stream arena (ticket 1)
/// exists: global_arena::acquire_exact_untracked, with the model's tickets of that memory taken
/// too. Dropping them is right when the global arena kept none and every one in the model is the
/// only arena's own.
inline untracked_take take_untracked(rmm::mr::detail::arena::global_arena& g,
                                     arena_ticket_model& model,
                                     std::size_t n) {
  auto const base = g.acquire_exact_untracked(n);
  if (!base) {
    return {std::nullopt, true};
  }
  bool const none_kept = g.tickets_in(*base, n).empty();
  auto const dropped   = model.take(*base, n);
  bool const own       = std::all_of(
      dropped.begin(), dropped.end(), [](arena_ticket_model::ticket t) { return t == 1; });
  return {base, none_kept && own};
}

/// Sum of the sizes in a map from base address to size (the superblocks a model says an arena
/// holds).
template <class Map>
std::size_t sum_of_sizes(Map const& ranges) {
  std::size_t bytes = 0;
  for (auto const& [base, size] : ranges) {
    bytes += size;
  }
  return bytes;
}

/// The bytes of a model's live blocks (values with `size` and `large`): small blocks (carved
/// from stream arenas) first, large ones (taken exactly from the global arena) second.
template <class Map>
std::pair<std::size_t, std::size_t> live_bytes(Map const& live) {
  std::size_t small = 0;
  std::size_t large = 0;
  for (auto const& [base, blk] : live) {
    (blk.large ? large : small) += blk.size;
  }
  return {small, large};
}

}  // namespace rmm::test
