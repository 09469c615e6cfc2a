// The unit an address belongs to where units' ranges overlap, by the rule of LLVM's
// DWARFDebugAranges::construct (llvm/lib/DebugInfo/DWARF/DWARFDebugAranges.cpp, LLVM 19): the
// cases below are worked out from that sweep by hand. On a real binary the rule is judged by
// llvm-profgen-19 (tests/bench/autofdo_big_bench.sh: two units of profcollect's own build
// describe one COMDAT function; the profiles became equal with this rule).
#include <gtest/gtest.h>

#include <vector>

#include "mapper/unit_address_ranges.h"

namespace profcollect {
namespace {

using Pieces = std::vector<UnitAddressRange>;

TEST(UnitAddressRanges, DisjointRangesStayAsTheyAre) {
  EXPECT_EQ(disjoint_unit_ranges({{0x30, 0x40, 2}, {0x10, 0x20, 1}, {0x20, 0x30, 0}}),
            (Pieces{{0x10, 0x20, 1}, {0x20, 0x30, 0}, {0x30, 0x40, 2}}));
}

TEST(UnitAddressRanges, TheSameRangeInTwoUnitsGoesToTheFirstUnit) {
  // A COMDAT function two units describe: the lower unit, whatever the order given.
  EXPECT_EQ(disjoint_unit_ranges({{0x100, 0x180, 7}, {0x100, 0x180, 3}}),
            (Pieces{{0x100, 0x180, 3}}));
}

TEST(UnitAddressRanges, APieceStaysWithTheUnitBeforeItWhileThatUnitHoldsIt) {
  // Unit 5 holds [0x10, 0x40); unit 2 [0x20, 0x30): the middle stays unit 5's (the piece before
  // it was unit 5's, which still holds it), though unit 2 is lower.
  EXPECT_EQ(disjoint_unit_ranges({{0x10, 0x40, 5}, {0x20, 0x30, 2}}), (Pieces{{0x10, 0x40, 5}}));
  // Starting together, the lower unit takes the piece, and keeps what it holds after.
  EXPECT_EQ(disjoint_unit_ranges({{0x10, 0x40, 5}, {0x10, 0x30, 2}}),
            (Pieces{{0x10, 0x30, 2}, {0x30, 0x40, 5}}));
  // A gap between pieces ends the stickiness: after it the lowest unit holding the address.
  EXPECT_EQ(disjoint_unit_ranges({{0x10, 0x20, 5}, {0x30, 0x40, 5}, {0x30, 0x40, 2}}),
            (Pieces{{0x10, 0x20, 5}, {0x30, 0x40, 2}}));
}

TEST(UnitAddressRanges, EmptyRangesAreIgnoredAndLookupsFindThePiece) {
  const Pieces pieces = disjoint_unit_ranges({{0x10, 0x10, 9}, {0x10, 0x20, 1}, {0x28, 0x30, 4}});
  EXPECT_EQ(pieces, (Pieces{{0x10, 0x20, 1}, {0x28, 0x30, 4}}));
  EXPECT_EQ(unit_range_holding(pieces, 0xf), nullptr);
  ASSERT_NE(unit_range_holding(pieces, 0x10), nullptr);
  EXPECT_EQ(unit_range_holding(pieces, 0x1f)->unit, 1u);
  EXPECT_EQ(unit_range_holding(pieces, 0x20), nullptr);
  EXPECT_EQ(unit_range_holding(pieces, 0x2f)->unit, 4u);
  EXPECT_EQ(unit_range_holding(pieces, 0x30), nullptr);
}

}  // namespace
}  // namespace profcollect
