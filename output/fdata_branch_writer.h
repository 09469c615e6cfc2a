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
//
// On a BOLTed binary with BOLT address translation (mapper/bolted_binary.h) it writes what
// perf2bolt 19 writes there: the input binary's profile, first line "boltedcollection".
// - a taken branch's ends are translated by BAT (its source to the entry at or before it: the
//   branch itself, or its block's start), a cold fragment's ends named by the function it was
//   split from, a function named by its "name/file/N" name when it has one; returns are dropped
//   as above (judged on the BOLTed code);
// - a fall-through range must start and end in one fragment that BAT covers (else dropped); it
//   gives one edge per BAT block boundary it crosses in the BOLTed layout, from the block's
//   start to the next block's start, both translated; a range running backwards gives none.
//   The call-block rule for "f" ranges does not apply (perf2bolt's BAT path ignores the origin).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mapper/bolt_block_map.h"
#include "mapper/bolted_binary.h"
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
using BranchFdataEdges = std::map<std::pair<std::string, std::string>, FdataBranchCounts>;

struct BranchFdata {
  bool bolted_collection = false;  // collected on a BOLTed binary (first line boltedcollection)
  BranchFdataEdges edges;
};

class FdataBranchWriter {
 public:
  // All must outlive the writer and describe one binary. `bolted`: the binary's BOLT address
  // translation, to write the input binary's profile (null, or a binary without a readable
  // BAT: its own profile).
  FdataBranchWriter(const SymbolTable& symbols, BoltBlockMap& blocks,
                    const BoltedBinary* bolted = nullptr)
      : symbols_(symbols), blocks_(blocks), bolted_(bolted && bolted->table() ? bolted : nullptr) {}

  BranchFdata to_fdata(const BranchProfile& profile);
  // The whole file's text.
  std::string write(const BranchProfile& profile);
  static std::string format(const BranchFdata& fdata);

  const FdataBranchStats& stats() const { return stats_; }

 private:
  std::string location(const FunctionSymbol* function, uint64_t address) const;
  std::string translated_location(const BatLocation& at, uint64_t address) const;
  void add_branch(BranchFdata& out, const TakenBranch& branch, const BranchCounts& counts);
  void add_translated_branch(BranchFdata& out, const TakenBranch& branch,
                             const BranchCounts& counts);
  void add_fall_through(BranchFdata& out, const FallThrough& range, uint64_t count);
  void add_translated_fall_through(BranchFdata& out, const FallThrough& range, uint64_t count);

  const SymbolTable& symbols_;
  BoltBlockMap& blocks_;
  const BoltedBinary* bolted_;
  FdataBranchStats stats_;
  std::vector<std::pair<uint64_t, uint64_t>> boundaries_;  // reused by each range
};

}  // namespace profcollect
