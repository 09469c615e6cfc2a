// The basic blocks of a function as BOLT 19 builds its CFG (BinaryFunction::buildCFG), enough
// to turn a fall-through range into the block-to-block edges perf2bolt writes:
//
// - a block starts at the function's entry, at every target of a direct jump inside the
//   function, and at the first instruction after a jump, conditional jump, return or trap --
//   except that a direct jump right after a conditional one stays in its block ("jne a; jmp b"
//   is one block); calls do not end blocks;
// - nops belong to blocks like any instruction (perf2bolt 19 writes a fall-through edge from a
//   trailing nop);
// - a block falls through to the next one when it does not end in a jump, return or trap, when
//   it ends in a conditional jump that is not followed by a jump of its own, or when its jump
//   goes to the next block.
//
// A function that does not decode from end to end, or whose jump lands inside an instruction,
// is "not simple": BOLT ignores fall-through ranges in it. Not modelled: jump-table targets as
// block starts, calls to no-return functions, landing pads. x86-64 and AArch64 (there judged
// only on taken-branch profiles, the edges Arm SPE gives, by llvm-bolt's acceptance).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"

namespace profcollect {

struct BoltBlock {
  uint64_t offset = 0;         // from the function's start
  uint64_t last_offset = 0;    // of its last instruction
  bool ends_in_call = false;   // its last instruction is a call
  bool falls_through = false;  // the next block (in address order) is one of its successors
};

struct BoltFunctionBlocks {
  bool simple = false;
  std::vector<BoltBlock> blocks;         // by offset
  std::vector<uint64_t> return_offsets;  // sorted offsets of return instructions

  // Index of the block holding the offset (the last block starting at or before it), or -1.
  int block_containing(uint64_t offset) const;
  bool is_return(uint64_t offset) const;
};

class BoltBlockMap {
 public:
  // Keeps a reference to the binary. Throws std::invalid_argument for a machine other than
  // x86-64 and AArch64.
  explicit BoltBlockMap(const ElfBinary& binary);
  ~BoltBlockMap();
  BoltBlockMap(BoltBlockMap&&) noexcept;

  // The function's blocks, decoded on first use and cached. Not thread-safe.
  const BoltFunctionBlocks& blocks(const FunctionSymbol& function);
  // Frees every function's cached blocks (decoded again on demand); invalidates the references
  // returned before.
  void drop_cached();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcollect
