/**
 * @file memory_size_tests.cpp
 * @brief Tests of rmm::parse_memory_size (include/rmm/memory_size.hpp).
 */
#include <rmm/error.hpp>
#include <rmm/memory_size.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t KiB = std::size_t{1} << 10U;
constexpr std::size_t MiB = std::size_t{1} << 20U;
constexpr std::size_t GiB = std::size_t{1} << 30U;
constexpr std::size_t TiB = std::size_t{1} << 40U;
constexpr std::size_t MAX = std::numeric_limits<std::size_t>::max();

struct valid_case {
  std::string text;
  std::size_t expected;
};

struct invalid_case {
  invalid_case(std::string text_, std::string reason_, std::string quoted_ = {})
      : text{std::move(text_)}, reason{std::move(reason_)}, quoted{std::move(quoted_)} {}
  std::string text;
  std::string reason;  // a fragment the message must contain
  std::string quoted;  // how the message quotes text, if not verbatim (unprintable bytes)
};

// Returns the message of the rmm::invalid_argument thrown by parse_memory_size(text); fails the
// test if nothing, or something else, is thrown.
std::string error_message(std::string_view text) {
  try {
    auto const value = rmm::parse_memory_size(text);
    FAIL("no exception; returned " << value);
  } catch (rmm::invalid_argument const& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("parse_memory_size signature", "[memory_size]") {
  STATIC_REQUIRE(std::is_same_v<decltype(rmm::parse_memory_size(std::string_view{})), std::size_t>);
  STATIC_REQUIRE(std::is_base_of_v<std::invalid_argument, rmm::invalid_argument>);
  STATIC_REQUIRE(sizeof(std::size_t) == 8);  // the overflow cases below assume 64 bits
}

TEST_CASE("parse_memory_size accepts valid sizes", "[memory_size]") {
  std::vector<valid_case> const cases{
      // The SDK document's examples.
      {"512MB", 512 * MiB},
      {"256 KB", 256 * KiB},
      {"1 GB", GiB},
      // Every unit.
      {"0B", 0},
      {"1B", 1},
      {"1KB", KiB},
      {"1MB", MiB},
      {"1GB", GiB},
      {"1TB", TiB},
      {"0 TB", 0},
      {"16MB", 16 * MiB},
      {"8 MB", 8 * MiB},
      {"1023B", 1023},
      {"1024B", KiB},
      {"3 TB", 3 * TiB},
      // Spaces: none, one, several.
      {"7GB", 7 * GiB},
      {"7 GB", 7 * GiB},
      {"7    GB", 7 * GiB},
      // Decimal parts are truncated before the multiplication.
      {"1.5GB", GiB},
      {"1.5 GB", GiB},
      {"1.999999999999999999999999999999GB", GiB},
      {"0.9KB", 0},
      {"0.5B", 0},
      {"2.5B", 2},
      {"512.75 MB", 512 * MiB},
      {"1.0TB", TiB},
      {"16777215.99999TB", 16777215 * TiB},
      {"18446744073709551615.9B", MAX},
      // Leading zeros.
      {"007MB", 7 * MiB},
      {"0000000000000000000000000000000000001KB", KiB},
      {"00000000000000000000000018446744073709551615B", MAX},
      {"00.5KB", 0},
      // Largest representable values in each unit (2^64 - 1 bytes is the limit).
      {"18446744073709551615B", MAX},
      {"18014398509481983KB", (MAX >> 10U) << 10U},
      {"17592186044415MB", (MAX >> 20U) << 20U},
      {"17179869183GB", (MAX >> 30U) << 30U},
      {"16777215TB", (MAX >> 40U) << 40U},
      {"16777215TB", 16777215 * TiB},
  };
  for (auto const& c : cases) {
    INFO("text: \"" << c.text << "\"");
    CHECK(rmm::parse_memory_size(c.text) == c.expected);
  }
}

TEST_CASE("parse_memory_size rejects invalid sizes", "[memory_size]") {
  std::vector<invalid_case> const cases{
      {"", "empty string"},
      // Whitespace around the text.
      {" 1MB", "leading or trailing whitespace"},
      {"1MB ", "leading or trailing whitespace"},
      {" ", "leading or trailing whitespace"},
      {"512 ", "leading or trailing whitespace"},
      // Signs.
      {"-1MB", "sign"},
      {"+1MB", "sign"},
      {"-0B", "sign"},
      {"+ 1MB", "sign"},
      // Missing number.
      {"MB", "missing number"},
      {"B", "missing number"},
      {".5GB", "missing number"},
      {".GB", "missing number"},
      {"GB1", "missing number"},
      {"one MB", "missing number"},
      {"\xEF\xBC\x91MB", "missing number", R"("\xEF\xBC\x91MB")"},  // U+FF11 FULLWIDTH DIGIT ONE
      // Decimal point.
      {"1.GB", "missing digits after the decimal point"},
      {"1. GB", "missing digits after the decimal point"},
      {"1.", "missing digits after the decimal point"},
      {"1..5GB", "missing digits after the decimal point"},
      {"1.2.3MB", "more than one decimal point"},
      {"1.5.GB", "more than one decimal point"},
      // Missing unit.
      {"512", "missing unit"},
      {"0", "missing unit"},
      {"1.5", "missing unit"},
      {"18446744073709551616", "missing unit"},  // syntax is reported before overflow
      // Unknown units, lower or mixed case, other spellings.
      {"1.5 XB", "unknown unit \"XB\" (expected B, KB, MB, GB or TB)"},
      {"1mb", "unknown unit \"mb\""},
      {"1mb", "case-sensitive"},
      {"1Mb", "case-sensitive"},
      {"1kB", "case-sensitive"},
      {"1 b", "case-sensitive"},
      {"1K", "unknown unit \"K\""},
      {"1KiB", "unknown unit \"KiB\""},
      {"1MiB", "unknown unit \"MiB\""},
      {"1PB", "unknown unit \"PB\""},
      {"1 bytes", "unknown unit \"bytes\""},
      {"1MB5", "unknown unit \"MB5\""},
      {"1MBB", "unknown unit \"MBB\""},
      {"1MB MB", "unknown unit \"MB MB\""},
      {"1 M B", "unknown unit \"M B\""},
      {"1e3MB", "unknown unit \"e3MB\""},
      {"1E3MB", "unknown unit \"E3MB\""},
      {"0x10MB", "unknown unit \"x10MB\""},
      {"1,024KB", "unknown unit \",024KB\""},
      {"1_024KB", "unknown unit \"_024KB\""},
      {"1 024KB", "unknown unit \"024KB\""},
      {"1 .5GB", "unknown unit \".5GB\""},
      {"1-MB", "unknown unit \"-MB\""},
      {"99999999999999999999999XB", "unknown unit \"XB\""},  // syntax before overflow
      // Whitespace other than spaces between the number and the unit.
      {"1\tMB", "only spaces may separate", R"("1\x09MB")"},
      {"1 \tMB", "only spaces may separate", R"("1 \x09MB")"},
      {"1\nMB", "only spaces may separate", R"("1\x0AMB")"},
      {"1\rMB", "only spaces may separate", R"("1\x0DMB")"},
      // Overflow of the number itself.
      {"18446744073709551616B", "overflow"},
      {"18446744073709551620B", "overflow"},
      {"99999999999999999999B", "overflow"},
      {"184467440737095516150B", "overflow"},
      {"99999999999999999999999999999999999999999999999999TB", "overflow"},
      {"18446744073709551616.0B", "overflow"},
      // Overflow of the multiplication by the unit.
      {"18014398509481984KB", "overflow"},
      {"17592186044416MB", "overflow"},
      {"17179869184GB", "overflow"},
      {"16777216TB", "overflow"},
      {"16777216.5 TB", "overflow"},
      {"18446744073709551615KB", "overflow"},
      {"18446744073709551615TB", "overflow"},
  };
  for (auto const& c : cases) {
    INFO("text: \"" << c.text << "\"");
    auto const message = error_message(c.text);
    auto const quoted  = c.quoted.empty() ? "\"" + c.text + "\"" : c.quoted;
    CHECK_THAT(message, Catch::Contains("invalid memory size " + quoted + ": "));
    CHECK_THAT(message, Catch::Contains(c.reason));
  }
}

TEST_CASE("parse_memory_size throws rmm::invalid_argument", "[memory_size]") {
  CHECK_THROWS_AS(rmm::parse_memory_size("1.5 XB"), rmm::invalid_argument);
  CHECK_THROWS_AS(rmm::parse_memory_size("16777216TB"), rmm::invalid_argument);
  CHECK_THROWS_AS(rmm::parse_memory_size(""), std::invalid_argument);
  CHECK_THROWS_WITH(
      rmm::parse_memory_size("1.5 XB"),
      "invalid memory size \"1.5 XB\": unknown unit \"XB\" (expected B, KB, MB, GB or TB)");
}

TEST_CASE("parse_memory_size escapes unprintable text in messages", "[memory_size]") {
  using namespace std::string_literals;
  // An embedded NUL is an ordinary invalid character and does not truncate the message.
  auto const nul = "1\0MB"s;
  REQUIRE(nul.size() == 4);
  CHECK_THAT(error_message(nul), Catch::Contains("\"1\\x00MB\": unknown unit \"\\x00MB\""));
  // A NUL after a valid size is not ignored.
  CHECK_THAT(error_message("1MB\0"s), Catch::Contains("\"1MB\\x00\": unknown unit \"MB\\x00\""));
  CHECK_THAT(error_message("1\tMB"), Catch::Contains("\"1\\x09MB\""));
  CHECK_THAT(error_message("1MB\n"), Catch::Contains("\"1MB\\x0A\""));
  CHECK_THAT(error_message("1 \xC2\xB5"
                           "B"),
             Catch::Contains("\"1 \\xC2\\xB5B\""));
  CHECK_THAT(error_message("1\"MB"), Catch::Contains("\"1\\\"MB\": unknown unit \"\\\"MB\""));
  CHECK_THAT(error_message("1\\MB"), Catch::Contains("\"1\\\\MB\""));
}

TEST_CASE("parse_memory_size reads only the given view", "[memory_size]") {
  std::string_view const full{"512MB trailing"};
  CHECK(rmm::parse_memory_size(full.substr(0, 5)) == 512 * MiB);
  CHECK_THAT(error_message(full.substr(0, 4)),
             Catch::Contains("invalid memory size \"512M\": unknown unit \"M\""));
  CHECK_THAT(error_message(full.substr(0, 3)), Catch::Contains("missing unit"));
  // Not NUL-terminated.
  char const buffer[] = {'2', ' ', 'K', 'B'};
  CHECK(rmm::parse_memory_size(std::string_view{buffer, sizeof(buffer)}) == 2 * KiB);
}
