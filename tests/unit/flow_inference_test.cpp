#include "output/flow_inference.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace profcollect {
namespace {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

// Block 0 is the entry; blocks without successors are exits (infer_flow's rule). kUnknown marks
// a block without an estimate.
FlowGraph make_graph(const std::vector<uint64_t>& weights,
                     const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  FlowGraph graph;
  for (uint64_t w : weights) {
    FlowGraph::Block block;
    block.known = w != kUnknown;
    block.weight = block.known ? w : 0;
    graph.blocks.push_back(block);
  }
  graph.blocks[0].entry = true;
  for (auto [from, to] : edges) graph.edges.push_back({from, to, false});
  return graph;
}

// Checks flow conservation independently of infer_flow: what enters a block from outside
// (count - incoming edges) only at entries (block 0 when none is marked), what leaves it
// (count - outgoing edges) only at exits: marked, without successors, or unable to reach one
// (a superset of the endless loops infer_flow lets flow leave from).
::testing::AssertionResult conserves(const FlowGraph& graph, const InferredFlow& flow) {
  const size_t n = graph.blocks.size();
  if (flow.blocks.size() != n || flow.edges.size() != graph.edges.size()) {
    return ::testing::AssertionFailure() << "result sizes differ from the graph's";
  }
  std::vector<uint64_t> in(n, 0), out(n, 0);
  std::vector<bool> entry(n, false), leaves(n, false);
  bool any_entry = false;
  for (size_t b = 0; b < n; ++b) any_entry |= entry[b] = graph.blocks[b].entry;
  if (!any_entry && n > 0) entry[0] = true;
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    in[graph.edges[e].to] += flow.edges[e];
    out[graph.edges[e].from] += flow.edges[e];
  }
  std::vector<size_t> successors(n, 0);
  for (const FlowGraph::Edge& e : graph.edges) ++successors[e.from];
  for (size_t b = 0; b < n; ++b) leaves[b] = graph.blocks[b].exit || successors[b] == 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const FlowGraph::Edge& e : graph.edges) {
      if (leaves[e.to] && !leaves[e.from]) leaves[e.from] = changed = true;
    }
  }
  uint64_t entered = 0, left = 0;
  for (size_t b = 0; b < n; ++b) {
    const uint64_t count = flow.blocks[b];
    if (in[b] > count || out[b] > count) {
      return ::testing::AssertionFailure()
             << "block " << b << " count " << count << " < in " << in[b] << " or out " << out[b];
    }
    if (count > in[b] && !entry[b]) {
      return ::testing::AssertionFailure() << "flow enters non-entry block " << b;
    }
    const bool exit = graph.blocks[b].exit || successors[b] == 0 || !leaves[b];
    if (count > out[b] && !exit) {
      return ::testing::AssertionFailure() << "flow leaves non-exit block " << b;
    }
    entered += count - in[b];
    left += count - out[b];
  }
  if (entered != flow.entered || left != entered) {
    return ::testing::AssertionFailure()
           << "entered " << entered << ", reported " << flow.entered << ", left " << left;
  }
  return ::testing::AssertionSuccess();
}

InferredFlow infer_checked(const FlowGraph& graph) {
  InferredFlow flow = infer_flow(graph);
  EXPECT_TRUE(conserves(graph, flow));
  return flow;
}

using Counts = std::vector<uint64_t>;

