/**
 * @file resource_uuid.hpp
 * @brief rmm::mr::resource_uuid: the 128-bit identifier that names an IPC-enabled resource across
 * processes (cuda_async_pinned_memory_resource's registry).
 */
#pragma once

#include <rmm/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>

namespace rmm::mr {

/**
 * @brief A 128-bit universally unique identifier (RFC 4122 layout), naming an IPC-enabled
 * resource across processes and keying the registry of cuda_async_pinned_memory_resource.
 *
 * A value type; thread-safe (generate() uses a local std::random_device).
 */
class resource_uuid {
 public:
  /// @brief The 16 bytes, in the order of the textual form.
  using bytes_type = std::array<std::uint8_t, 16>;

  /// @brief The nil UUID (all zero).
  constexpr resource_uuid() noexcept = default;

  /// @brief The UUID with these bytes.
  constexpr explicit resource_uuid(bytes_type const& bytes) noexcept : bytes_{bytes} {}

  /// @brief A random (version 4) UUID.
  /// @throws std::exception if std::random_device fails.
  [[nodiscard]] static resource_uuid generate() {
    std::random_device source;
    bytes_type bytes{};
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
      auto const word = static_cast<std::uint32_t>(source());
      for (std::size_t j = 0; j < 4; ++j) {
        bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
      }
    }
    bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0FU) | 0x40U);  // version 4
    bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3FU) | 0x80U);  // RFC 4122 variant
    return resource_uuid{bytes};
  }

  /**
   * @brief Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex digits in either case).
   * @throws rmm::logic_error naming the text if it is not of that form.
   */
  [[nodiscard]] static resource_uuid from_string(std::string_view text) {
    auto const fail = [&] {
      RMM_FAIL("resource_uuid: '" + std::string{text} +
               "' is not a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
    };
    if (text.size() != 36) {
      fail();
    }
    bytes_type bytes{};
    std::size_t out = 0;
    for (std::size_t i = 0; i < text.size();) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (text[i] != '-') {
          fail();
        }
        ++i;
        continue;
      }
      int const high = hex_value(text[i]);
      int const low  = hex_value(text[i + 1]);
      if (high < 0 || low < 0) {
        fail();
      }
      bytes[out++] = static_cast<std::uint8_t>(high * 16 + low);
      i += 2;
    }
    return resource_uuid{bytes};
  }

  /// @brief The 16 bytes.
  [[nodiscard]] constexpr bytes_type const& bytes() const noexcept { return bytes_; }

  /// @brief True for the nil UUID.
  [[nodiscard]] constexpr bool is_nil() const noexcept {
    for (auto byte : bytes_) {
      if (byte != 0) {
        return false;
      }
    }
    return true;
  }

  /// @brief "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex.
  [[nodiscard]] std::string to_string() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) {
        out += '-';
      }
      out += digits[bytes_[i] >> 4U];
      out += digits[bytes_[i] & 0x0FU];
    }
    return out;
  }

  /// @name Comparisons by value (the order is that of the bytes)
  ///@{
  friend constexpr bool operator==(resource_uuid const& a, resource_uuid const& b) noexcept {
    for (std::size_t i = 0; i < a.bytes_.size(); ++i) {
      if (a.bytes_[i] != b.bytes_[i]) {
        return false;
      }
    }
    return true;
  }
  friend constexpr bool operator!=(resource_uuid const& a, resource_uuid const& b) noexcept {
    return !(a == b);
  }
  friend constexpr bool operator<(resource_uuid const& a, resource_uuid const& b) noexcept {
    for (std::size_t i = 0; i < a.bytes_.size(); ++i) {
      if (a.bytes_[i] != b.bytes_[i]) {
        return a.bytes_[i] < b.bytes_[i];
      }
    }
    return false;
  }
  ///@}

 private:
  static constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  bytes_type bytes_{};
};

}  // namespace rmm::mr
