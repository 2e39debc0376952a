// benchmarks/stack_shift.hpp, on the host: with_stack_shift must call its function exactly once,
// return its result, and start that function's frames the requested number of bytes lower (the
// probe of docs/benchmarks.md, "Issue 12, fortieth step", reads nothing if the shift is lost).
#include "stack_shift.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

namespace {

namespace rb = rmm::bench;

// The address of a local of a frame of its own (where a callee's frames start), kept in a global:
// a function may not return its own local's address.
std::uintptr_t volatile seen_frame = 0;

[[gnu::noinline]] void record_frame() {
  int volatile local = 0;
  seen_frame         = reinterpret_cast<std::uintptr_t>(&local);
}

// Where a callee's local lies when it runs below a shift of `bytes`.
[[gnu::noinline]] std::uintptr_t frame_address_after(std::size_t bytes) {
  rb::with_stack_shift(bytes, [] { record_frame(); });
  return seen_frame;
}

}  // namespace

TEST_CASE("stack shift: the function runs once and its result comes back", "[bench][stack]") {
  for (std::size_t const bytes : {std::size_t{0}, std::size_t{16}, std::size_t{4096}}) {
    int calls       = 0;
    int const value = rb::with_stack_shift(bytes, [&] {
      ++calls;
      return 42;
    });
    CHECK(calls == 1);
    CHECK(value == 42);
  }
}

TEST_CASE("stack shift: frames start the requested bytes lower", "[bench][stack]") {
  // Shifts against a reference shift (not against 0, whose plain call may be laid out
  // differently): the difference is the requested one, give or take the alignment the compiler
  // adds to an alloca.
  std::uintptr_t const reference = frame_address_after(16);
  for (std::size_t const bytes : {std::size_t{64}, std::size_t{1024}, std::size_t{4080}}) {
    std::uintptr_t const shifted = frame_address_after(bytes);
    REQUIRE(shifted < reference);
    std::uintptr_t const moved = reference - shifted;
    CHECK(moved + 16 >= bytes - 16);
    CHECK(moved <= bytes - 16 + 32);
  }
}
