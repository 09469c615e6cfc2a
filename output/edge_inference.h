// A branch profile inferred from IP samples, for binaries profiled without branch stacks
// (virtual machines: no LBR, BRBE or SPE). For each sampled function BOLT can build a CFG of
// (mapper/bolt_block_map.h):
//
// 1. each block's execution count is estimated as its samples over its instructions, the first
//    instruction left out of both: measured on sqlite3 (cpu-clock in a virtual machine), a
//    block's first instruction is hardly ever the sampled one (median 0.02 of the block's mean
//    per instruction; the second 0.76, the last 0.33), so counting it underestimated short
//    blocks (2 instructions: 0.43 of the truth relative to long ones; 1 instruction: about
//    1/70). A block of one instruction has no estimate (FlowGraph::Block::known is false): its
//    count is what flow makes it. Samples that are exact instruction counts (one per
//    instruction run) still give exact estimates. A block whose samples all fell on its first
//    instruction did run (a sampled instruction is one about to run), rarely enough for the
//    rest to get none: FlowGraph::Block::ran. A block that no edge reaches may be entered
//    from where the CFG does not show (a landing pad, a target of an unread jump table), unless
//    it is all nops: alignment padding after a jump, which never runs. Taken for an entry, it
//    let the flow start anywhere: on sqlite3, a seventh of a recording's inferred entries came
//    in through padding (docs/edge-inference.md);
// 2. the counts are made to conserve flow over the CFG, changing them as little as possible
//    (output/flow_inference.h, after LLVM's profile inference);
// 3. the result is written as branches and fall-throughs BOLT reads back into the same edge
//    counts: a taken edge as a branch from its jump to the target block, a fall-through edge as a
//    range from its block's start to the next block's start; a function's entries as branches
//    from its sampled callers' call instructions (the caller block's count), the rest of its
//    entry count as a branch from outside.
//
// Counts are in units of 1/kWeightScale samples per instruction, as the estimates are.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "mapper/bolt_block_map.h"
#include "mapper/symbol_table.h"
#include "output/branch_profile.h"
#include "output/flow_inference.h"
#include "output/ip_profile.h"
#include "output/render_stop.h"

namespace profcollect {

struct EdgeInferenceStats {
  uint64_t samples = 0;              // the binary's IP samples
  uint64_t inferred_samples = 0;     // in functions that got an inferred CFG
  uint64_t functions = 0;            // sampled functions
  uint64_t inferred_functions = 0;   // of them, with an inferred CFG
  uint64_t blocks = 0;               // blocks of the inferred functions with a count
  uint64_t blocks_kept_warm = 0;     // of them, with a count only as flow's "Kept warm" gave it
  uint64_t not_simple_samples = 0;   // in functions BOLT cannot build a CFG of
  uint64_t no_function_samples = 0;  // at addresses no function symbol holds
};

struct InferredEdges {
  BranchProfile profile;
  EdgeInferenceStats stats;
};

// Block weights are estimates of samples per instruction times this.
inline constexpr uint64_t kWeightScale = 100;

// The flow graph of a function's CFG (step 1 of the header), its blocks weighted by the
// function's samples: (address, count), sorted by address.
FlowGraph sampled_flow_graph(const BoltFunctionBlocks& code, uint64_t function_address,
                             std::span<const std::pair<uint64_t, uint64_t>> samples);

// The inferred branch profile of the binary's IP samples. `stop` is checked between functions.
InferredEdges infer_edges(const IpProfile& samples, const SymbolTable& functions,
                          BoltBlockMap& blocks, const RenderStop* stop = nullptr);

}  // namespace profcollect
