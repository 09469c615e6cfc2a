// The functions DWARF describes, as llvm-profgen 19 groups them (ProfiledBinary::
// loadSymbolsFromDWARFUnit): every DW_TAG_subprogram with address ranges, named by its linkage
// name or else its name (through DW_AT_abstract_origin / DW_AT_specification). Subprograms of one
// name are one function with all their ranges (a function split in hot and cold parts, or
// same-named local functions of several units). Ranges that are empty or start below the
// binary's preferred base (discarded code) are dropped.
//
// Each range start is a "function range"; the first subprogram to claim a start keeps it. An
// address belongs to the function range with the highest start at or below it, if it lies
// before that range's end. Whether a range start is a function entry (what calls may target)
// is decided later from the ELF symbols (mapper/autofdo_binary.h).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace profcollect {

struct AddressRange {
  uint64_t begin = 0, end = 0;  // [begin, end)
};

struct DwarfFunction {
  std::string name;                  // linkage name, or DW_AT_name
  std::vector<AddressRange> ranges;  // in the order the subprograms list them
};

struct FunctionRange {
  uint64_t begin = 0, end = 0;
  uint32_t function = 0;  // index into DwarfFunctionIndex::functions()
};

class DwarfFunctionIndex {
 public:
  // Records one subprogram's ranges (already filtered) under its name.
  void add(std::string_view name, std::span<const AddressRange> ranges);

  // The function range holding the address, or nullptr.
  const FunctionRange* find(uint64_t address) const;
  // The function range starting exactly there, or nullptr.
  const FunctionRange* starting_at(uint64_t address) const;

  const std::vector<DwarfFunction>& functions() const { return functions_; }
  const DwarfFunction& function(uint32_t index) const { return functions_[index]; }
  const std::map<uint64_t, FunctionRange>& ranges() const { return ranges_; }

 private:
  std::vector<DwarfFunction> functions_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::map<uint64_t, FunctionRange> ranges_;  // keyed by begin
};

}  // namespace profcollect
