// Which DWARF unit an address belongs to, as LLVM's DWARFDebugAranges decides it (and so
// llvm-symbolizer and llvm-profgen): the units' address ranges made disjoint by a sweep over
// their ends. Where ranges of several units overlap -- gcc's copies of one COMDAT function, which
// GNU ld points at the copy it kept when their sizes match -- a piece goes to the unit the piece
// just before it went to, while that unit still holds it, else to the lowest-numbered unit that
// holds it (units are numbered in file order).
#pragma once

#include <cstdint>
#include <vector>

namespace profcollect {

struct UnitAddressRange {
  uint64_t begin = 0, end = 0;  // [begin, end)
  uint32_t unit = 0;
  bool operator==(const UnitAddressRange&) const = default;
};

// The disjoint pieces, sorted by begin; empty ranges are ignored.
std::vector<UnitAddressRange> disjoint_unit_ranges(const std::vector<UnitAddressRange>& ranges);

// The unit of the piece holding the address, or nullptr.
const UnitAddressRange* unit_range_holding(const std::vector<UnitAddressRange>& pieces,
                                           uint64_t address);

}  // namespace profcollect
