// A GNU build-id: up to 20 bytes (SHA-1; MD5 and xxhash ids are shorter), stored inline so that
// records carrying one allocate nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace profcollect {

class BuildId {
 public:
  static constexpr size_t kMaxSize = 20;

  BuildId() = default;
  explicit BuildId(std::span<const uint8_t> bytes);

  // Parses lowercase or uppercase hex; nullopt if not hex or longer than kMaxSize bytes.
  static std::optional<BuildId> from_hex(std::string_view hex);

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {bytes_.data(), size_}; }
  std::string to_hex() const;

  // perf pads build-ids to 20 bytes with zeros in MMAP2 and in the build-id section; compare
  // ignoring trailing zero bytes so a 20-byte padded id equals the ELF note's shorter one.
  bool operator==(const BuildId& other) const;

 private:
  std::array<uint8_t, kMaxSize> bytes_{};
  uint8_t size_ = 0;
};

}  // namespace profcollect
