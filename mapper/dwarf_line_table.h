// The line table of one DWARF compile unit, parsed from .debug_line (versions 2 to 5, 32- and
// 64-bit DWARF), with the lookup llvm-symbolizer does (DWARFDebugLine::LineTable::
// lookupAddress): the sequence whose [low, high) holds the address, then the last row at or
// below the address in it -- when several rows share an address (a function's first
// instruction often has two), the last one wins. Rows of sequences that start at the tombstone
// address (all ones: code the linker discarded) are dropped, as are empty sequences.
//
// Our own parser rather than libdw's: libdw 0.188 rejects line programs whose discriminators do
// not fit in 24 bits, which every flow-sensitive-discriminator binary has.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace profcollect {

struct LineRow {
  uint64_t address = 0;
  uint32_t line = 0;
  uint32_t discriminator = 0;
  bool end_sequence = false;
};

class DwarfLineTable {
 public:
  // Parses the line program at `offset` of the .debug_line section. Throws std::runtime_error
  // (naming the offset) when it is truncated or malformed.
  static DwarfLineTable parse(std::span<const uint8_t> debug_line, uint64_t offset);
  // For tests: rows in program order, each sequence ended by an end_sequence row.
  static DwarfLineTable from_rows(const std::vector<LineRow>& rows);

  // The row that holds the address, or nullopt.
  std::optional<LineRow> find(uint64_t address) const;
  const std::vector<LineRow>& rows() const { return rows_; }  // program order
  bool empty() const { return sequences_.empty(); }
  uint16_t version() const { return version_; }

 private:
  struct Sequence {
    uint64_t low = 0, high = 0;  // [low, high)
    size_t first = 0, last = 0;  // rows [first, last), last one the end_sequence row
  };
  void add_row(const LineRow& row);

  std::vector<LineRow> rows_;
  std::vector<Sequence> sequences_;  // sorted by high
  size_t sequence_start_ = 0;        // first row of the sequence being read
  uint16_t version_ = 0;
};

}  // namespace profcollect