TEST(FlowInferenceTest, ExactLoopComesBackUnchanged) {
  // 0 -> 1 (header) -> 2 (body) -> 1 (back edge); 1 -> 3 (exit). Ten calls, 100 iterations.
  const FlowGraph graph = make_graph({10, 110, 100, 10}, {{0, 1}, {1, 2}, {2, 1}, {1, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{10, 110, 100, 10}));
  EXPECT_EQ(flow.edges, (Counts{10, 100, 100, 10}));
  EXPECT_EQ(flow.entered, 10u);
}

TEST(FlowInferenceTest, UndersampledLoopBodyIsRaisedNotTheHeaderLowered) {
  // The body's estimate is 20% low; raising it (10 a unit) beats lowering the header (20).
  const FlowGraph graph = make_graph({10, 110, 80, 10}, {{0, 1}, {1, 2}, {2, 1}, {1, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{10, 110, 100, 10}));
}

TEST(FlowInferenceTest, DiamondFlowGoesTheSampledWay) {
  // 0 -> {1, 2} -> 3. Arm 1 undersampled, arm 2 without samples: raising arm 1 is cheaper.
  const FlowGraph graph = make_graph({100, 60, 0, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 0, 100}));
  EXPECT_EQ(flow.edges, (Counts{100, 0, 100, 0}));
}

TEST(FlowInferenceTest, RaisingASampledBlockBeatsRaisingAnUnsampledOne) {
  // 0 -> 1 (60 samples) -> 2 (unknown) -> 4 and 0 -> 3 (0 samples) -> 4: both ways are as long,
  // and the 40 missing units go to the block that has samples (cost 10) rather than 3 (11).
  const FlowGraph graph =
      make_graph({100, 60, kUnknown, 0, 100}, {{0, 1}, {1, 2}, {2, 4}, {0, 3}, {3, 4}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 100, 0, 100}));
}

TEST(FlowInferenceTest, UndersampledEqualArmsAreRaisedEvenly) {
  // Raising either arm costs the same per unit: the 40 missing units are shared.
  const FlowGraph graph = make_graph({100, 30, 30, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 50, 50, 100}));
}

TEST(FlowInferenceTest, DiamondWithUnknownArmsSplitsEvenly) {
  const FlowGraph graph =
      make_graph({101, kUnknown, kUnknown, 101}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{101, 51, 50, 101}));
}

TEST(FlowInferenceTest, DiamondWithUnsampledArmsSplitsEvenly) {
  const FlowGraph graph = make_graph({100, 0, 0, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 50, 50, 100}));
}

TEST(FlowInferenceTest, ShorterUnsampledArmIsPreferredToALongerOne) {
  // 0 -> 1 -> 4 and 0 -> 2 -> 3 -> 4: the arms differ in cost, so no even split.
  const FlowGraph graph = make_graph({100, 0, 0, 0, 100}, {{0, 1}, {0, 2}, {1, 4}, {2, 3}, {3, 4}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 0, 0, 100}));
}

TEST(FlowInferenceTest, UnsampledArmOfManyInstructionsIsAvoided) {
  // The diamond above, but arm 2 is a 60-instruction error path and arm 1 a jump: 0 samples
  // over 60 instructions say much more surely that it did not run.
  FlowGraph graph = make_graph({100, 0, 0, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  graph.blocks[1].evidence = 1;
  graph.blocks[2].evidence = 60;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 0, 100}));
}

TEST(FlowInferenceTest, SampledEstimateOfMoreInstructionsIsChangedLess) {
  // 0 (100) -> 1 (60), which returns: either 1 is raised or the entry lowered. When both
  // estimates rest on one instruction, raising 1 is cheaper (10 a unit against the entry's 40).
  FlowGraph graph = make_graph({100, 60}, {{0, 1}});
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{100, 100}));
  // When 1's rests on eight, it is surer than the entry's: the entry is lowered to it.
  graph.blocks[1].evidence = 8;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{60, 60}));
}

TEST(FlowInferenceTest, LoweringPastHalfTheEstimateCostsFourTimesAsMuch) {
  // 0 (20, over eight instructions: 80 a unit to raise) -> 1 (100), which returns. Lowering 1
  // costs 40 a unit down to 50, then 160: so 1 is lowered to half and the entry raised to it.
  FlowGraph graph = make_graph({20, 100}, {{0, 1}});
  graph.blocks[0].evidence = 8;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{50, 50}));
}

TEST(FlowInferenceTest, EvidenceCountsUpToEightInstructions) {
  // Two ways from 0 to 4 through unsampled blocks: 1 alone, of 1000 instructions, or 2 -> 3,
  // of 5 each. Raising 1 would cost 11000 a unit against 110 without a cap; with it, 88
  // against 110. The well-sampled ends cost more to lower (640 a unit together).
  FlowGraph graph = make_graph({100, 0, 0, 0, 100}, {{0, 1}, {1, 4}, {0, 2}, {2, 3}, {3, 4}});
  graph.blocks[0].evidence = 8;
  graph.blocks[4].evidence = 8;
  graph.blocks[1].evidence = 1000;
  graph.blocks[2].evidence = 5;
  graph.blocks[3].evidence = 5;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{100, 100, 0, 0, 100}));
}

