/**
 * @file sdk_allocators_host_tests.cpp
 * @brief Host tests (no GPU) of what the SDK allocators decide without CUDA: the storage_type
 * conversion, the size-string configurations of the pool pair and the stream-ordered allocator,
 * the block pool's layout and messages, and sam_headroom_memory_resource's headroom arithmetic.
 */
#include <rmm/error.hpp>
#include <rmm/mr/detail/algorithms/block_pool_layout.hpp>
#include <rmm/mr/detail/algorithms/sam_headroom.hpp>
#include <rmm/mr/device_host_pool_pair.hpp>
#include <rmm/mr/pool_size_strings.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/mr/stream_ordered_allocator.hpp>
#include "../utilities/messages.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

namespace {

using rmm::test::message_of;

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using rmm::mr::storage_type;
constexpr std::size_t KiB = std::size_t{1} << 10U;
constexpr std::size_t MiB = std::size_t{1} << 20U;
constexpr std::size_t GiB = std::size_t{1} << 30U;
constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

}  // namespace

// --- storage_type ----------------------------------------------------------------------------

TEST_CASE("storage_type has the SDK's numbering", "[sdk][storage_type]") {
  STATIC_REQUIRE(std::is_same_v<std::underlying_type_t<storage_type>, int>);
  STATIC_REQUIRE(static_cast<int>(storage_type::pinned_host) == 0);
  STATIC_REQUIRE(static_cast<int>(storage_type::device) == 1);
  STATIC_REQUIRE(static_cast<int>(storage_type::system) == 2);
  CHECK(rmm::mr::storage_type_from_int(0) == storage_type::pinned_host);
  CHECK(rmm::mr::storage_type_from_int(1) == storage_type::device);
  CHECK(rmm::mr::storage_type_from_int(2) == storage_type::system);
  CHECK(rmm::mr::storage_type_name(storage_type::pinned_host) == "pinned_host");
  CHECK(rmm::mr::storage_type_name(storage_type::device) == "device");
  CHECK(rmm::mr::storage_type_name(storage_type::system) == "system");
  CHECK(rmm::mr::storage_type_name(static_cast<storage_type>(7)) == "storage_type(7)");
}

TEST_CASE("storage_type_from_int rejects other values, naming them", "[sdk][storage_type]") {
  for (int const bad :
       {-1, 3, 42, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()}) {
    INFO("value " << bad);
    auto const what =
        message_of<rmm::logic_error>([bad] { (void)rmm::mr::storage_type_from_int(bad); });
    CHECK_THAT(what,
               Contains("invalid storage_type " + std::to_string(bad)) &&
                   Contains("expected 0 (pinned_host), 1 (device) or 2 (system)"));
  }
}

// --- size strings: the pool pair ---------------------------------------------------------------

TEST_CASE("SDK default pool size is fixed per architecture", "[sdk][pool_size]") {
#if defined(__aarch64__)
  STATIC_REQUIRE(rmm::mr::sdk_default_initial_pool_size == 8 * MiB);
#else
  STATIC_REQUIRE(rmm::mr::sdk_default_initial_pool_size == 16 * MiB);
#endif
  STATIC_REQUIRE(rmm::mr::sdk_default_release_threshold == 4 * MiB);
}

TEST_CASE("device_host_pool_pair configuration: defaults", "[sdk][pool_size]") {
  auto const sizes              = rmm::mr::resolve_device_host_pool_sizes({});
  constexpr std::size_t initial = rmm::mr::sdk_default_initial_pool_size;
  CHECK(sizes.device.initial == initial);
  CHECK(sizes.device.maximum == 2 * initial);
  CHECK(sizes.host.initial == initial);
  CHECK(sizes.host.maximum == 2 * initial);
}

