// Shared by the free-list property tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::test {

// Written independently of the structures' own formatter, so that a message test does not pass
// merely because both sides share a bug.
inline std::string hex(std::uintptr_t v) {
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdef"[v & 0xFU]);
    v >>= 4U;
  } while (v != 0);
  return "0x" + digits;
}

// Requires that f() throws std::invalid_argument whose message contains every fragment.
template <typename F>
void require_invalid_argument(F&& f, std::vector<std::string> const& fragments) {
  bool threw = false;
  try {
    f();
  } catch (std::invalid_argument const& e) {
    threw = true;
    std::string const msg{e.what()};
    for (auto const& frag : fragments) {
      INFO("message: " << msg);
      REQUIRE(msg.find(frag) != std::string::npos);
    }
  }
  REQUIRE(threw);
}

}  // namespace rmm::test
