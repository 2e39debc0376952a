// Reference model of the global arena's tickets, shared by the property tests
// (arena_tests.cpp) and the fuzz target (fuzz/arena_fuzz.cpp): which releases a grant must wait
// for.
#pragma once

#include <rmm/mr/detail/algorithms/arena.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

}  // namespace rmm::test