TEST_CASE("device_host_pool_pair configuration: explicit strings", "[sdk][pool_size]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "512MB";
  config.device_memory_max_size     = "1.5GB";  // truncated: 1 GiB
  config.host_memory_initial_size   = "256 KB";
  config.host_memory_max_size       = "1 GB";
  auto const sizes                  = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(sizes.device.initial == 512 * MiB);
  CHECK(sizes.device.maximum == GiB);
  CHECK(sizes.host.initial == 256 * KiB);
  CHECK(sizes.host.maximum == GiB);
}

TEST_CASE("device_host_pool_pair configuration: a maximum defaults to twice its own initial",
          "[sdk][pool_size]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "64MB";
  config.host_memory_max_size       = "100MB";
  auto const sizes                  = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(sizes.device.initial == 64 * MiB);
  CHECK(sizes.device.maximum == 128 * MiB);
  CHECK(sizes.host.initial == rmm::mr::sdk_default_initial_pool_size);
  CHECK(sizes.host.maximum == 100 * MiB);
}

TEST_CASE("device_host_pool_pair configuration: sizes round up to multiples of 256",
          "[sdk][pool_size]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "1000B";  // -> 1024
  config.device_memory_max_size     = "1025B";  // -> 1280
  config.host_memory_initial_size   = "129B";   // -> 256; default maximum 258 -> 512
  auto const sizes                  = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(sizes.device.initial == 1024);
  CHECK(sizes.device.maximum == 1280);
  CHECK(sizes.host.initial == 256);
  CHECK(sizes.host.maximum == 512);
  config.device_memory_initial_size = "0B";
  config.device_memory_max_size     = "0B";
  auto const zero                   = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(zero.device.initial == 0);
  CHECK(zero.device.maximum == 0);
  // Rounding the two sizes may make them equal: that is accepted.
  config.device_memory_initial_size = "1000B";
  config.device_memory_max_size     = "1001B";
  auto const equal                  = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(equal.device.initial == 1024);
  CHECK(equal.device.maximum == 1024);
}

TEST_CASE("device_host_pool_pair configuration: overflow", "[sdk][pool_size]") {
  rmm::mr::device_host_pool_config config;
  // Parses, but cannot be rounded up to a multiple of 256.
  config.device_memory_initial_size = "18446744073709551615B";
  auto what                         = message_of<rmm::invalid_argument>(
      [&] { (void)rmm::mr::resolve_device_host_pool_sizes(config); });
  CHECK_THAT(what,
             StartsWith("device_memory_initial_size: ") &&
                 Contains("18446744073709551615 bytes cannot be rounded up"));
  // Twice a huge initial size saturates at the largest multiple of 256.
  config.device_memory_initial_size = "9223372036854775808B";  // 2^63
  auto const sizes                  = rmm::mr::resolve_device_host_pool_sizes(config);
  CHECK(sizes.device.initial == std::size_t{1} << 63U);
  CHECK(sizes.device.maximum == MAX - 255);
  // Overflow inside the parser is reported with the parameter's name.
  config.host_memory_max_size = "16777216TB";
  what                        = message_of<rmm::invalid_argument>(
      [&] { (void)rmm::mr::resolve_device_host_pool_sizes(config); });
  CHECK_THAT(what,
             StartsWith("host_memory_max_size: invalid memory size \"16777216TB\": overflow"));
}

TEST_CASE("device_host_pool_pair configuration: malformed strings name the parameter",
          "[sdk][pool_size]") {
  struct bad_case {
    char const* param;
    std::string text;
    char const* reason;
  };
  for (auto const& c : {bad_case{"device_memory_initial_size", "16mb", "case-sensitive"},
                        bad_case{"device_memory_max_size", "-1MB", "sign"},
                        bad_case{"host_memory_initial_size", "", "empty string"},
                        bad_case{"host_memory_max_size", "1.5 XB", "unknown unit \"XB\""}}) {
    INFO(c.param << " = \"" << c.text << "\"");
    rmm::mr::device_host_pool_config config;
    std::string const param{c.param};
    if (param == "device_memory_initial_size") {
      config.device_memory_initial_size = c.text;
    } else if (param == "device_memory_max_size") {
      config.device_memory_max_size = c.text;
    } else if (param == "host_memory_initial_size") {
      config.host_memory_initial_size = c.text;
    } else {
      config.host_memory_max_size = c.text;
    }
    auto const what = message_of<rmm::invalid_argument>(
        [&] { (void)rmm::mr::resolve_device_host_pool_sizes(config); });
    CHECK_THAT(
        what,
        StartsWith(param + ": invalid memory size \"" + c.text + "\": ") && Contains(c.reason));
  }
}

