#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "output/edge_inference.h"
#include "output/flow_inference.h"

namespace profcollect {
namespace {

constexpr uint64_t kFunction = 0x1000;

// A function whose entry block jumps over a block to the block that returns:
//
//   0x00  block 0 (4 instructions) ... jmp 0x20
//   0x10  block 1 (1 instruction)  nothing jumps or falls into it; falls through to block 2
//   0x20  block 2 (4 instructions) ... ret
//
// Block 2 has four times block 0's samples (a load in it that stalls): to conserve flow, the
// counts must meet somewhere, and letting flow in at block 1 would cost nothing.
BoltFunctionBlocks jump_over(bool block1_only_nops) {
  BoltFunctionBlocks code;
  code.simple = true;
  code.blocks.resize(3);
  code.blocks[0] = BoltBlock{.offset = 0x00, .last_offset = 0x0c, .instructions = 4};
  code.blocks[1] = BoltBlock{.offset = 0x10, .last_offset = 0x10, .instructions = 1};
  code.blocks[1].falls_through = true;
  code.blocks[1].only_nops = block1_only_nops;
  code.blocks[2] = BoltBlock{.offset = 0x20, .last_offset = 0x2c, .instructions = 4};
  code.blocks[2].leaves = true;
  code.edges = {BoltEdge{0, 2, 0x0c}, BoltEdge{1, 2, BoltEdge::kFallThrough}};
  code.return_offsets = {0x2c};
  return code;
}

const std::vector<std::pair<uint64_t, uint64_t>> kSamples = {
    {kFunction + 0x04, 10}, {kFunction + 0x08, 10}, {kFunction + 0x0c, 10},
    {kFunction + 0x24, 40}, {kFunction + 0x28, 40}, {kFunction + 0x2c, 40}};

TEST(EdgeInferenceGraph, PaddingNothingReachesIsNoEntryAndGetsNoCount) {
  const FlowGraph graph = sampled_flow_graph(jump_over(true), kFunction, kSamples);
  ASSERT_EQ(graph.blocks.size(), 3u);
  EXPECT_TRUE(graph.blocks[0].entry);
  EXPECT_FALSE(graph.blocks[1].entry);
  const InferredFlow flow = infer_flow(graph);
  EXPECT_EQ(flow.blocks[1], 0u);
  EXPECT_EQ(flow.blocks[0], flow.blocks[2]);  // the flow meets in between, as it must
  EXPECT_GT(flow.blocks[0], 0u);
}

// The same block with an instruction that is not a nop may be entered from where the CFG does
// not show (a landing pad, a target of an unread jump table): it stays an entry, and here the
// flow takes it, which is what the padding must not get.
TEST(EdgeInferenceGraph, CodeNothingReachesStaysAnEntry) {
  const FlowGraph graph = sampled_flow_graph(jump_over(false), kFunction, kSamples);
  EXPECT_TRUE(graph.blocks[1].entry);
  const InferredFlow flow = infer_flow(graph);
  EXPECT_GT(flow.blocks[1], 0u);
}

// Samples over the instructions but the first, per instruction, times kWeightScale; a block of
// one instruction has no estimate.
TEST(EdgeInferenceGraph, WeightsAreSamplesPerInstructionButTheFirst) {
  std::vector<std::pair<uint64_t, uint64_t>> samples = kSamples;
  samples.insert(samples.begin(), {kFunction + 0x00, 1000});  // block 0's first instruction
  const FlowGraph graph = sampled_flow_graph(jump_over(true), kFunction, samples);
  EXPECT_EQ(graph.blocks[0].weight, 10 * kWeightScale);
  EXPECT_EQ(graph.blocks[0].evidence, 3u);
  EXPECT_FALSE(graph.blocks[1].known);
  EXPECT_EQ(graph.blocks[2].weight, 40 * kWeightScale);
}

// A sample on a block's first instruction is left out of its estimate, but says it ran.
TEST(EdgeInferenceGraph, BlockSampledOnlyOnItsFirstInstructionRan) {
  const std::vector<std::pair<uint64_t, uint64_t>> samples = {
      {kFunction + 0x00, 2}, {kFunction + 0x04, 10}, {kFunction + 0x20, 3}};
  const FlowGraph graph = sampled_flow_graph(jump_over(true), kFunction, samples);
  EXPECT_EQ(graph.blocks[0].weight, 10 * kWeightScale / 3);
  EXPECT_FALSE(graph.blocks[0].ran);  // its estimate says so already
  EXPECT_EQ(graph.blocks[2].weight, 0u);
  EXPECT_TRUE(graph.blocks[2].ran);
  const std::vector<std::pair<uint64_t, uint64_t>> elsewhere = {{kFunction + 0x04, 10}};
  EXPECT_FALSE(sampled_flow_graph(jump_over(true), kFunction, elsewhere).blocks[2].ran);
}

}  // namespace
}  // namespace profcollect
