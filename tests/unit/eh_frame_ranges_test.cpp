// .eh_frame FDE ranges from hand-built CIE/FDE records (LSB Core spec, "Exception Frames").
#include "mapper/eh_frame_ranges.h"

#include <gtest/gtest.h>

#include <vector>

namespace profcollect {
namespace {

class EhFrame {
 public:
  explicit EhFrame(uint64_t addr) : addr_(addr) {}

  // A CIE "zR" with the given FDE pointer encoding; returns its offset.
  size_t cie(uint8_t fde_encoding) {
    const size_t start = begin_record();
    u32(0);               // CIE id
    bytes_.push_back(1);  // version
    for (char c : {'z', 'R', '\0'}) bytes_.push_back(static_cast<uint8_t>(c));
    bytes_.push_back(1);     // code alignment (uleb)
    bytes_.push_back(0x78);  // data alignment -8 (sleb)
    bytes_.push_back(16);    // return address register
    bytes_.push_back(1);     // augmentation data length
    bytes_.push_back(fde_encoding);
    end_record(start);
    return start;
  }

  // An FDE of `cie` for [start, start + size), pc_begin pc-relative sdata4.
  void fde_pcrel(size_t cie_offset, uint64_t start, uint32_t size) {
    const size_t record = begin_record();
    u32(static_cast<uint32_t>(bytes_.size() - cie_offset));  // CIE pointer: back to the CIE
    const uint64_t field = addr_ + bytes_.size();
    u32(static_cast<uint32_t>(start - field));
    u32(size);
    bytes_.push_back(0);  // augmentation data length
    end_record(record);
  }

  // An FDE with absolute udata8 pointers.
  void fde_abs8(size_t cie_offset, uint64_t start, uint64_t size) {
    const size_t record = begin_record();
    u32(static_cast<uint32_t>(bytes_.size() - cie_offset));
    u64(start);
    u64(size);
    bytes_.push_back(0);
    end_record(record);
  }

  void terminator() { u32(0); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  size_t begin_record() {
    const size_t start = bytes_.size();
    u32(0);  // length, patched in end_record
    return start;
  }
  void end_record(size_t start) {
    while ((bytes_.size() - start) % 8 != 0) bytes_.push_back(0);  // DW_CFA_nop padding
    const uint32_t length = static_cast<uint32_t>(bytes_.size() - start - 4);
    for (int i = 0; i < 4; ++i) bytes_[start + i] = static_cast<uint8_t>(length >> (8 * i));
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  uint64_t addr_;
  std::vector<uint8_t> bytes_;
};

TEST(EhFrameRanges, PcRelativeAndAbsoluteFdes) {
  EhFrame f(0x2100);
  const size_t pcrel = f.cie(0x1b);  // DW_EH_PE_pcrel | DW_EH_PE_sdata4
  f.fde_pcrel(pcrel, 0x1200, 0x40);
  f.fde_pcrel(pcrel, 0x1100, 0x22);
  const size_t abs = f.cie(0x04);  // DW_EH_PE_udata8
  f.fde_abs8(abs, 0x1300, 0x18);
  f.fde_abs8(abs, 0, 0x18);  // discarded by the linker: start 0
  f.terminator();
  const auto ranges = parse_eh_frame(f.bytes(), 0x2100, true, true);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].start, 0x1100u);
  EXPECT_EQ(ranges[0].size, 0x22u);
  EXPECT_EQ(ranges[1].start, 0x1200u);
  EXPECT_EQ(ranges[1].size, 0x40u);
  EXPECT_EQ(ranges[2].start, 0x1300u);
  EXPECT_EQ(ranges[2].size, 0x18u);
}

TEST(EhFrameRanges, TruncatedInputKeepsWhatWasRead) {
  EhFrame f(0x2100);
  const size_t cie = f.cie(0x1b);
  f.fde_pcrel(cie, 0x1200, 0x40);
  f.fde_pcrel(cie, 0x1300, 0x40);
  std::vector<uint8_t> cut = f.bytes();
  cut.resize(cut.size() - 6);
  const auto ranges = parse_eh_frame(cut, 0x2100, true, true);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start, 0x1200u);
  EXPECT_TRUE(parse_eh_frame({}, 0, true, true).empty());
}

}  // namespace
}  // namespace profcollect