TEST_CASE("device_host_pool_pair configuration: a maximum below the initial size",
          "[sdk][pool_size]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "16MB";
  config.device_memory_max_size     = "8MB";
  auto what =
      message_of<rmm::logic_error>([&] { (void)rmm::mr::resolve_device_host_pool_sizes(config); });
  CHECK_THAT(what,
             Contains("device_memory_max_size \"8MB\" (8388608 bytes) is below "
                      "device_memory_initial_size \"16MB\" (16777216 bytes)"));
  // Against a default initial size.
  rmm::mr::device_host_pool_config host_config;
  host_config.host_memory_max_size = "1MB";
  what                             = message_of<rmm::logic_error>(
      [&] { (void)rmm::mr::resolve_device_host_pool_sizes(host_config); });
  CHECK_THAT(what,
             Contains("host_memory_max_size \"1MB\" (1048576 bytes) is below "
                      "host_memory_initial_size default (" +
                      std::to_string(rmm::mr::sdk_default_initial_pool_size) + " bytes)"));
}

// --- size strings: the stream-ordered allocator -------------------------------------------------

TEST_CASE("stream-ordered allocator configuration", "[sdk][pool_size]") {
  auto const defaults = rmm::mr::resolve_stream_ordered_allocator_sizes({});
  CHECK(defaults.device.initial == rmm::mr::sdk_default_initial_pool_size);
  CHECK(defaults.device.maximum == 2 * rmm::mr::sdk_default_initial_pool_size);
  CHECK(defaults.release_threshold == 4 * MiB);

  rmm::mr::stream_ordered_allocator_config config;
  config.device_memory_initial_size = "1 GB";
  config.device_memory_max_size     = "4GB";
  config.release_threshold          = "0.5KB";  // truncated to 0
  auto const sizes                  = rmm::mr::resolve_stream_ordered_allocator_sizes(config);
  CHECK(sizes.device.initial == GiB);
  CHECK(sizes.device.maximum == 4 * GiB);
  CHECK(sizes.release_threshold == 0);

  config.release_threshold = "4 mb";
  CHECK_THAT(message_of<rmm::invalid_argument>(
                 [&] { (void)rmm::mr::resolve_stream_ordered_allocator_sizes(config); }),
             StartsWith("release_threshold: invalid memory size \"4 mb\""));

  rmm::mr::stream_ordered_allocator_config zero;
  zero.device_memory_initial_size = "0B";
  zero.device_memory_max_size     = "0B";
  CHECK_THAT(message_of<rmm::logic_error>(
                 [&] { (void)rmm::mr::resolve_stream_ordered_allocator_sizes(zero); }),
             Contains("device_memory_max_size must not be 0"));
  zero.device_memory_max_size = "1B";  // rounds up to 256
  CHECK(rmm::mr::resolve_stream_ordered_allocator_sizes(zero).device.maximum == 256);
}

// --- block_memory_pool_resource: layout and messages --------------------------------------------

