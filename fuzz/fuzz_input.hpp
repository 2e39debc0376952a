// Shared by the fuzz targets: a check that aborts (libFuzzer reports the input) and a reader that
// turns the fuzzer's bytes into operation codes and operands, yielding zeros once they run out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <stdexcept>

#define FUZZ_CHECK(cond)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

namespace rmm::fuzz {

class reader {
 public:
  reader(std::uint8_t const* data, std::size_t size) : data_{data}, size_{size} {}
  [[nodiscard]] bool done() const { return size_ == 0; }
  std::uint8_t byte() {
    if (size_ == 0) {
      return 0;
    }
    --size_;
    return *data_++;
  }
  std::size_t u16() { return std::size_t{byte()} | (std::size_t{byte()} << 8U); }
  /// A number below @p bound, mostly small: u16() shifted right by byte() % 16.
  std::size_t skewed(std::size_t bound) {
    std::size_t const v = u16();
    return (v >> (byte() % 16U)) % bound;
  }

 private:
  std::uint8_t const* data_;
  std::size_t size_;
};

/// The element of @p m (not empty) that the next u16() picks.
template <typename Map>
auto pick(Map& m, reader& in) {
  return std::next(m.begin(), static_cast<std::ptrdiff_t>(in.u16() % m.size()));
}

/// Calls f (the structure's validate()); a std::logic_error it throws aborts with its message.
template <typename F>
void validated(F&& f) {
  try {
    f();
  } catch (std::logic_error const& e) {
    std::fprintf(stderr, "validate: %s\n", e.what());
    std::abort();
  }
}

/// Calls f; any exception that escapes it is a finding: abort with its message.
template <typename F>
void abort_on_exception(F&& f) {
  try {
    f();
  } catch (std::exception const& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

/// f() is a misuse the structure must reject with std::invalid_argument: abort if it returns.
template <typename F>
void expect_invalid(F&& f) {
  bool threw = false;
  try {
    f();
  } catch (std::invalid_argument const&) {
    threw = true;
  }
  FUZZ_CHECK(threw);
}

/// Bounds on a tagged list's num_tags() ("one past the highest tag used so far"): at least one
/// past every tag that was given a block (used for sure), at most one past every tag passed to
/// any call; and it never shrinks. Tag 0 always exists.
class tag_count_bounds {
 public:
  void used(std::size_t tag) { lo_ = lo_ > tag + 1 ? lo_ : tag + 1; }
  void passed(std::size_t tag) { hi_ = hi_ > tag + 1 ? hi_ : tag + 1; }
  void check(std::size_t tags) {
    FUZZ_CHECK(tags >= seen_);
    FUZZ_CHECK(lo_ <= tags && tags <= hi_);
    seen_ = tags;
  }

 private:
  std::size_t lo_{1};
  std::size_t hi_{1};
  std::size_t seen_{1};
};

/// Runs d.step(in) until the input is used up or max_ops operations have run.
template <typename Driver>
void run_steps(Driver& d, reader& in, int max_ops) {
  for (int ops = 0; ops < max_ops && !in.done(); ++ops) {
    d.step(in);
  }
}

}  // namespace rmm::fuzz
