#include "mapper/eh_frame_ranges.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace profcollect {

namespace {

// DW_EH_PE_* pointer encodings (LSB "Linux Standard Base Core Specification", .eh_frame).
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kPcrel = 0x10;

class EhFrameReader {
 public:
  EhFrameReader(std::span<const uint8_t> bytes, bool little_endian)
      : bytes_(bytes), little_endian_(little_endian) {}

  size_t pos() const { return pos_; }
  void seek(size_t pos) { pos_ = pos; }
  bool ok() const { return ok_; }

  uint64_t fixed(size_t n) {
    if (!ok_ || n > bytes_.size() - pos_) return fail();
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t b = bytes_[pos_ + i];
      v |= little_endian_ ? b << (8 * i) : b << (8 * (n - 1 - i));
    }
    pos_ += n;
    return v;
  }
  uint64_t uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0; ok_; shift += 7) {
      if (pos_ >= bytes_.size()) return fail();
      const uint8_t b = bytes_[pos_++];
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  int64_t sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      if (!ok_ || pos_ >= bytes_.size()) return static_cast<int64_t>(fail());
      b = bytes_[pos_++];
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }
  std::string cstring() {
    std::string s;
    while (ok_) {
      if (pos_ >= bytes_.size()) {
        fail();
        break;
      }
      const char c = static_cast<char>(bytes_[pos_++]);
      if (c == 0) break;
      s.push_back(c);
    }
    return s;
  }
  // A pointer in `encoding`; `apply_relative` is false for pc_range (a length, not an address).
  uint64_t pointer(uint8_t encoding, uint64_t section_addr, bool is_64bit, bool apply_relative) {
    const uint64_t field_addr = section_addr + pos_;
    uint64_t v = 0;
    switch (encoding & 0x0f) {
      case 0x00:
        v = fixed(is_64bit ? 8 : 4);
        break;
      case 0x01:
        v = uleb();
        break;
      case 0x02:
        v = fixed(2);
        break;
      case 0x03:
        v = fixed(4);
        break;
      case 0x04:
        v = fixed(8);
        break;
      case 0x09:
        v = static_cast<uint64_t>(sleb());
        break;
      case 0x0a:
        v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(fixed(2))));
        break;
      case 0x0b:
        v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(fixed(4))));
        break;
      case 0x0c:
        v = fixed(8);
        break;
      default:
        return fail();
    }
    if (apply_relative && (encoding & 0x70) == kPcrel) v += field_addr;
    if (!is_64bit) v &= 0xffffffffu;
    return v;
  }

 private:
  uint64_t fail() {
    ok_ = false;
    return 0;
  }
  std::span<const uint8_t> bytes_;
  bool little_endian_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The FDE pointer encoding ('R' augmentation) of the CIE at `offset`; absptr when absent.
std::optional<uint8_t> cie_fde_encoding(std::span<const uint8_t> bytes, size_t offset,
                                        uint64_t section_addr, bool is_64bit, bool little_endian) {
  EhFrameReader r(bytes, little_endian);
  r.seek(offset);
  size_t id_size = 4;
  if (r.fixed(4) == 0xffffffffu) {
    r.fixed(8);
    id_size = 8;
  }
  const uint64_t id = r.fixed(id_size);
  if (!r.ok() || id != 0) return std::nullopt;
  const uint8_t version = static_cast<uint8_t>(r.fixed(1));
  const std::string augmentation = r.cstring();
  if (augmentation.find("eh") != std::string::npos) r.fixed(is_64bit ? 8 : 4);
  if (version >= 4) r.fixed(2);  // address size, segment selector size
  r.uleb();                      // code alignment
  r.sleb();                      // data alignment
  if (version == 1) {
    r.fixed(1);
  } else {
    r.uleb();
  }
  uint8_t encoding = 0;  // DW_EH_PE_absptr
  if (!augmentation.empty() && augmentation[0] == 'z') {
    r.uleb();  // augmentation data length
    for (size_t i = 1; i < augmentation.size() && r.ok(); ++i) {
      switch (augmentation[i]) {
        case 'L':
          r.fixed(1);
          break;
        case 'R':
          encoding = static_cast<uint8_t>(r.fixed(1));
          break;
        case 'P': {
          const uint8_t personality = static_cast<uint8_t>(r.fixed(1));
          r.pointer(personality & 0x7f, section_addr, is_64bit, false);
          break;
        }
        case 'S':
        case 'B':
        case 'G':
          break;
        default:
          return encoding;  // unknown letters: the rest of the data is unreadable
      }
    }
  }
  if (!r.ok()) return std::nullopt;
  return encoding;
}

}  // namespace

std::vector<CodeRange> parse_eh_frame(std::span<const uint8_t> bytes, uint64_t section_addr,
                                      bool is_64bit, bool little_endian) {
  std::vector<CodeRange> ranges;
  std::map<size_t, std::optional<uint8_t>> cie_encodings;
  EhFrameReader r(bytes, little_endian);
  while (r.ok() && r.pos() + 4 <= bytes.size()) {
    uint64_t length = r.fixed(4);
    if (length == 0) break;  // terminator
    size_t id_size = 4;
    if (length == 0xffffffffu) {
      length = r.fixed(8);
      id_size = 8;
    }
    const size_t body = r.pos();
    if (!r.ok() || length > bytes.size() - body) break;
    const size_t next = body + length;
    const uint64_t id = r.fixed(id_size);
    if (id != 0) {  // an FDE; id is the distance back to its CIE
      if (id > body) break;
      const size_t cie = body - id;
      auto found = cie_encodings.find(cie);
      if (found == cie_encodings.end()) {
        found =
            cie_encodings
                .emplace(cie, cie_fde_encoding(bytes, cie, section_addr, is_64bit, little_endian))
                .first;
      }
      if (found->second && *found->second != kOmit) {
        const uint8_t encoding = *found->second;
        const uint64_t start = r.pointer(encoding, section_addr, is_64bit, true);
        const uint64_t size = r.pointer(encoding & 0x0f, section_addr, is_64bit, false);
        if (r.ok() && start != 0) ranges.push_back(CodeRange{start, size});
      }
    }
    r.seek(next);
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const CodeRange& a, const CodeRange& b) { return a.start < b.start; });
  return ranges;
}

std::vector<CodeRange> read_fde_ranges(const ElfBinary& binary) {
  const ElfSection* section = binary.section_by_name(".eh_frame");
  if (section == nullptr) return {};
  std::span<const uint8_t> bytes = binary.section_bytes(*section);
  if (bytes.empty()) return {};
  return parse_eh_frame(bytes, section->addr, binary.is_64bit(), binary.little_endian());
}

}  // namespace profcollect
