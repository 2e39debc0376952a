/**
 * @file piece_map_fuzz.cpp
 * @brief libFuzzer target: decodes the input into piece_map operations (insert, erase, find) and
 * checks each against a std::map model; aborts on any disagreement.
 *
 * Input: byte 0 picks the capacity (1..64); then each operation is an opcode byte and operands
 * (an address slot and a size). A missing byte reads as zero, so every input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/piece_map.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

namespace {

using rmm::mr::detail::piece_map;
using owner_t = piece_map::owner_t;
using model_t = std::map<std::uintptr_t, std::pair<std::size_t, owner_t>>;

std::optional<owner_t> model_find(model_t const& m, std::uintptr_t addr) {
  auto it = m.upper_bound(addr);
  if (it == m.begin()) {
    return std::nullopt;
  }
  --it;
  return addr - it->first < it->second.first ? std::optional<owner_t>{it->second.second}
                                             : std::nullopt;
}

bool model_overlaps(model_t const& m, std::uintptr_t base, std::size_t size) {
  for (auto const& [b, r] : m) {
    if (b < base + size && base < b + r.first) {
      return true;
    }
  }
  return false;
}

void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  rmm::fuzz::reader in{data, size};
  std::size_t const capacity = 1 + in.byte() % 64U;
  piece_map map{capacity};
  model_t model;
  while (!in.done()) {
    std::uint8_t const op     = in.byte();
    std::uintptr_t const addr = 0x1000 + in.u16();
    std::size_t const len     = 1 + in.byte();
    switch (op % 3U) {
      case 0: {
        auto const owner = static_cast<owner_t>(op);
        if (model_overlaps(model, addr, len)) {
          bool threw = false;
          try {
            map.insert(addr, len, owner);
          } catch (std::invalid_argument const&) {
            threw = true;
          }
          check(threw);
        } else {
          bool const room = model.size() < capacity;
          check(map.insert(addr, len, owner) == room);
          if (room) {
            model.emplace(addr, std::make_pair(len, owner));
          }
        }
        break;
      }
      case 1:
        check(map.erase(addr) == (model.erase(addr) == 1));
        break;
      default:
        check(map.find(addr) == model_find(model, addr));
        break;
    }
    check(map.size() == model.size());
  }
  return 0;
}
