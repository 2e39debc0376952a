/**
 * @file free_batch_tests.cpp
 * @brief Tests of free_batch (a stream's batch of frees in the stream-ordered core): fullness by
 * count and by bytes (and ahead of a push), exact-size take-back (most recent first, the others
 * kept in order), taking the oldest blocks only, and randomised push / take sequences against a
 * plain vector model.
 */
#include <rmm/mr/detail/algorithms/free_batch.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::free_batch;

void* at(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

template <std::size_t N>
std::vector<std::pair<void*, std::size_t>> contents(free_batch<N>& b) {
  std::array<typename free_batch<N>::block, N> out{};
  std::size_t const n = b.take_all(out);
  std::vector<std::pair<void*, std::size_t>> v;
  for (std::size_t i = 0; i < n; ++i) {
    v.emplace_back(out[i].ptr, out[i].size);
  }
  return v;
}

}  // namespace

TEST_CASE("free_batch: full by count", "[free_batch]") {
  free_batch<3> b;
  CHECK(b.empty());
  CHECK_FALSE(b.push(at(0x100), 256));
  CHECK_FALSE(b.push(at(0x200), 512));
  CHECK(b.push(at(0x400), 256));  // third of three
  CHECK(b.full());
  CHECK(b.size() == 3);
  CHECK(b.bytes() == 1024);
  auto const v = contents(b);
  CHECK(v == std::vector<std::pair<void*, std::size_t>>{
                 {at(0x100), 256}, {at(0x200), 512}, {at(0x400), 256}});
  CHECK(b.empty());
  CHECK(b.bytes() == 0);
  CHECK_FALSE(b.full());
}

TEST_CASE("free_batch: full by bytes", "[free_batch]") {
  free_batch<32> b{1000};
  CHECK_FALSE(b.push(at(0x100), 600));
  CHECK(b.push(at(0x1000), 400));  // 1000 bytes: at the limit
  CHECK(b.size() == 2);
  free_batch<32> unlimited;  // 0: only the count limits it
  CHECK_FALSE(unlimited.push(at(0x100), std::size_t{1} << 40U));
}

TEST_CASE("free_batch: take_exact takes the most recent block of that size", "[free_batch]") {
  free_batch<8> b;
  b.push(at(0x100), 256);
  b.push(at(0x200), 512);
  b.push(at(0x300), 256);
  b.push(at(0x400), 1024);
  CHECK_FALSE(b.take_exact(768));
  CHECK(b.take_exact(256) == at(0x300));
  CHECK(b.bytes() == 256 + 512 + 1024);
  CHECK(b.take_exact(256) == at(0x100));
  CHECK_FALSE(b.take_exact(256));
  CHECK(contents(b) ==
        std::vector<std::pair<void*, std::size_t>>{{at(0x200), 512}, {at(0x400), 1024}});
}

TEST_CASE("free_batch: take_oldest returns the oldest blocks and keeps the newest in order",
          "[free_batch]") {
  free_batch<4> b;
  b.push(at(0x100), 256);
  b.push(at(0x200), 512);
  CHECK_FALSE(b.full_after(256));  // two of four: a third leaves room
  b.push(at(0x300), 256);
  CHECK(b.full_after(256));  // three of four: the fourth would fill it
  CHECK(b.push(at(0x400), 1024));
  std::array<free_batch<4>::block, 4> out{};
  CHECK(b.take_oldest(2, out) == 2);
  CHECK(out[0].ptr == at(0x100));
  CHECK(out[1].ptr == at(0x200));
  CHECK(out[1].size == 512);
  CHECK(b.size() == 2);
  CHECK(b.bytes() == 256 + 1024);
  CHECK_FALSE(b.full());
  CHECK(b.take_oldest(0, out) == 0);
  CHECK(b.take_oldest(9, out) == 2);  // more than it holds: all
  CHECK(out[0].ptr == at(0x300));
  CHECK(out[1].ptr == at(0x400));
  CHECK(b.empty());
  CHECK(b.bytes() == 0);
  free_batch<32> by_bytes{1000};
  by_bytes.push(at(0x100), 600);
  CHECK(by_bytes.full_after(400));  // would reach the byte limit
  CHECK_FALSE(by_bytes.full_after(399));
}

TEST_CASE("free_batch: random pushes and takes agree with a vector model", "[free_batch]") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng{seed};
    constexpr std::size_t cap = 16;
    std::size_t const limit   = seed % 2 == 0 ? 0 : 4096;
    free_batch<cap> b{limit};
    std::vector<std::pair<void*, std::size_t>> model;
    std::uintptr_t next = 0x1000;
    for (int step = 0; step < 2000; ++step) {
      std::size_t const size = 256 * (1 + rng() % 4);
      switch (rng() % 4) {
        case 0:
        case 1: {
          if (b.full()) {
            if (rng() % 2 == 0) {
              CHECK(contents(b) == model);
              model.clear();
            } else {  // return the oldest k, keep the rest (a one-size resource's full batch)
              std::size_t const k = rng() % (cap + 2);
              std::array<free_batch<cap>::block, cap> out{};
              std::size_t const n = b.take_oldest(k, out);
              REQUIRE(n == std::min(k, model.size()));
              for (std::size_t i = 0; i < n; ++i) {
                REQUIRE(out[i].ptr == model[i].first);
                REQUIRE(out[i].size == model[i].second);
              }
              model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n));
            }
            break;
          }
          std::size_t bytes = size;
          for (auto const& m : model) {
            bytes += m.second;
          }
          bool const full = model.size() + 1 == cap || (limit != 0 && bytes >= limit);
          REQUIRE(b.full_after(size) == full);
          model.emplace_back(at(next), size);
          next += 0x1000;
          REQUIRE(b.push(model.back().first, size) == full);
          break;
        }
        case 2: {
          std::optional<void*> expected;
          for (std::size_t i = model.size(); i > 0; --i) {
            if (model[i - 1].second == size) {
              expected = model[i - 1].first;
              model.erase(model.begin() + static_cast<std::ptrdiff_t>(i - 1));
              break;
            }
          }
          REQUIRE(b.take_exact(size) == expected);
          break;
        }
        default: {
          std::size_t bytes = 0;
          for (auto const& m : model) {
            bytes += m.second;
          }
          REQUIRE(b.size() == model.size());
          REQUIRE(b.bytes() == bytes);
          REQUIRE(b.empty() == model.empty());
        }
      }
    }
  }
}