TEST_CASE("block pool layout", "[sdk][block_pool]") {
  using rmm::mr::detail::make_block_pool_layout;
  auto const exact = make_block_pool_layout("bp", 4096, 8);
  CHECK(exact.block_size == 4096);
  CHECK(exact.stride == 4096);
  CHECK(exact.num_blocks == 8);
  CHECK(exact.total_bytes == 8 * 4096);

  auto const odd = make_block_pool_layout("bp", 1000, 3);
  CHECK(odd.block_size == 1000);  // the limit on requests stays as given
  CHECK(odd.stride == 1024);      // blocks stay 256-byte aligned
  CHECK(odd.total_bytes == 3 * 1024);

  auto const tiny = make_block_pool_layout("bp", 1, 1);
  CHECK(tiny.stride == 256);
  CHECK(tiny.total_bytes == 256);

  // The largest block size that can be rounded, with one block.
  auto const huge = make_block_pool_layout("bp", MAX - 255, 1);
  CHECK(huge.stride == MAX - 255);
}

TEST_CASE("block pool layout rejects zero and overflow", "[sdk][block_pool]") {
  using rmm::mr::detail::make_block_pool_layout;
  CHECK_THAT(message_of<rmm::logic_error>([] { (void)make_block_pool_layout("bp", 0, 4); }),
             Contains("bp: block_size must not be 0"));
  CHECK_THAT(message_of<rmm::logic_error>([] { (void)make_block_pool_layout("bp", 4096, 0); }),
             Contains("bp: num_blocks must not be 0"));
  CHECK_THAT(message_of<rmm::logic_error>([] { (void)make_block_pool_layout("bp", MAX, 1); }),
             Contains("bp: block_size " + std::to_string(MAX) + " is too large"));
  CHECK_THAT(message_of<rmm::logic_error>(
                 [] { (void)make_block_pool_layout("bp", 1000, MAX / 1024 + 1); }),
             Contains("num_blocks " + std::to_string(MAX / 1024 + 1) +
                      " times 1024 bytes per block "
                      "overflows"));
  CHECK(make_block_pool_layout("bp", 1000, MAX / 1024).total_bytes == (MAX / 1024) * 1024);
}

TEST_CASE("block pool reports name both sizes and the capacity", "[sdk][block_pool]") {
  auto const too_large =
      rmm::mr::detail::block_too_large_report("block_memory_pool_resource", 5000, 4096);
  CHECK(too_large.resource == "block_memory_pool_resource");
  CHECK(too_large.requested_bytes == 5000);
  CHECK(rmm::to_string(too_large) ==
        "block_memory_pool_resource: cannot allocate 5000 bytes: the request exceeds the block "
        "size of 4096 bytes");
  auto const exhausted =
      rmm::mr::detail::blocks_exhausted_report("block_memory_pool_resource", 10, 4, 4096);
  CHECK(exhausted.requested_bytes == 10);
  CHECK(rmm::to_string(exhausted) ==
        "block_memory_pool_resource: cannot allocate 10 bytes: all 4 blocks of 4096 bytes are in "
        "use (the pool has a fixed capacity)");
}

// --- sam_headroom_memory_resource: the headroom arithmetic --------------------------------------

TEST_CASE("sam headroom allowance", "[sdk][sam_headroom]") {
  using rmm::mr::detail::sam_headroom_allowance;
  STATIC_REQUIRE(sam_headroom_allowance(10 * GiB, 2 * GiB) == 8 * GiB);
  STATIC_REQUIRE(sam_headroom_allowance(2 * GiB, 2 * GiB) == 0);
  STATIC_REQUIRE(sam_headroom_allowance(GiB, 2 * GiB) == 0);  // headroom larger than free
  STATIC_REQUIRE(sam_headroom_allowance(0, 0) == 0);
  STATIC_REQUIRE(sam_headroom_allowance(MAX, 0) == MAX);
  STATIC_REQUIRE(sam_headroom_allowance(0, MAX) == 0);
}

