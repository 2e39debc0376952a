#include <rmm/aligned.hpp>

#include <catch2/catch.hpp>

#include <cstdint>

TEST_CASE("CUDA_ALLOCATION_ALIGNMENT is 256", "[aligned]") {
  STATIC_REQUIRE(rmm::CUDA_ALLOCATION_ALIGNMENT == 256);
}

TEST_CASE("is_pow2 and is_supported_alignment", "[aligned]") {
  CHECK_FALSE(rmm::is_pow2(0));
  CHECK(rmm::is_pow2(1));
  CHECK(rmm::is_pow2(256));
  CHECK_FALSE(rmm::is_pow2(257));
  CHECK_FALSE(rmm::is_pow2(384));
  CHECK(rmm::is_pow2(std::size_t{1} << 63));
  CHECK(rmm::is_supported_alignment(512));
  CHECK_FALSE(rmm::is_supported_alignment(3));
}

TEST_CASE("align_up, align_down and is_aligned", "[aligned]") {
  for (std::size_t alignment : {1UL, 2UL, 256UL, 4096UL}) {
    for (std::size_t value : {0UL, 1UL, 255UL, 256UL, 257UL, 4095UL, 4097UL, 1000000UL}) {
      auto const up   = rmm::align_up(value, alignment);
      auto const down = rmm::align_down(value, alignment);
      CHECK(rmm::is_aligned(up, alignment));
      CHECK(rmm::is_aligned(down, alignment));
      CHECK(up >= value);
      CHECK(up - value < alignment);
      CHECK(down <= value);
      CHECK(value - down < alignment);
      CHECK(rmm::is_aligned(value, alignment) == (up == value));
    }
  }
  STATIC_REQUIRE(rmm::align_up(1, 256) == 256);
  STATIC_REQUIRE(rmm::align_down(511, 256) == 256);
  int storage[64]{};
  CHECK(rmm::is_pointer_aligned(storage, alignof(int)));
  CHECK_FALSE(rmm::is_pointer_aligned(reinterpret_cast<char*>(storage) + 1, 2));
}
