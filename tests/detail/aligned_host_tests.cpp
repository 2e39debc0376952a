// <rmm/detail/aligned.hpp>: RMM's aligned_host_allocate / aligned_host_deallocate over any
// allocate function, and the alignment helpers under rmm::detail.
#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/error.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace {
struct malloc_log {
  void* block{nullptr};
  std::size_t bytes{0};
  void* freed{nullptr};
};
}  // namespace

TEST_CASE("detail/aligned.hpp: the helpers are rmm's", "[aligned][detail]") {
  STATIC_REQUIRE(rmm::detail::align_up(100, 256) == 256);
  STATIC_REQUIRE(rmm::detail::align_down(300, 256) == 256);
  STATIC_REQUIRE(rmm::detail::is_aligned(512, 256));
  STATIC_REQUIRE(rmm::detail::is_pow2(64));
  STATIC_REQUIRE_FALSE(rmm::detail::is_supported_alignment(3));
  alignas(256) static char buffer[256];
  CHECK(rmm::detail::is_pointer_aligned(buffer));
}

TEST_CASE("detail/aligned.hpp: aligned_host_allocate aligns inside the block and frees it",
          "[aligned][detail]") {
  for (std::size_t alignment :
       {std::size_t{1}, std::size_t{8}, std::size_t{64}, std::size_t{256}, std::size_t{4096}}) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
      CAPTURE(alignment, bytes);
      malloc_log log;
      void* ptr = rmm::detail::aligned_host_allocate(bytes, alignment, [&](std::size_t n) {
        log.bytes = n;
        log.block = std::malloc(n);
        return log.block;
      });
      REQUIRE(ptr != nullptr);
      CHECK(rmm::is_pointer_aligned(ptr, alignment));
      CHECK(log.bytes == bytes + alignment + sizeof(std::ptrdiff_t));
      auto const start = reinterpret_cast<std::uintptr_t>(log.block);
      auto const at    = reinterpret_cast<std::uintptr_t>(ptr);
      CHECK(at >= start + sizeof(std::ptrdiff_t));
      CHECK(at + bytes <= start + log.bytes);
      std::memset(ptr, 0xab, bytes);  // the whole request is usable
      rmm::detail::aligned_host_deallocate(ptr, bytes, alignment, [&](void* p) {
        log.freed = p;
        std::free(p);
      });
      CHECK(log.freed == log.block);
    }
  }
}

TEST_CASE("detail/aligned.hpp: bad input is refused with its value", "[aligned][detail]") {
  auto never = [](std::size_t) -> void* {
    FAIL("allocate must not be called");
    return nullptr;
  };
  CHECK_THROWS_AS(rmm::detail::aligned_host_allocate(64, 3, never), rmm::logic_error);
  CHECK_THROWS_WITH(rmm::detail::aligned_host_allocate(64, 48, never),
                    Catch::Matchers::Contains("alignment 48"));
  CHECK_THROWS_AS(
      rmm::detail::aligned_host_allocate(std::numeric_limits<std::size_t>::max() - 8, 256, never),
      rmm::bad_alloc);
  // An allocate function that returns nullptr: nullptr back, and freeing it does nothing.
  void* none =
      rmm::detail::aligned_host_allocate(64, 256, [](std::size_t) -> void* { return nullptr; });
  CHECK(none == nullptr);
  rmm::detail::aligned_host_deallocate(none, 64, 256, [](void*) { FAIL("nothing to free"); });
}
