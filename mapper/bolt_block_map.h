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
// - on x86-64, the targets of a jump table are block starts and successors of its indirect jump,
//   as BOLT's jump-table analysis finds them: `jmp *TABLE(,%idx,8)` or `mov TABLE(,%idx,8),%r;
//   jmp *%r` (absolute 8-byte entries, non-PIC code) and `lea TABLE(%rip),%b; movslq
//   (%b,%idx,4),%r; add %b,%r; jmp *%r` (4-byte entries relative to the table, PIC code); a
//   table's entries are read while they are instruction starts of the function, up to the next
//   table the function uses. BOLT looks for the table's address back to the previous branch
//   only: a dispatch whose table is loaded further back leaves the function not simple.
//
// A function that does not decode from end to end, or whose jump lands inside an instruction,
// is "not simple": BOLT ignores fall-through ranges in it. Not modelled: calls to no-return
// functions, landing pads, jump tables on AArch64. x86-64 and AArch64 (there judged only on
// taken-branch profiles, the edges Arm SPE gives, by llvm-bolt's acceptance).
//
// The blocks' edges (each with the jump that takes it) and the function's direct calls make the
// control-flow graph that counts are inferred on when there are no branch stacks
// (output/format_bolt_inferred.cpp).
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
  uint32_t instructions = 0;   // how many it holds
  bool ends_in_call = false;   // its last instruction is a call
  bool falls_through = false;  // the next block (in address order) is one of its successors
  // Control may leave the function from it: a return, a jump out of the function (tail call),
  // an indirect jump whose targets are unknown, or the function's end reached without a jump.
  bool leaves = false;
  bool unknown_successors = false;  // an indirect jump whose targets are unknown
  // Every instruction is a nop: alignment padding. When no edge reaches it (padding after a
  // jump), it never runs; BOLT drops it as unreachable.
  bool only_nops = false;
};

// An edge of the function's control-flow graph.
struct BoltEdge {
  static constexpr uint64_t kFallThrough = UINT64_MAX;
  uint32_t from = 0, to = 0;              // block indices
  uint64_t branch_offset = kFallThrough;  // the jump taking it, or kFallThrough
};

// A direct call made by the function.
struct BoltCall {
  uint32_t block = 0;
  uint64_t offset = 0;  // of the call instruction
  uint64_t target = 0;  // the called address
};

struct BoltFunctionBlocks {
  bool simple = false;
  // x86-64: an indirect jump whose targets no table gives lies in a block that neither pops a
  // register nor leaves the frame, in a function of more than one block (crtstuff's non-PIC
  // register_tm_clones: `mov $0, %eax; ...; jmp *%rax`). llvm-bolt, optimizing a binary with
  // relocations, takes such a jump for one that may go anywhere in the function and builds no
  // CFG of it (a fall-through range in it is a trace it counts as mismatching); perf2bolt,
  // aggregating, does build one, so the function stays simple.
  bool unknown_jump_outside_epilogue = false;
  std::vector<BoltBlock> blocks;         // by offset
  std::vector<uint64_t> return_offsets;  // sorted offsets of return instructions
  std::vector<BoltEdge> edges;           // by source block, then as the code has them
  std::vector<BoltCall> calls;           // by offset

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
