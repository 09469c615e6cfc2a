// BOLT fdata from branch samples (formats.md section 2), as perf2bolt 19 writes it for LBR-style
// input and `llvm-bolt -data=FILE` reads it. No header line; one line per edge:
//
//   <k> <from-func> <from-off> <k> <to-func> <to-off> <mispredicts> <count>
//
// k is 1 for a function (BOLT's name from SymbolTable, offset from its start, hex), 0 for an
// address in no function, written "0 [unknown] <address>" (the address as recorded: an ELF vaddr
// inside the binary, the runtime address outside it).
//
// What perf2bolt 19 does, checked with `perf2bolt --pa` on pre-aggregated input:
// - a taken branch is one line, unless both ends are in no function, or it leaves a return
//   instruction (BOLT 19 does not count returns);
// - a fall-through range becomes one edge per block boundary it crosses, from the last
//   instruction of a block (a trailing nop or the "jmp" of "jcc; jmp" included) to the first of
//   the next, mispredicts 0. The range is dropped whole when it runs backwards, leaves its
//   function, lies in a function that is not simple, or crosses a block that cannot fall
//   through (jump elsewhere, return, trap);
// - a range whose branch came from outside ("f") and that starts a block right after a block
//   ending in a call is taken to start in that call's block (the call returned there), which
//   adds the edge call-block -> its block.
// Equal edges are summed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "mapper/bolt_block_map.h"
#include "mapper/symbol_table.h"
#include "output/branch_profile.h"

namespace profcollect {

struct FdataBranchCounts {
  uint64_t mispredicts = 0;
  uint64_t count = 0;
  bool operator==(const FdataBranchCounts&) const = default;
};

struct FdataBranchStats {
  uint64_t returns_ignored = 0;    // taken branches from a return (weighted)
  uint64_t outside_functions = 0;  // taken branches with both ends in no function
  uint64_t invalid_ranges = 0;     // fall-through ranges dropped (weighted)
};

// "<k> <name> <offset>" for each end -> counts, sorted by those texts.
using BranchFdata = std::map<std::pair<std::string, std::string>, FdataBranchCounts>;

class FdataBranchWriter {
 public:
  // Both must outlive the writer; `blocks` describes the same binary as `symbols`.
  FdataBranchWriter(const SymbolTable& symbols, BoltBlockMap& blocks)
      : symbols_(symbols), blocks_(blocks) {}

  BranchFdata to_fdata(const BranchProfile& profile);
  // The whole file's text.
  std::string write(const BranchProfile& profile);
  static std::string format(const BranchFdata& fdata);

  const FdataBranchStats& stats() const { return stats_; }

 private:
  std::string location(const FunctionSymbol* function, uint64_t address) const;
  void add_fall_through(BranchFdata& out, const FallThrough& range, uint64_t count);

  const SymbolTable& symbols_;
  BoltBlockMap& blocks_;
  FdataBranchStats stats_;
};

}  // namespace profcollect