TEST_CASE("sam headroom split: whole allocation on one side", "[sdk][sam_headroom]") {
  using rmm::mr::detail::split_for_headroom;
  constexpr std::uintptr_t base = 0x7f0000000000;
  constexpr std::size_t page    = 4096;
  // Fits: all of it prefers the GPU.
  constexpr auto fits = split_for_headroom(base, GiB, 10 * GiB, 2 * GiB, page);
  STATIC_REQUIRE(fits.device_bytes == GiB);
  STATIC_REQUIRE(fits.host_bytes == 0);
  // Exactly the allowance still fits.
  constexpr auto exact = split_for_headroom(base, 8 * GiB, 10 * GiB, 2 * GiB, page);
  STATIC_REQUIRE(exact.device_bytes == 8 * GiB);
  STATIC_REQUIRE(exact.host_bytes == 0);
  // A fitting allocation need not end on a page boundary.
  constexpr auto small = split_for_headroom(base, 1000, 10 * GiB, 2 * GiB, page);
  STATIC_REQUIRE(small.device_bytes == 1000);
  // Headroom at or above the free memory: everything stays on the host.
  constexpr auto none = split_for_headroom(base, MiB, GiB, 2 * GiB, page);
  STATIC_REQUIRE(none.device_bytes == 0);
  STATIC_REQUIRE(none.host_bytes == MiB);
  constexpr auto equal = split_for_headroom(base, MiB, GiB, GiB, page);
  STATIC_REQUIRE(equal.device_bytes == 0);
  STATIC_REQUIRE(equal.host_bytes == MiB);
  // Nothing free at all.
  constexpr auto empty = split_for_headroom(base, 1, 0, 0, page);
  STATIC_REQUIRE(empty.device_bytes == 0);
  STATIC_REQUIRE(empty.host_bytes == 1);
  // Zero bytes: nothing on either side.
  constexpr auto zero = split_for_headroom(base, 0, 0, 0, page);
  STATIC_REQUIRE(zero.device_bytes == 0);
  STATIC_REQUIRE(zero.host_bytes == 0);
}

TEST_CASE("sam headroom split: partial, cut at a page boundary", "[sdk][sam_headroom]") {
  using rmm::mr::detail::split_for_headroom;
  constexpr std::size_t page = 4096;
  // Page-aligned base, allowance of 10 pages + 100 bytes: 10 pages on the GPU.
  constexpr std::uintptr_t aligned = 0x7f0000000000;
  constexpr auto a =
      split_for_headroom(aligned, 100 * page, 2 * GiB + 10 * page + 100, 2 * GiB, page);
  STATIC_REQUIRE(a.device_bytes == 10 * page);
  STATIC_REQUIRE(a.host_bytes == 90 * page);
  // Allowance below one page: nothing on the GPU.
  constexpr auto b = split_for_headroom(aligned, 100 * page, 2 * GiB + page - 1, 2 * GiB, page);
  STATIC_REQUIRE(b.device_bytes == 0);
  STATIC_REQUIRE(b.host_bytes == 100 * page);
  // Unaligned base (256-aligned, 768 bytes before a page boundary): the cut is at an address
  // that is a multiple of the page size, not at a multiple of the page size from the base.
  constexpr std::uintptr_t unaligned = aligned + page - 768;
  constexpr auto c = split_for_headroom(unaligned, 100 * page, 2 * GiB + 3 * page, 2 * GiB, page);
  STATIC_REQUIRE(c.device_bytes == 2 * page + 768);
  STATIC_REQUIRE((unaligned + c.device_bytes) % page == 0);
  STATIC_REQUIRE(c.host_bytes == 100 * page - c.device_bytes);
  // Unaligned base and an allowance that does not reach the first boundary: nothing.
  constexpr auto d = split_for_headroom(unaligned, 100 * page, 2 * GiB + 700, 2 * GiB, page);
  STATIC_REQUIRE(d.device_bytes == 0);
  // ... and one that reaches it exactly.
  constexpr auto e = split_for_headroom(unaligned, 100 * page, 2 * GiB + 768, 2 * GiB, page);
  STATIC_REQUIRE(e.device_bytes == 768);
  // Page size 1: no rounding, the allowance exactly.
  constexpr auto f = split_for_headroom(unaligned, 100 * page, 2 * GiB + 12345, 2 * GiB, 1);
  STATIC_REQUIRE(f.device_bytes == 12345);
  // 64 KiB pages (aarch64 kernels).
  constexpr std::size_t big_page = 64 * KiB;
  constexpr auto g               = split_for_headroom(aligned, GiB, 3 * big_page + 5, 0, big_page);
  STATIC_REQUIRE(g.device_bytes == 3 * big_page);
}

