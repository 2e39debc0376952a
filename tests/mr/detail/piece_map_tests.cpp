// piece_map: inserts, erases and lookups against a std::map reference model (seeded random
// programs), the errors it reports, a full map, and lookups from many threads while a writer
// changes other ranges (run under TSan in CI's sanitizer build).
#include <rmm/mr/detail/algorithms/piece_map.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

using rmm::mr::detail::piece_map;
using owner_t = piece_map::owner_t;

// The reference: base -> (size, owner), searched the obvious way.
struct reference_model {
  std::map<std::uintptr_t, std::pair<std::size_t, owner_t>> ranges;

  [[nodiscard]] bool overlaps(std::uintptr_t base, std::size_t size) const {
    for (auto const& [b, r] : ranges) {
      if (b < base + size && base < b + r.first) {
        return true;
      }
    }
    return false;
  }
  [[nodiscard]] std::optional<owner_t> find(std::uintptr_t addr) const {
    for (auto const& [b, r] : ranges) {
      if (addr >= b && addr < b + r.first) {
        return r.second;
      }
    }
    return std::nullopt;
  }
};

}  // namespace

TEST_CASE("piece_map: lookups at range edges", "[piece_map]") {
  piece_map map{8};
  REQUIRE(map.insert(0x1000, 0x100, 1));
  REQUIRE(map.insert(0x1100, 0x100, 2));  // adjacent
  REQUIRE(map.insert(0x4000, 0x10, 3));
  CHECK_FALSE(map.find(0xfff).has_value());
  CHECK(map.find(0x1000) == std::optional<owner_t>{1});
  CHECK(map.find(0x10ff) == std::optional<owner_t>{1});
  CHECK(map.find(0x1100) == std::optional<owner_t>{2});
  CHECK(map.find(0x11ff) == std::optional<owner_t>{2});
  CHECK_FALSE(map.find(0x1200).has_value());
  CHECK(map.find(0x400f) == std::optional<owner_t>{3});
  CHECK_FALSE(map.find(0x4010).has_value());
  CHECK(map.size() == 3);
  CHECK(map.erase(0x1100));
  CHECK_FALSE(map.erase(0x1100));
  CHECK_FALSE(map.erase(0x1001));  // only a range's base erases it
  CHECK_FALSE(map.find(0x1150).has_value());
  CHECK(map.size() == 2);
}

TEST_CASE("piece_map: invalid and overlapping ranges are refused with the range named",
          "[piece_map]") {
  piece_map map{4};
  REQUIRE(map.insert(1000, 100, 1));
  CHECK_THROWS_WITH(map.insert(1050, 100, 2),
                    Catch::Contains("1050") && Catch::Contains("overlaps"));
  CHECK_THROWS_WITH(map.insert(950, 51, 2), Catch::Contains("overlaps"));
  CHECK_THROWS_WITH(map.insert(10, 0, 2), Catch::Contains("invalid range"));
  CHECK_THROWS_AS(map.insert(~std::uintptr_t{0} - 5, 10, 2), std::invalid_argument);
  CHECK_THROWS_AS(piece_map{0}, std::invalid_argument);
  CHECK(map.size() == 1);  // nothing changed
  CHECK(map.find(1099) == std::optional<owner_t>{1});
}

TEST_CASE("piece_map: a full map refuses an insert and keeps what it has", "[piece_map]") {
  piece_map map{3};
  CHECK(map.insert(300, 10, 3));
  CHECK(map.insert(100, 10, 1));
  CHECK(map.insert(200, 10, 2));
  CHECK_FALSE(map.insert(400, 10, 4));
  CHECK(map.size() == 3);
  CHECK(map.find(105) == std::optional<owner_t>{1});
  CHECK(map.find(205) == std::optional<owner_t>{2});
  CHECK(map.find(305) == std::optional<owner_t>{3});
  CHECK_FALSE(map.find(405).has_value());
}

TEST_CASE("piece_map: random programs agree with the reference model", "[piece_map][property]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng{seed};
    std::size_t const capacity = 1 + rng() % 64;
    piece_map map{capacity};
    reference_model model;
    for (int step = 0; step < 2000; ++step) {
      std::uintptr_t const base = 0x10000 + (rng() % 512) * 64;
      std::size_t const size    = 1 + rng() % 256;
      auto const owner          = static_cast<owner_t>(rng() % 40);
      switch (rng() % 3) {
        case 0: {
          if (model.overlaps(base, size)) {
            CHECK_THROWS_AS(map.insert(base, size, owner), std::invalid_argument);
          } else {
            bool const room = model.ranges.size() < capacity;
            CHECK(map.insert(base, size, owner) == room);
            if (room) {
              model.ranges.emplace(base, std::make_pair(size, owner));
            }
          }
          break;
        }
        case 1: {
          // Erase an existing range's base half the time, a random address otherwise.
          std::uintptr_t at = base;
          if (!model.ranges.empty() && rng() % 2 == 0) {
            at = std::next(model.ranges.begin(),
                           static_cast<std::ptrdiff_t>(rng() % model.ranges.size()))
                     ->first;
          }
          bool const present = model.ranges.erase(at) == 1;
          CHECK(map.erase(at) == present);
          break;
        }
        default: {
          std::uintptr_t const addr = 0x10000 + rng() % (512 * 64 + 300);
          CHECK(map.find(addr) == model.find(addr));
          break;
        }
      }
      REQUIRE(map.size() == model.ranges.size());
    }
  }
}

TEST_CASE("piece_map: lookups from many threads while a writer changes other ranges",
          "[piece_map][threads]") {
  piece_map map{256};
  // Stable ranges at even slots; the writer inserts and erases odd slots between them.
  constexpr std::uintptr_t slot = 0x1000;
  for (std::uintptr_t i = 0; i < 64; i += 2) {
    REQUIRE(map.insert(i * slot, slot, static_cast<owner_t>(i)));
  }
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> wrong{0};
  std::atomic<std::size_t> lookups{0};
  std::vector<std::thread> readers;
  for (unsigned t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng{t};
      std::size_t n = 0;
      while (!stop.load(std::memory_order_relaxed) || n < 1000) {
        std::uintptr_t const i    = (rng() % 32) * 2;
        std::uintptr_t const addr = i * slot + rng() % slot;
        if (map.find(addr) != std::optional<owner_t>{static_cast<owner_t>(i)}) {
          ++wrong;
        }
        std::uintptr_t const odd = i + 1;  // either absent or owned by odd
        auto const o             = map.find(odd * slot + rng() % slot);
        if (o.has_value() && *o != static_cast<owner_t>(odd)) {
          ++wrong;
        }
        ++n;
      }
      lookups += n;
    });
  }
  std::mt19937_64 rng{99};
  for (int step = 0; step < 20000; ++step) {
    std::uintptr_t const odd = (rng() % 32) * 2 + 1;
    if (!map.erase(odd * slot)) {
      REQUIRE(map.insert(odd * slot, slot, static_cast<owner_t>(odd)));
    }
  }
  stop = true;
  for (auto& r : readers) {
    r.join();
  }
  CHECK(wrong == 0);
  CHECK(lookups >= 4000);
}
