// Sections of LLVM's basic-block address map encoded by hand, by the layout
// mapper/bb_addr_map.h describes, for tests of what reads them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace profcollect::bb_addr_map_encoding {

// Metadata bits (BBEntry::Metadata::encode).
constexpr uint32_t kReturn = 1, kTailCall = 2, kEhPad = 4, kFallThrough = 8, kIndirect = 16;
// Feature bits (BBAddrMap::Features::encode).
constexpr uint8_t kEntryCount = 1, kFreq = 2, kProb = 4, kRanges = 8;

class Encoder {
 public:
  explicit Encoder(uint8_t address_size = 8, bool little_endian = true)
      : address_size_(address_size), little_endian_(little_endian) {}

  Encoder& u8(uint8_t b) {
    bytes.push_back(b);
    return *this;
  }
  Encoder& raw(std::initializer_list<uint8_t> b) {
    bytes.insert(bytes.end(), b);
    return *this;
  }
  Encoder& uleb(uint64_t v) {
    do {
      const uint8_t b = v & 0x7f;
      v >>= 7;
      bytes.push_back(v ? b | 0x80 : b);
    } while (v);
    return *this;
  }
  Encoder& address(uint64_t a) {
    for (int i = 0; i < address_size_; ++i) {
      const int shift = 8 * (little_endian_ ? i : address_size_ - 1 - i);
      bytes.push_back(static_cast<uint8_t>(a >> shift));
    }
    return *this;
  }
  Encoder& header(uint8_t version, uint8_t features) { return u8(version).u8(features); }
  // A version 2 block: ID, offset from the previous block's end, size, metadata.
  Encoder& block(uint32_t id, uint32_t gap, uint32_t size, uint32_t metadata) {
    return uleb(id).uleb(gap).uleb(size).uleb(metadata);
  }

  std::vector<uint8_t> bytes;

 private:
  int address_size_;
  bool little_endian_;
};

}  // namespace profcollect::bb_addr_map_encoding