// Kept warm: weights of 100 a sample, as edge inference makes them.
TEST(FlowInferenceTest, UnsampledBlockTooShortToHaveBeenSampledIsKeptWarm) {
  // 0 (200) -> 1 (200), with an unsampled arm 0 -> 2 -> 1 of two instructions: had 2 run as
  // often as 0, it would have made 4 samples; 0 of them is evidence enough (4 >= 3). With one
  // instruction, 2 samples: 0 happens often, so it gets the least count there is.
  FlowGraph graph = make_graph({200, 200, 0}, {{0, 1}, {0, 2}, {2, 1}});
  graph.weight_per_sample = 100;
  graph.blocks[2].evidence = 2;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{200, 200, 0}));
  graph.blocks[2].evidence = 1;
  const InferredFlow warm = infer_checked(graph);
  EXPECT_EQ(warm.blocks, (Counts{201, 201, 1}));
  EXPECT_EQ(warm.edges, (Counts{200, 1, 1}));
  EXPECT_EQ(warm.kept_warm, 1u);
  // Off without weight_per_sample.
  graph.weight_per_sample = 0;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{200, 200, 0}));
}

TEST(FlowInferenceTest, OnlyABlockWhoseUnitRejoinsCountedCodeIsKeptWarm) {
  // 0 (100) -> 1 -> 2 -> 3 (100) beside 0 -> 3, 1 and 2 unsampled single instructions: 1's way
  // on runs through 2, also at 0, whose samples add to 1's in saying that way was not taken;
  // 2's predecessor has no count. Neither is kept warm.
  FlowGraph graph = make_graph({100, 0, 0, 100}, {{0, 3}, {0, 1}, {1, 2}, {2, 3}});
  graph.weight_per_sample = 100;
  InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 0, 0, 100}));
  EXPECT_EQ(flow.kept_warm, 0u);
  // Without 2, 1 leads straight back to 3, which has a count: it is kept warm.
  graph = make_graph({100, 0, 100}, {{0, 2}, {0, 1}, {1, 2}});
  graph.weight_per_sample = 100;
  flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{101, 1, 101}));
  EXPECT_EQ(flow.kept_warm, 1u);
  // An exit rejoins nothing but leaves: 0 (100) -> 1 (exit, unsampled) beside 0 -> 2 (100).
  graph = make_graph({100, 0, 100}, {{0, 2}, {0, 1}});
  graph.weight_per_sample = 100;
  flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{101, 1, 100}));
  EXPECT_EQ(flow.kept_warm, 1u);
}

TEST(FlowInferenceTest, UnsampledBlockThatWouldHaveBeenSampledStaysCold) {
  // 0 (1000) -> 2 (1000) and 0 -> 1 (0, eight instructions) -> 2: 1 would have made 80 samples.
  FlowGraph graph = make_graph({1000, 0, 1000}, {{0, 2}, {0, 1}, {1, 2}});
  graph.weight_per_sample = 100;
  graph.blocks[1].evidence = 8;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{1000, 0, 1000}));
  EXPECT_EQ(flow.kept_warm, 0u);
}

