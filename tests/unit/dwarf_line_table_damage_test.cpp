// DwarfLineTable on damaged line programs: a length that would wrap the reading position around
// ends the parse with an error instead of looping, and SLEB128 values and line advances at the
// edges of 64 bits wrap as LLVM's unsigned line numbers do instead of overflowing. The programs
// are the fuzz regression inputs (tests/fuzz/make_regressions.py).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "mapper/dwarf_line_table.h"

namespace profcollect {
namespace {

std::vector<uint8_t> regression(const std::string& name) {
  std::ifstream in(
      std::string(PROFCOLLECT_SOURCE_DIR) + "/tests/fuzz/regressions/dwarf_line_table_fuzz/" + name,
      std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DwarfLineTableDamage, ExtendedOpcodeLongerThanTheUnitIsAnErrorNotALoop) {
  // DW_LNE with length 2^64 - 3: the next opcode's offset would wrap back onto this one.
  const std::vector<uint8_t> program = regression("extended_opcode_huge_length");
  ASSERT_FALSE(program.empty());
  try {
    DwarfLineTable::parse(program, 0);
    FAIL() << "parsed a line program whose extended opcode runs past its unit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("past the unit"), std::string::npos) << e.what();
  }
}

TEST(DwarfLineTableDamage, SlebOfInt64MinAndOverflowingLineAdvancesWrapTo32Bits) {
  // advance_line(-2^62) (a 9-byte SLEB128 whose sign extension sets bit 63), copy, then twice
  // advance_line(INT64_MAX), copy: line 1 - 2^62 + 2 * (2^63 - 1), of which rows keep 32 bits.
  const std::vector<uint8_t> program = regression("sleb_int64_min_and_line_overflow");
  ASSERT_FALSE(program.empty());
  const DwarfLineTable table = DwarfLineTable::parse(program, 0);
  ASSERT_EQ(table.rows().size(), 3u);
  EXPECT_EQ(table.rows()[0].line, 1u);
  EXPECT_EQ(table.rows()[1].line, 0xffffffffu);
  EXPECT_TRUE(table.rows()[2].end_sequence);
  const auto row = table.find(0x401000);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->line, 0xffffffffu) << "the last row at an address wins";
}

TEST(DwarfLineTableDamage, HeaderLengthPastTheUnitIsAnError) {
  std::vector<uint8_t> program = regression("seed_dwarf4");
  ASSERT_GE(program.size(), 10u);
  program[6] = program[7] = program[8] = program[9] = 0xff;  // header_length of a DWARF 4 unit
  EXPECT_THROW(DwarfLineTable::parse(program, 0), std::runtime_error);
}

}  // namespace
}  // namespace profcollect