TEST_CASE("sam headroom split: no overflow at the extremes", "[sdk][sam_headroom]") {
  using rmm::mr::detail::split_for_headroom;
  constexpr std::size_t page = 4096;
  // base + allowance wraps around the address space: the page boundary is still exact.
  constexpr std::uintptr_t high = std::numeric_limits<std::uintptr_t>::max() - page + 1;  // a page
  constexpr auto a              = split_for_headroom(high, MAX, 3 * page + 7, 0, page);
  STATIC_REQUIRE(a.device_bytes == 3 * page);
  STATIC_REQUIRE(a.host_bytes == MAX - 3 * page);
  // Everything free, no headroom, the largest request: fits.
  constexpr auto b = split_for_headroom(high, MAX, MAX, 0, page);
  STATIC_REQUIRE(b.device_bytes == MAX);
  STATIC_REQUIRE(b.host_bytes == 0);
  // The largest headroom.
  constexpr auto c = split_for_headroom(0, MAX, MAX, MAX, page);
  STATIC_REQUIRE(c.device_bytes == 0);
  STATIC_REQUIRE(c.host_bytes == MAX);
  // Largest free memory minus one byte of headroom, largest request, unaligned base.
  constexpr auto d = split_for_headroom(256, MAX, MAX, 1, page);
  STATIC_REQUIRE(d.device_bytes + d.host_bytes == MAX);
  STATIC_REQUIRE((256 + d.device_bytes) % page == 0);
}

TEST_CASE("sam headroom split: invariants on random inputs", "[sdk][sam_headroom]") {
  using rmm::mr::detail::sam_headroom_allowance;
  using rmm::mr::detail::split_for_headroom;
  std::mt19937_64 rng{2024};
  std::uniform_int_distribution<std::size_t> any;
  std::uniform_int_distribution<std::size_t> small{0, 64 * MiB};
  std::uniform_int_distribution<unsigned> page_exp{0, 16};
  for (int i = 0; i < 100000; ++i) {
    bool const extreme         = i % 4 == 0;
    std::uintptr_t const base  = extreme ? any(rng) : any(rng) & ~std::uintptr_t{255};
    std::size_t const bytes    = extreme ? any(rng) : small(rng);
    std::size_t const free     = extreme ? any(rng) : small(rng);
    std::size_t const headroom = extreme ? any(rng) : small(rng) / 4;
    std::size_t const page     = std::size_t{1} << page_exp(rng);
    auto const split           = split_for_headroom(base, bytes, free, headroom, page);
    std::size_t const allow    = sam_headroom_allowance(free, headroom);
    INFO("base " << base << " bytes " << bytes << " free " << free << " headroom " << headroom
                 << " page " << page);
    REQUIRE(split.device_bytes + split.host_bytes == bytes);
    REQUIRE(split.device_bytes <= allow);  // never eats into the headroom
    if (bytes <= allow) {
      REQUIRE(split.host_bytes == 0);
    } else {
      // The cut lies on a page boundary, and is the last one within the allowance.
      if (split.device_bytes > 0) {
        REQUIRE((base + split.device_bytes) % page == 0);
      }
      REQUIRE(allow - split.device_bytes < page);
    }
  }
}