TEST(FlowInferenceTest, ExcessOfAStalledBlockIsNotRunAroundAnUnsampledLoop) {
  // 0 (100) -> 4 (100) -> 1 -> 3 (100), a loop 1 -> 2 -> 1: 1's one sampled instruction stalled,
  // so its estimate (2000) is 20 times its count; 2 (five instructions) has no sample. Lowering
  // 1 costs 40 a unit to 1000, then 160; raising the way through 0, 4 and 3 costs 240; running
  // the excess around the loop costs 2's raise, 55 a unit. Weights of 100 a sample: 2 could
  // have run 10 times unseen (half a sample over its five instructions), and past that its
  // raise costs four times as much, 220: more than lowering 1.
  FlowGraph graph = make_graph({100, 2000, 0, 100, 100}, {{0, 4}, {4, 1}, {1, 2}, {2, 1}, {1, 3}});
  for (uint32_t b : {0u, 3u, 4u}) graph.blocks[b].evidence = 8;
  graph.blocks[2].evidence = 5;
  graph.weight_per_sample = 100;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{100, 110, 10, 100, 100}));
  // Without weight_per_sample nothing says how often 2 could have run unseen: 55 a unit
  // throughout, so all the excess below half of 1's estimate goes around the loop.
  graph.weight_per_sample = 0;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{100, 1000, 900, 100, 100}));
}

TEST(FlowInferenceTest, BlockThatRanUnseenKeepsTheCountItCouldHaveRunUnseen) {
  // 0 (10000) -> 1 (0 samples, but it ran) -> 3 (10000), 0 -> 2 (10000) -> 3; one instruction
  // each, weights of 100 a sample. 1 could have run 50 times unseen (half a sample), its
  // estimate then: keeping it costs raising 0 and 3 by 50 (10 a unit each, 1000), less than
  // lowering 2 by 50 (40 a unit, 2000) or 1 to nothing (40 a unit to half, then 160: 5000).
  FlowGraph graph = make_graph({10000, 0, 10000, 10000}, {{0, 1}, {1, 3}, {0, 2}, {2, 3}});
  graph.weight_per_sample = 100;
  graph.blocks[1].ran = true;
  EXPECT_EQ(infer_checked(graph).blocks, (Counts{10050, 50, 10000, 10050}));
  // Not known to have run, its 0 samples where 100 were due say it did not (nor is it kept
  // warm: that is for blocks that would have made fewer than 3).
  graph.blocks[1].ran = false;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{10000, 0, 10000, 10000}));
  EXPECT_EQ(flow.kept_warm, 0u);
}

TEST(FlowInferenceTest, IfWithoutElseOverUnknownBlockSplitsEvenly) {
  // 0 -> 1 (unknown) -> 2 and 0 -> 2: nothing says which way, as profi splits it.
  const FlowGraph graph = make_graph({80, kUnknown, 80}, {{0, 1}, {1, 2}, {0, 2}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{80, 40, 80}));
}

TEST(FlowInferenceTest, SwitchKeepsUnevenCaseWeights) {
  // 0 switches to 1..5, all join at 6.
  FlowGraph graph = make_graph({100, 40, 30, 20, 10, 0, 100}, {});
  for (uint32_t c = 1; c <= 5; ++c) {
    graph.edges.push_back({0, c, false});
    graph.edges.push_back({c, 6, false});
  }
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 40, 30, 20, 10, 0, 100}));
  EXPECT_EQ(flow.edges[8], 0u);  // 0 -> 5
}

TEST(FlowInferenceTest, UnreachableBlocksGetNothingAndAreCounted) {
  // 0 -> 1; 2 <-> 3 form a loop nothing enters; 4 has no predecessor and is not an entry.
  const FlowGraph graph = make_graph({5, 5, 7, 7, 3}, {{0, 1}, {2, 3}, {3, 2}, {4, 1}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{5, 5, 0, 0, 0}));
  EXPECT_EQ(flow.edges, (Counts{5, 0, 0, 0}));
  EXPECT_EQ(flow.unreachable_weight, 17u);
}

TEST(FlowInferenceTest, SecondEntryBringsItsOwnFlow) {
  // Block 2 (a landing pad, say) is marked entry: its flow enters there.
  FlowGraph graph = make_graph({5, 13, 8}, {{0, 1}, {2, 1}});
  graph.blocks[2].entry = true;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{5, 13, 8}));
  EXPECT_EQ(flow.entered, 13u);
}

TEST(FlowInferenceTest, SelfLoopCarriesTheRepeats) {
  const FlowGraph graph = make_graph({1, 10, 1}, {{0, 1}, {1, 1}, {1, 2}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{1, 10, 1}));
  EXPECT_EQ(flow.edges, (Counts{1, 9, 1}));
}

