/**
 * @file address_map_fuzz.cpp
 * @brief libFuzzer target: decodes the input into inserts, erases and finds on an address_map
 * (the free lists' block-address index) in the erase mode the input picks, applies the same ones to
 * a std::unordered_map, and aborts on any disagreement or broken invariant (validate: every key
 * reachable from its home and stored once, the counts of keys and tombstones, at most half of the
 * slots taken, no tombstone in shift mode). Keys come from a small set of addresses at a stride
 * chosen by the input, so that probe runs collide, wrap around the table's end, shift back, or
 * fill with tombstones and get purged in place.
 *
 * Input: each operation is an opcode byte and its operands; a missing byte reads as zero, so every
 * input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/address_map.hpp>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace {

using rmm::fuzz::reader;
using rmm::mr::detail::address_map;

void check(address_map const& map, std::unordered_map<std::uintptr_t, std::uint32_t> const& model) {
  FUZZ_CHECK(map.size() == model.size());
  for (auto const& [key, value] : model) {
    FUZZ_CHECK(map.find(key) == value);
  }
  rmm::fuzz::validated([&] { map.validate(); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  reader in{data, size};
  std::uintptr_t const stride = std::uintptr_t{1} << (in.byte() % 24U);  // 1 B to 8 MiB
  std::size_t const keys      = 1 + in.skewed(4096);                     // distinct addresses
  auto key_of = [&](std::size_t k) { return 0x7f0000000000ULL + (k % keys) * stride; };
  address_map map{in.byte() % 2U == 0 ? address_map::erase_mode::shift
                                      : address_map::erase_mode::tombstone};
  std::unordered_map<std::uintptr_t, std::uint32_t> model;
  std::size_t step = 0;
  while (!in.done()) {
    std::uint8_t const op    = in.byte() % 4U;
    std::uintptr_t const key = key_of(in.u16());
    if (op <= 1) {  // insert if absent
      auto const value = static_cast<std::uint32_t>(in.u16() * 65537ULL % address_map::npos);
      if (model.count(key) == 0 && model.size() < 20000) {
        map.emplace(key, value);
        model.emplace(key, value);
      }
    } else if (op == 2) {  // erase, present or not
      map.erase(key);
      model.erase(key);
      FUZZ_CHECK(map.find(key) == address_map::npos);
    } else {  // find
      auto const it = model.find(key);
      FUZZ_CHECK(map.find(key) == (it == model.end() ? address_map::npos : it->second));
    }
    if (++step % 256 == 0) {
      check(map, model);
    }
  }
  check(map, model);
  return 0;
}
