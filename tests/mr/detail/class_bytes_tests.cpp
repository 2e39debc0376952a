/**
 * @file class_bytes_tests.cpp
 * @brief Tests of class_bytes (the byte searches of chunk_stream_arena's class tree) against
 * plain loops: random bytes over the whole range 0-255 (the SSE2 paths compare unsigned bytes,
 * which a signed compare would get wrong from 128 on), random keys and lanes, fixed seeds. Built
 * with SSE2 in the host suite and without it in scalar_path_tests.
 */
#include <rmm/mr/detail/algorithms/class_bytes.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>

namespace {

namespace cb = rmm::mr::detail::class_bytes;

template <typename Pred>
std::uint64_t naive_mask(std::uint8_t const* p, std::size_t n, Pred pred) {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m |= static_cast<std::uint64_t>(pred(p[i])) << i;
  }
  return m;
}

}  // namespace

TEST_CASE("class_bytes: masks and maxima match plain loops", "[class_bytes]") {
  std::mt19937_64 rng{20261206};
  std::array<std::uint8_t, 256> bytes{};
  for (int round = 0; round < 20000; ++round) {
    // Half the rounds draw from a narrow band so that keys often equal entries.
    unsigned const lo   = static_cast<unsigned>(rng() % 256);
    unsigned const span = round % 2 == 0 ? 256U : 4U;
    for (auto& b : bytes) {
      b = static_cast<std::uint8_t>((lo + rng() % span) % 256);
    }
    auto const k = static_cast<std::uint8_t>(round % 3 == 0 ? bytes[rng() % 64] : rng() % 256);
    std::uint8_t const* p = bytes.data();
    auto const ge         = [&](std::uint8_t x) { return x >= k; };
    auto const eq         = [&](std::uint8_t x) { return x == k; };
    REQUIRE(cb::ge16(p, k) == naive_mask(p, 16, ge));
    REQUIRE(cb::eq16(p, k) == naive_mask(p, 16, eq));
    REQUIRE(cb::ge64(p, k) == naive_mask(p, 64, ge));
    REQUIRE(cb::eq64(p, k) == naive_mask(p, 64, eq));

    std::size_t const n = 16 * (rng() % 17);  // 0 .. 256 bytes, whole vectors
    std::uint8_t m      = 0;
    for (std::size_t i = 0; i < n; ++i) {
      m = bytes[i] > m ? bytes[i] : m;
    }
    REQUIRE(cb::max_of(p, n) == m);

    std::size_t const lane = rng() % 64;
    auto const v           = static_cast<std::uint8_t>(rng() % 256);
    std::uint8_t mr        = 0;
    for (std::size_t i = 0; i < 64; ++i) {
      std::uint8_t const x = i == lane ? v : bytes[i];
      mr                   = x > mr ? x : mr;
    }
    REQUIRE(cb::max64_replacing(p, lane, v) == mr);
  }
}

TEST_CASE("class_bytes: edge keys and values", "[class_bytes]") {
  std::array<std::uint8_t, 64> zeros{};
  std::array<std::uint8_t, 64> top{};
  top.fill(255);
  CHECK(cb::ge64(zeros.data(), 0) == ~std::uint64_t{0});
  CHECK(cb::ge64(zeros.data(), 1) == 0);
  CHECK(cb::ge64(top.data(), 255) == ~std::uint64_t{0});
  CHECK(cb::eq64(top.data(), 255) == ~std::uint64_t{0});
  CHECK(cb::max_of(top.data(), 64) == 255);
  CHECK(cb::max_of(top.data(), 0) == 0);
  CHECK(cb::max64_replacing(top.data(), 63, 0) == 255);
  zeros[63] = 200;
  CHECK(cb::max64_replacing(zeros.data(), 63, 7) == 7);  // the replaced lane's old value is gone
  CHECK(cb::max64_replacing(zeros.data(), 0, 7) == 200);
}