TEST(FlowInferenceTest, LoopWithoutFlowOnItsWayInIsJoinedToTheEntry) {
  // The self-loop's samples alone would circulate with nothing entering: profi adds a unit.
  const FlowGraph graph = make_graph({0, 10, 0}, {{0, 1}, {1, 1}, {1, 2}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_GE(flow.entered, 1u);
  EXPECT_GE(flow.edges[0], 1u);
  EXPECT_GE(flow.edges[2], 1u);
  EXPECT_GE(flow.blocks[1], 10u);
}

TEST(FlowInferenceTest, EndlessLoopIsTreatedAsAnExit) {
  // 1 loops on itself forever (no exit reachable): its flow leaves there.
  const FlowGraph graph = make_graph({10, 50}, {{0, 1}, {1, 1}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{10, 50}));
  EXPECT_EQ(flow.edges, (Counts{10, 40}));
}

TEST(FlowInferenceTest, SingleBlockFunction) {
  EXPECT_EQ(infer_checked(make_graph({42}, {})).blocks, (Counts{42}));
  EXPECT_EQ(infer_checked(make_graph({42}, {})).entered, 42u);
  EXPECT_EQ(infer_checked(make_graph({0}, {})).blocks, (Counts{0}));
  EXPECT_EQ(infer_checked(FlowGraph{}).blocks, Counts{});
}

TEST(FlowInferenceTest, NoisyBranchLandsWithinTheNoise) {
  // Truth 0 -> {1: 70, 2: 30} -> 3, block 1 sampled 20% high (84). The cheapest fix raises the
  // entry and the join by 14 (14 * 10 + 14 * 10 = 280) rather than lower the arms by 14 in all
  // (14 * 40 = 560): a sampled estimate is taken to be low rather than high. Every count stays
  // within the noise.
  const FlowGraph graph = make_graph({100, 84, 30, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{114, 84, 30, 114}));
}

TEST(FlowInferenceTest, UnsampledBlockBetweenHotBlocksPassesTheFlow) {
  const FlowGraph graph = make_graph({100, 0, 100}, {{0, 1}, {1, 2}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 100}));
}

TEST(FlowInferenceTest, UnlikelyEdgeIsAvoided) {
  // 0 -> 1 -> 3 and 0 -> 2 -> 3 with unknown arms would split evenly; 0 -> 2 is unlikely.
  FlowGraph graph = make_graph({100, kUnknown, kUnknown, 100}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  graph.edges[1].unlikely = true;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{100, 100, 0, 100}));
}

TEST(FlowInferenceTest, WithoutMarkedEntryBlockZeroIsTheEntry) {
  FlowGraph graph = make_graph({5, 5}, {{0, 1}});
  graph.blocks[0].entry = false;
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{5, 5}));
  EXPECT_EQ(flow.entered, 5u);
}

TEST(FlowInferenceTest, EdgeToMissingBlockIsRejected) {
  const FlowGraph graph = make_graph({5, 5}, {{0, 2}});
  EXPECT_THROW(infer_flow(graph), std::invalid_argument);
}

TEST(FlowInferenceTest, TrillionSampleWeightsStayExact) {
  const uint64_t t = 1'000'000'000'000;
  const FlowGraph graph = make_graph({t, 11 * t, 10 * t, t}, {{0, 1}, {1, 2}, {2, 1}, {1, 3}});
  const InferredFlow flow = infer_checked(graph);
  EXPECT_EQ(flow.blocks, (Counts{t, 11 * t, 10 * t, t}));
  EXPECT_EQ(flow.unit_shift, 0u);
}

