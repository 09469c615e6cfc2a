#include "record/build_id.h"

#include <algorithm>

namespace profcollect {

BuildId::BuildId(std::span<const uint8_t> bytes) {
  size_ = static_cast<uint8_t>(std::min(bytes.size(), kMaxSize));
  std::copy_n(bytes.begin(), size_, bytes_.begin());
}

std::optional<BuildId> BuildId::from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0 || hex.size() / 2 > kMaxSize) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::array<uint8_t, kMaxSize> buf{};
  for (size_t i = 0; i < hex.size() / 2; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    buf[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return BuildId(std::span<const uint8_t>(buf.data(), hex.size() / 2));
}

std::string BuildId::to_hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size_ * 2);
  for (size_t i = 0; i < size_; ++i) {
    out.push_back(kDigits[bytes_[i] >> 4]);
    out.push_back(kDigits[bytes_[i] & 0xf]);
  }
  return out;
}

bool BuildId::operator==(const BuildId& other) const {
  auto trimmed = [](const BuildId& id) {
    size_t n = id.size_;
    while (n > 0 && id.bytes_[n - 1] == 0) --n;
    return n;
  };
  size_t a = trimmed(*this), b = trimmed(other);
  return a == b && std::equal(bytes_.begin(), bytes_.begin() + a, other.bytes_.begin());
}

}  // namespace profcollect
