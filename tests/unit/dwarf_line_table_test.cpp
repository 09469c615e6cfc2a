// DwarfLineTable: .debug_line programs assembled by hand (DWARF 4 and 5 headers), looked up the
// way llvm-symbolizer looks them up.
#include "mapper/dwarf_line_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace profcollect {
namespace {

struct Bytes {
  std::vector<uint8_t> b;
  void u8(uint8_t v) { b.push_back(v); }
  void fixed(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void uleb(uint64_t v) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      if (v) byte |= 0x80;
      b.push_back(byte);
    } while (v);
  }
  void sleb(int64_t v) {
    for (bool more = true; more;) {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
      if (more) byte |= 0x80;
      b.push_back(byte);
    }
  }
  void str(const std::string& s) {
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
  void append(const Bytes& o) { b.insert(b.end(), o.b.begin(), o.b.end()); }
};

constexpr int kLineBase = -5, kLineRange = 14, kOpcodeBase = 13;

void set_address(Bytes& p, uint64_t a) {
  p.u8(0);
  p.uleb(9);
  p.u8(2);
  p.fixed(a, 8);
}
void end_sequence(Bytes& p) {
  p.u8(0);
  p.uleb(1);
  p.u8(1);
}
void set_discriminator(Bytes& p, uint64_t d) {
  Bytes value;
  value.uleb(d);
  p.u8(0);
  p.uleb(1 + value.b.size());
  p.u8(4);
  p.append(value);
}
void advance_line(Bytes& p, int64_t n) {
  p.u8(3);
  p.sleb(n);
}
void advance_pc(Bytes& p, uint64_t n) {
  p.u8(2);
  p.uleb(n);
}
void copy(Bytes& p) { p.u8(1); }
void special(Bytes& p, int address_advance, int line_advance) {
  p.u8(static_cast<uint8_t>((line_advance - kLineBase) + kLineRange * address_advance +
                            kOpcodeBase));
}

// Two sequences and a discarded one (tombstone address):
//   0x1000 line 10, 0x1004 line 11, 0x1006 line 11 disc 0xb0000002, 0x1006 line 12, end 0x100a
//   0x2000 line 20, end 0x2010
Bytes program() {
  Bytes p;
  set_address(p, 0x1000);
  advance_line(p, 9);
  copy(p);
  special(p, 4, 1);
  advance_pc(p, 2);
  set_discriminator(p, 0xb0000002u);
  copy(p);
  advance_line(p, 1);
  copy(p);
  advance_pc(p, 4);
  end_sequence(p);
  set_address(p, 0xffffffffffffffffull);
  advance_line(p, 99);
  copy(p);
  advance_pc(p, 4);
  end_sequence(p);
  set_address(p, 0x2000);
  advance_line(p, 19);
  copy(p);
  advance_pc(p, 0x10);
  end_sequence(p);
  return p;
}

void standard_fields(Bytes& h) {
  h.u8(1);  // minimum_instruction_length
  h.u8(1);  // maximum_operations_per_instruction
  h.u8(1);  // default_is_stmt
  h.u8(static_cast<uint8_t>(kLineBase));
  h.u8(kLineRange);
  h.u8(kOpcodeBase);
  for (uint8_t n : {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1}) h.u8(n);
}

// A unit: unit_length, version, [v5: address and selector sizes], header_length, header, program.
std::vector<uint8_t> unit(int version, const Bytes& body) {
  Bytes header;
  standard_fields(header);
  if (version >= 5) {
    header.u8(1);  // directory entry format: DW_LNCT_path, DW_FORM_string
    header.uleb(1);
    header.uleb(0x08);
    header.uleb(1);
    header.str("/src");
    header.u8(2);  // file entry format: path/string, directory_index/data1
    header.uleb(1);
    header.uleb(0x08);
    header.uleb(2);
    header.uleb(0x0b);
    header.uleb(1);
    header.str("a.c");
    header.u8(0);
  } else {
    header.u8(0);  // no include directories
    header.str("a.c");
    header.uleb(0);
    header.uleb(0);
    header.uleb(0);
    header.u8(0);
  }
  Bytes after_length;
  after_length.fixed(version, 2);
  if (version >= 5) {
    after_length.u8(8);
    after_length.u8(0);
  }
  after_length.fixed(header.b.size(), 4);
  after_length.append(header);
  after_length.append(body);
  Bytes all;
  all.fixed(after_length.b.size(), 4);
  all.append(after_length);
  return all.b;
}

class DwarfLineTableTest : public ::testing::TestWithParam<int> {};

TEST_P(DwarfLineTableTest, FindsTheLastRowAtOrBelowTheAddressInItsSequence) {
  // Another unit first, so that the table is read at an offset.
  std::vector<uint8_t> section = unit(GetParam(), Bytes{});
  const uint64_t offset = section.size();
  const std::vector<uint8_t> second = unit(GetParam(), program());
  section.insert(section.end(), second.begin(), second.end());
  const DwarfLineTable table = DwarfLineTable::parse(section, offset);
  EXPECT_EQ(table.version(), GetParam());

  auto line_at = [&](uint64_t a) -> int64_t {
    auto row = table.find(a);
    return row ? static_cast<int64_t>(row->line) : -1;
  };
  EXPECT_EQ(line_at(0xfff), -1);
  EXPECT_EQ(line_at(0x1000), 10);
  EXPECT_EQ(line_at(0x1003), 10);
  EXPECT_EQ(line_at(0x1004), 11);
  EXPECT_EQ(line_at(0x1006), 12);  // two rows at 0x1006: the last wins
  EXPECT_EQ(table.find(0x1006)->discriminator, 0u);
  EXPECT_EQ(line_at(0x1009), 12);
  EXPECT_EQ(line_at(0x100a), -1);  // the end of the sequence
  EXPECT_EQ(line_at(0x1fff), -1);
  EXPECT_EQ(line_at(0x2000), 20);
  EXPECT_EQ(line_at(0x200f), 20);
  EXPECT_EQ(line_at(0x2010), -1);
  EXPECT_EQ(line_at(0xfffffffffffffff0ull), -1);  // the discarded sequence is gone

  // The 32-bit discriminator libdw refuses is kept whole.
  bool wide = false;
  for (const LineRow& row : table.rows()) wide = wide || row.discriminator == 0xb0000002u;
  EXPECT_TRUE(wide);
}

INSTANTIATE_TEST_SUITE_P(Versions, DwarfLineTableTest, ::testing::Values(4, 5));

TEST(DwarfLineTable, TruncatedProgramIsAnError) {
  std::vector<uint8_t> section = unit(5, program());
  section.resize(section.size() - 2);  // inside the last DW_LNE_end_sequence
  section[0] = static_cast<uint8_t>(section.size() - 4);
  EXPECT_THROW(DwarfLineTable::parse(section, 0), std::runtime_error);
  EXPECT_THROW(DwarfLineTable::parse(section, section.size() + 10), std::runtime_error);
}

}  // namespace
}  // namespace profcollect