TEST(FlowInferenceTest, HugeWeightsAreScaledAndNeverWrap) {
  // Summing past 2^56 scales the weights down by a power of two; multiples of it come back.
  const uint64_t big = uint64_t{1} << 61;
  const FlowGraph exact =
      make_graph({2 * big, big, big, 2 * big}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const InferredFlow scaled = infer_checked(exact);
  EXPECT_EQ(scaled.blocks, (Counts{2 * big, big, big, 2 * big}));
  EXPECT_EQ(scaled.unit_shift, 0u);
  const uint64_t max = std::numeric_limits<uint64_t>::max() - 1;  // max itself: kUnknown
  const InferredFlow flow = infer_checked(make_graph({max, max, max}, {{0, 1}, {1, 2}}));
  EXPECT_GE(flow.blocks[1] >> 54, (max >> 54) - 1);
}

// A random CFG of `n` blocks: block 0 is the entry, every block i > 0 has a predecessor before
// it and every block i < n - 1 a successor after it (so all is reachable and reaches exit n - 1),
// plus random edges anywhere (back edges, self-loops, parallel edges) and a few more exits.
// `forward[i]` is the edge to a later block.
struct RandomCfg {
  FlowGraph graph;
  std::vector<uint32_t> forward;
};

RandomCfg random_cfg(std::mt19937_64& rng, uint32_t n, uint32_t extra_edges) {
  RandomCfg cfg;
  cfg.graph.blocks.resize(n);
  cfg.graph.blocks[0].entry = true;
  cfg.graph.blocks[n - 1].exit = true;
  for (uint32_t b = 1; b < n; ++b) cfg.graph.edges.push_back({uint32_t(rng() % b), b, false});
  for (uint32_t b = 0; b + 1 < n; ++b) {
    cfg.forward.push_back(cfg.graph.edges.size());
    cfg.graph.edges.push_back({b, uint32_t(b + 1 + rng() % (n - 1 - b)), false});
  }
  for (uint32_t i = 0; i < extra_edges; ++i) {
    cfg.graph.edges.push_back({uint32_t(rng() % n), uint32_t(rng() % n), false});
  }
  for (uint32_t b = 0; b < n; ++b) cfg.graph.blocks[b].exit |= rng() % 8 == 0;
  return cfg;
}

// An exact flow: `paths` random walks from the entry, each taken 1..max_repeat times; a walk
// stops at an exit by chance and, once long, follows the forward edges out.
struct TrueFlow {
  std::vector<uint64_t> blocks;
  std::vector<uint64_t> edges;
};

TrueFlow random_flow(std::mt19937_64& rng, const RandomCfg& cfg, uint32_t paths,
                     uint64_t max_repeat) {
  const FlowGraph& g = cfg.graph;
  const uint32_t n = g.blocks.size();
  std::vector<std::vector<uint32_t>> out(n);
  for (uint32_t e = 0; e < g.edges.size(); ++e) out[g.edges[e].from].push_back(e);
  TrueFlow truth{std::vector<uint64_t>(n, 0), std::vector<uint64_t>(g.edges.size(), 0)};
  for (uint32_t p = 0; p < paths; ++p) {
    const uint64_t repeat = 1 + rng() % max_repeat;
    uint32_t b = 0;
    for (uint32_t steps = 0;; ++steps) {
      truth.blocks[b] += repeat;
      const bool long_walk = steps >= 4 * n;
      if (g.blocks[b].exit && (out[b].empty() || long_walk || rng() % 3 == 0)) break;
      const uint32_t e = long_walk ? cfg.forward[b] : out[b][rng() % out[b].size()];
      truth.edges[e] += repeat;
      b = g.edges[e].to;
    }
  }
  return truth;
}

uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

TEST(FlowInferenceTest, PropertyExactWeightsComeBackExactly) {
  std::mt19937_64 rng(20261207);
  for (int round = 0; round < 200; ++round) {
    const uint32_t n = 2 + rng() % 59;
    RandomCfg cfg = random_cfg(rng, n, rng() % (2 * n));
    const TrueFlow truth = random_flow(rng, cfg, 1 + rng() % 20, 1000);
    for (uint32_t b = 0; b < n; ++b) {
      cfg.graph.blocks[b].weight = truth.blocks[b];
      cfg.graph.blocks[b].evidence = 1 + rng() % 20;  // whatever each estimate rests on
    }
    const InferredFlow flow = infer_flow(cfg.graph);
    ASSERT_TRUE(conserves(cfg.graph, flow)) << "round " << round;
    ASSERT_EQ(flow.blocks, truth.blocks) << "round " << round;
    ASSERT_EQ(infer_flow(cfg.graph).edges, flow.edges) << "deterministic, round " << round;
  }
}

TEST(FlowInferenceTest, PropertyNoisyWeightsConserveAndStayNearTheTruth) {
  // Every unit a block moves from its estimate costs 10 to 40, and the truth is one candidate,
  // so the cheapest flow moves at most 4x the noise from the estimates: the error is at most
  // 5x the noise (plus the units added to join islands). And as the noise is at most 20% a
  // block, most blocks should end within 20% of the truth.
  std::mt19937_64 rng(7);
  size_t counted = 0, close = 0;
  for (int round = 0; round < 200; ++round) {
    const uint32_t n = 2 + rng() % 59;
    RandomCfg cfg = random_cfg(rng, n, rng() % (2 * n));
    const TrueFlow truth = random_flow(rng, cfg, 1 + rng() % 20, 1000);
    uint64_t noise = 0, error = 0;
    for (uint32_t b = 0; b < n; ++b) {
      const double factor = 0.8 + 0.4 * double(rng() % 1001) / 1000.0;
      cfg.graph.blocks[b].weight = uint64_t(double(truth.blocks[b]) * factor + 0.5);
      noise += distance(cfg.graph.blocks[b].weight, truth.blocks[b]);
    }
    const InferredFlow flow = infer_flow(cfg.graph);
    ASSERT_TRUE(conserves(cfg.graph, flow)) << "round " << round;
    for (uint32_t b = 0; b < n; ++b) {
      const uint64_t off = distance(flow.blocks[b], truth.blocks[b]);
      error += off;
      if (truth.blocks[b] == 0) continue;
      ++counted;
      close += off * 5 <= truth.blocks[b];
    }
    EXPECT_LE(error, 5 * noise + 2 * n * n) << "round " << round;
  }
  EXPECT_GE(close, counted * 9 / 10) << close << " of " << counted << " blocks within 20%";
}

TEST(FlowInferenceTest, PropertyAnyGraphConserves) {
  // Graphs of any shape: unknown blocks, several entries or none, exits with successors,
  // unlikely and parallel edges, parts nothing reaches, endless loops.
  std::mt19937_64 rng(99);
  for (int round = 0; round < 300; ++round) {
    FlowGraph graph;
    graph.blocks.resize(1 + rng() % 40);
    const uint32_t n = graph.blocks.size();
    for (FlowGraph::Block& block : graph.blocks) {
      block.known = rng() % 5 != 0;
      block.weight = rng() % 3 == 0 ? 0 : rng() % 1'000'000;
      block.entry = rng() % 10 == 0;
      block.exit = rng() % 7 == 0;
      block.evidence = rng() % 3 == 0 ? 1 : uint32_t(rng());  // beyond the cap too
    }
    graph.weight_per_sample = rng() % 2 == 0 ? 0 : 1 + rng() % 100'000;
    for (uint32_t i = rng() % (3 * n); i > 0; --i) {
      graph.edges.push_back({uint32_t(rng() % n), uint32_t(rng() % n), rng() % 10 == 0});
    }
    const InferredFlow flow = infer_flow(graph);
    ASSERT_TRUE(conserves(graph, flow)) << "round " << round;
    ASSERT_EQ(infer_flow(graph).edges, flow.edges) << "deterministic, round " << round;
  }
}

TEST(FlowInferenceTest, LargeFunctionConserves) {
  std::mt19937_64 rng(5000);
  RandomCfg cfg = random_cfg(rng, 5000, 15000 - 2 * 4999);
  for (FlowGraph::Block& block : cfg.graph.blocks) block.weight = rng() % 1'000'001;
  const auto start = std::chrono::steady_clock::now();
  const InferredFlow flow = infer_flow(cfg.graph);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(conserves(cfg.graph, flow));
  // No assertion on time (machines differ); printed to keep an eye on it.
  std::printf("5000 blocks, %zu edges: %.1f ms\n", cfg.graph.edges.size(),
              std::chrono::duration<double, std::milli>(took).count());
}

}  // namespace
}  // namespace profcollect
