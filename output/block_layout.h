// The order of a function's hot basic blocks, as a Propeller cluster file (clang's
// -fbasic-block-sections=list=) lists them: the ext-TSP layout of Newell and Pupyrev ("Improved
// Basic Block Reordering", IEEE Transactions on Computers, 2020), the objective and greedy that
// LLVM's CodeLayout.cpp implements and BOLT and create_llvm_prof use; implemented here on its own.
// Pure functions, no I/O.
//
// The score of a layout. Blocks are placed one after another from address 0, in the order given;
// a jump of count c from block s to block t, with d the distance from the end of s to the start
// of t, scores
//
//   fall-through (t starts where s ends)        1.0 * c (1.05 * c: see below)
//   forward jump, d <= 1024 bytes               0.1 * c * (1 - d / 1024)
//   backward jump, d <= 640 bytes (d from the   0.1 * c * (1 - d / 640)
//     end of s back to the start of t)
//   anything farther                            0
//
// (LLVM's defaults.) A fall-through from a block with one successor weighs 1.05 instead: it
// saves an unconditional jump too. A block's successors are the targets of its edges, counted or
// not (an edge of count 0 says the CFG has it), itself included. A block of size 0 is taken as
// 1 byte, so that two blocks never share an address. Self-loops score the same in every layout
// and are left out of the score.
//
// The greedy (ext_tsp_order). Every hot block starts as a chain of its own; first each block is
// joined to its forced successor (its only successor, which has it as only predecessor); then,
// again and again, the two chains X and Y linked by a jump whose best merge raises the score the
// most are merged, where a merge is X Y, or X split into X1 X2 (at every point when X has at
// most 128 blocks; else only where a jump between X and Y's ends suggests) and glued as
// X1 Y X2, Y X2 X1 or X2 X1 Y; a split never separates a forced pair, and a merge that holds
// the entry block keeps it first. When no merge raises the score, the chains are laid out by
// density (count per byte), the entry's chain first. Ties go to the lower block indices, so the
// order is deterministic.
//
// Large functions: past 2000 hot blocks the greedy above (each round looks at every pair of
// linked chains) would take too long, and a simpler one lays them out: forced pairs, then jumps
// from the hottest down, each making its source fall through to its target when the source
// ends its chain and the target starts another (not the entry's); chains by density as above.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace profcollect {

struct LayoutBlock {
  uint64_t size = 0;   // bytes
  uint64_t count = 0;  // execution count
};

struct LayoutEdge {
  uint32_t from = 0, to = 0;  // block indices
  uint64_t count = 0;         // times taken (fall-through or jump)
};

// The hot blocks in the order that maximises the ext-TSP score (by the greedy above): block 0
// (the entry) first, then the blocks with a count and those an edge with a count leads from or
// to (their count taken as at least the sum of those edges'); blocks of count 0 that no counted
// edge touches are left out. Empty for no blocks, {0} when nothing has a count. Deterministic.
// Throws std::invalid_argument for an edge naming a block that does not exist.
std::vector<uint32_t> ext_tsp_order(std::span<const LayoutBlock> blocks,
                                    std::span<const LayoutEdge> edges);

// The ext-TSP score of `order` (blocks placed in that order from address 0). Edges from or to a
// block not in `order` score 0. Throws std::invalid_argument for an index out of range in
// `order` or `edges`, or a block listed twice.
double ext_tsp_score(std::span<const uint32_t> order, std::span<const LayoutBlock> blocks,
                     std::span<const LayoutEdge> edges);

}  // namespace profcollect
