// Part of tlsf_free_list_fuzz.cpp: the state one run drives (the list, the tests' naive reference
// model of it, the blocks the run holds or has freed, the bounds on its set of tags) and check(),
// the comparison of list and model that runs after every operation.
#pragma once

#include "../tests/mr/detail/tlsf_free_list_reference_model.hpp"
#include "../tests/mr/detail/tlsf_free_list_test_helpers.hpp"
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/tlsf_free_list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace rmm::fuzz::tlsf {

using rmm::mr::detail::tlsf_free_list;
using rmm::test::tlsf::block_view;
using rmm::test::tlsf::reference_model;
using rmm::test::tlsf::tag_t;

// The tags the input picks from: few, so that blocks of one tag often meet as neighbours, and
// dense from 0, as the structure expects (each tag up to the highest costs an index).
constexpr tag_t fuzz_tags = 4;
// Queried too, though never passed to an operation: must read as empty (0), whether the list
// has an index for them or not.
constexpr std::array<tag_t, 3> unused_tags = {
    fuzz_tags, fuzz_tags + 1, std::numeric_limits<tag_t>::max()};

struct live {
  std::uintptr_t ptr;
  std::size_t size;
  bool marked{};  // allocate_marked; join_allocated keeps the first block's
};

class state {
 public:
  state(std::size_t g,
        tlsf_free_list::keyed_blocks keyed,
        rmm::mr::detail::address_map::erase_mode erase)
      : g_{g}, list_{g, erase, keyed} {}

 protected:
  static tag_t read_tag(reader& in) { return static_cast<tag_t>(in.byte() % fuzz_tags); }

  // A rejected call (deallocate, extend_region) leaves the list unchanged (check() compares the
  // rest with the model), including the set of tags: a bad call with a new tag must not create
  // its index.
  template <typename F>
  void expect_invalid_keeps_tags(F&& f) {
    std::size_t const tags = list_.num_tags();
    expect_invalid(std::forward<F>(f));
    FUZZ_CHECK(list_.num_tags() == tags);
  }

  // After every operation: validate(), every block, the totals, every region and every tag (the
  // fuzz tags and the unused ones) against the model.
  void check() {
    rmm::fuzz::validated([&] { list_.validate(); });
    FUZZ_CHECK(rmm::test::tlsf::blocks_of(list_) == model_.blocks());
    FUZZ_CHECK(list_.largest_free_block() == model_.largest());
    std::size_t const free_bytes = model_.bytes(true);
    std::size_t const used       = model_.bytes(false);
    FUZZ_CHECK(list_.free_bytes() == free_bytes);
    FUZZ_CHECK(list_.allocated_bytes() == used);
    FUZZ_CHECK(list_.total_bytes() == free_bytes + used);
    FUZZ_CHECK(list_.num_free_blocks() == model_.free_blocks().size());
    FUZZ_CHECK(list_.num_regions() == model_.regions().size());
    for (auto const& [id, r] : model_.regions()) {
      FUZZ_CHECK(list_.region_base(id) == r.first);
      FUZZ_CHECK(list_.region_size(id) == r.second);
      FUZZ_CHECK(list_.trailing_free_block(id) == model_.trailing_free_block(id));
    }
    auto const stats = model_.per_tag<fuzz_tags>();
    for (tag_t t = 0; t < fuzz_tags; ++t) {
      FUZZ_CHECK(list_.free_bytes(t) == stats.at(t).bytes);
      FUZZ_CHECK(list_.num_free_blocks(t) == stats.at(t).blocks);
      FUZZ_CHECK(list_.largest_free_block(t) == stats.at(t).largest);
    }
    for (tag_t const t : unused_tags) {
      FUZZ_CHECK(list_.free_bytes(t) == 0);
      FUZZ_CHECK(list_.num_free_blocks(t) == 0);
      FUZZ_CHECK(list_.largest_free_block(t) == 0);
    }
    tags_.check(list_.num_tags());  // never shrinks (clear() is not driven)
  }

  std::size_t g_;
  tlsf_free_list list_;
  reference_model model_;
  std::vector<live> live_;
  std::vector<live> freed_;
  std::uintptr_t next_{0x10000};
  rmm::fuzz::tag_count_bounds tags_;
};

}  // namespace rmm::fuzz::tlsf
