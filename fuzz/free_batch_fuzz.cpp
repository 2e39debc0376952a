/**
 * @file free_batch_fuzz.cpp
 * @brief libFuzzer target: decodes the input into free_batch operations (push with its fullness
 * ahead, exact take, take all, take the oldest) and checks each against a plain vector model;
 * aborts on any disagreement.
 *
 * Input: byte 0 picks the byte limit; then each operation is an opcode byte and its operands. A
 * missing byte reads as zero, so every input is a valid program.
 */
#include "fuzz_input.hpp"

#include <rmm/mr/detail/algorithms/free_batch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t capacity = 8;
using batch                    = rmm::mr::detail::free_batch<capacity>;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  rmm::fuzz::reader in{data, size};
  std::size_t const limit = std::size_t{in.byte()} * 256;
  batch b{limit};
  std::vector<std::pair<void*, std::size_t>> model;
  std::uintptr_t next = 0x1000;
  auto model_bytes    = [&] {
    std::size_t n = 0;
    for (auto const& m : model) {
      n += m.second;
    }
    return n;
  };
  while (!in.done()) {
    std::uint8_t const op = in.byte();
    std::size_t const blk = 256 * (1 + in.byte() % 8U);
    switch (op % 4U) {
      case 0: {
        if (b.full()) {
          break;  // push's precondition
        }
        bool const full =
            model.size() + 1 == capacity || (limit != 0 && model_bytes() + blk >= limit);
        FUZZ_CHECK(b.full_after(blk) == full);
        model.emplace_back(reinterpret_cast<void*>(next), blk);
        next += 0x1000;
        FUZZ_CHECK(b.push(model.back().first, blk) == full);
        break;
      }
      case 3: {  // the oldest k blocks out, the newest kept
        std::size_t const k = in.byte() % (capacity + 2);
        std::array<batch::block, capacity> out{};
        std::size_t const n = b.take_oldest(k, out);
        FUZZ_CHECK(n == (k < model.size() ? k : model.size()));
        for (std::size_t i = 0; i < n; ++i) {
          FUZZ_CHECK(out[i].ptr == model[i].first && out[i].size == model[i].second);
        }
        model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n));
        break;
      }
      case 1: {
        std::optional<void*> expected;
        for (std::size_t i = model.size(); i > 0; --i) {
          if (model[i - 1].second == blk) {
            expected = model[i - 1].first;
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(i - 1));
            break;
          }
        }
        FUZZ_CHECK(b.take_exact(blk) == expected);
        break;
      }
      default: {
        std::array<batch::block, capacity> out{};
        std::size_t const n = b.take_all(out);
        FUZZ_CHECK(n == model.size());
        for (std::size_t i = 0; i < n; ++i) {
          FUZZ_CHECK(out[i].ptr == model[i].first && out[i].size == model[i].second);
        }
        model.clear();
      }
    }
    FUZZ_CHECK(b.size() == model.size() && b.bytes() == model_bytes());
    FUZZ_CHECK(b.empty() == model.empty());
  }
  return 0;
}
