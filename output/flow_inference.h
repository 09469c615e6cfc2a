// Profile inference on a control-flow graph: turns noisy per-block execution estimates (from IP
// samples, on machines without branch records) into block and edge counts that conserve flow.
// It follows the model of LLVM's "profi" (He et al., "Profile Inference Revisited", POPL 2022;
// llvm/lib/Transforms/Utils/SampleProfileInference.cpp), implemented here on its own.
//
// The network. Every block b is split into in(b) and out(b): the arc in(b) -> out(b) carries
// the block's count, and a CFG edge u -> v is an arc out(u) -> in(v) carrying the edge's count.
// A source S feeds the entry blocks, exit blocks drain into a sink T, and the arc T -> S closes
// the circulation, so any flow on the network is a conserving profile. Moving a block's count
// away from its estimate costs, per unit (profi's SampleProfileProfiCostBlock* defaults, but
// lowering at 40 and the entry block at 10/40: chosen by measurement, edge_inference_bench.sh on
// sqlite3 with ~40K timer samples, where they raise the gain from about 71% to 77%; what they
// say is that a sampled estimate is more often too low than too high, the entry block's too):
//
//                              raise  lower
//   block with samples           10     40   lowering throws away evidence that it ran
//   block of a sampled function  11      -   with 0 samples: flow prefers the sampled way
//   entry block                  10     40   raised with the blocks it leads to
//   unknown block (known=false)   0      0   no estimate: free
//   edge marked unlikely        2^30     -   taken only when nothing else conserves flow
//
// Lowering a block past half its estimate costs 4 times as much a unit. Samples are counts: the
// likelihood of a count falls ever faster as it goes below what the samples say (a Poisson
// count's, over the second half, about 4.6 times as fast as over the first), and a block with
// samples did run. Measured on edge_inference_bench.sh over three I1 geometries: the generated
// program's gain rose from 79.7% to 84.5%, sqlite3's stayed (79.4%, 79.0%); 2 and 10 gave
// 80.2% and 86.6% on the one, 79.2% and 77.7% on the other.
//
// Unseen. A block with 0 samples may have run, but only so often: with FlowGraph::
// weight_per_sample set, raising it past the count at which it would have made kSamplesUnseen
// (half a) sample costs kIncPastUnseen (4) times as much a unit (where a count expects n
// samples, 0 come e^-n of the time: 61% at half a sample, 5% at three). The case it settles: one
// instruction that stalls (a load that misses) can take 10 to 20 times its block's share of a
// timer's samples, and the flow rid the block of that excess most cheaply by running it around
// a loop through unsampled blocks, which were then laid out as the hottest code there was
// although they never ran (on a sqlite3 recording, 460 blocks that never ran carried flow, half
// of it through 37 of them). Measured on edge_inference_bench.sh's programs, six recordings of
// each of ~80K and of ~30K samples: the gain at the target's I1 rose by 1.9 to 3.2 points on
// each of the four. Limits of 0.25 and 1 sample did as well and less well; a factor of 2 as
// well, 8 and 16 cost the generated program 7 to 14 points (docs/testing.md).
//
// Ran. A block marked ran with 0 samples did run, but rarely enough for its samples to miss the
// instructions they were counted over: with FlowGraph::weight_per_sample set, it gets the count at
// which those would have made kSamplesUnseen samples as its estimate (an estimate, so lowering it
// costs as usual), and past that it is raised as a block with 0 samples is (an entry block is
// raised as an entry). Without this, the flow left such blocks at 0 and BOLT moved them to the cold
// part of their function: on sqlite3 one in seven of them, among them blocks that ran 20,000 to
// 100,000 times in the workload. Measured on edge_inference_bench.sh's programs, six recordings of
// each at ~30K and at ~80K samples, the gain at the target's I1: sqlite3's rose from 79.3% to 82.0%
// and from 87.9% to 89.5%, the generated program's fell from 89.7% to 87.2% and from 87.4% to
// 84.9%, although there too it halved the instructions of blocks that ran but were left cold
// (docs/testing.md).
//
// Each block's costs are multiplied by its evidence (Block::evidence: the instructions its
// estimate was sampled over, at most 8). A timer samples instructions, not blocks: 0 samples
// over 60 instructions say far more surely that a block did not run than 0 over 1, and the
// chance that a block that ran c times got none falls as exp(-c * instructions * rate), so
// raising it costs in proportion to its instructions. Without this, flow that had to pass
// one of two unsampled arms went half into each, a 60-instruction error path as much as the
// 1-instruction way that ran (a generated program's inferred profile made BOLT's layout worse
// than none). The cap: beyond a few instructions a block's samples follow the time its
// instructions take more than their number (on sqlite3 under cpu-clock, blocks of well
// sampled instructions got between half and twice their share), so more of them stop making
// its estimate surer. Measured on edge_inference_bench.sh's programs: a cap of 8 was the best
// of 4, 8, 16 and none.
//
// The estimate w of a block is laid on its arc first, which leaves w units of excess at out(b)
// and w of deficit at in(b); the cheapest way to route every excess to a deficit is the cheapest
// correction. All costs are non-negative, so successive shortest paths (Dijkstra with
// potentials) solve it exactly: an input that already conserves flow costs 0 and comes back
// unchanged. Costs stay in int64 without overflow: only distances are summed (never
// flow times cost), and weights whose total passes 2^56 are scaled down first (see unit_shift).
//
// Ties. Linear costs leave many optimal flows (raising either arm of a branch costs the same).
// Within one shortest distance the excess goes down a level graph and is split evenly among
// equally good arcs (profi's even flow distribution). Afterwards, as profi does:
//   - a block whose flow no positive-flow path from an entry reaches (a loop carrying its own
//     samples while its way in has none) is joined to an entry: first by rerouting flow so that
//     every count stays as it is (exact inputs usually allow it), else, as profi, by adding
//     one unit along the likeliest path from an entry through it to an exit;
//   - flow through a region without evidence (profi: unknown blocks; here also blocks with 0
//     samples) from a sampled block to the single sampled block it leads to is split evenly at
//     every branch, when every way through the region costs the same (so it stays cheapest).
//
// Kept warm. A block the flow leaves at 0 is one a layout may move out of the hot code (BOLT
// splits every block of count 0 into the cold part). Its 0 samples say it did not run only if
// it would have got some had it run: with FlowGraph::weight_per_sample set (the weight one
// sample over one instruction makes), a block at 0 whose busiest predecessor's count, over its
// evidence, would have made fewer than kSamplesThatSayCold (3) samples (0 of them then come 5%
// of the time) gets one unit along the likeliest path from an entry through it to an exit:
// the least count there is, enough to keep it beside the code it follows. (Measured on
// edge_inference_bench.sh's sqlite3 over three I1 geometries: the instrumented gain from 76.7%
// to 79.4%; thresholds of 1 and 10 samples, in a first version, did less well than 3; the
// generated program was unchanged.)
// But only a block whose unit rejoins counted code at once, through a successor with a count
// or by leaving (an exit): one whose way on runs into more blocks at 0 would warm them all,
// and their 0 samples together say that way was not taken more surely than its own do (an
// error path running on to its own return). Judged against the instrumented counts on three
// sqlite3 recordings of ~30K samples, only 32% of the blocks left with one unit had run (27%
// of those a path carried along); keeping the flow off those that had not, as the instrumented
// counts tell, raised the gain by 5 points over six recordings. This rule, measured on
// edge_inference_bench.sh's programs, six recordings of each at ~30K and at ~80K samples:
// sqlite3's gain at the target's I1 rose from 81.9% to 84.0% and from 89.4% to 89.9%, the
// generated program's profiles did not change. Limits on the instructions of the whole way on
// instead (3 or 6 samples' worth) did about as well (docs/testing.md).
//
// Decisions beyond profi:
//   - flow enters only at entry blocks: a block that no entry reaches gets 0 and its weight is
//     counted in InferredFlow::unreachable_weight (a landing pad or an indirect-jump target that
//     the CFG does not link must be marked entry by the caller);
//   - a block with no successors is an exit, and so is every block of a loop that no exit can
//     be reached from (a strongly connected component no edge leaves: a server's main loop, a
//     spin around a call that never returns): the samples say it ran, so its flow leaves there;
//   - with no block marked entry, block 0 is the entry.
#pragma once

#include <cstdint>
#include <vector>

namespace profcollect {

struct FlowGraph {
  struct Block {
    // Estimated execution count from samples (0: sampled function, no samples here).
    uint64_t weight = 0;
    // False: no estimate at all (costs nothing to change).
    bool known = true;
    // How many instructions the estimate was sampled over: it multiplies the costs of
    // changing the estimate, up to kMaxEvidence (see the header).
    uint32_t evidence = 1;
    static constexpr uint32_t kMaxEvidence = 8;
    // Samples say it ran although its estimate is 0 (they fell only where the estimate does not
    // look: output/edge_inference.h). See "Ran" in the header.
    bool ran = false;
    // Flow may enter here from outside (the function's entry; also blocks nothing reaches).
    bool entry = false;
    // Flow may leave here (returns, tail calls, indirect jumps of unknown targets).
    bool exit = false;
  };
  struct Edge {
    uint32_t from = 0, to = 0;
    // Optional hint: an edge to prefer less (e.g. to a block ending in a trap).
    bool unlikely = false;
  };
  std::vector<Block> blocks;
  std::vector<Edge> edges;  // self-loops allowed; parallel edges allowed (treated independently)
  // The weight that one sample over one instruction gives a block (weights are samples per
  // instruction, scaled): it says how many samples a count would have made (see "Kept warm"
  // in the header). 0: no block is kept warm.
  uint64_t weight_per_sample = 0;
  static constexpr double kSamplesThatSayCold = 3;
  // A block without samples could have run unseen up to the count that would have made this
  // many samples; past it, raising it costs more (see "Unseen" in the header).
  static constexpr double kSamplesUnseen = 0.5;
};

struct InferredFlow {
  std::vector<uint64_t> blocks;  // per block: the inferred execution count
  std::vector<uint64_t> edges;   // per edge, same order as FlowGraph::edges
  uint64_t entered = 0;          // total flow entering through entry blocks
  uint32_t kept_warm = 0;        // blocks given a unit by "Kept warm" (see the header)
  // Known weight on blocks no entry reaches, left out (saturates at 2^64 - 1).
  uint64_t unreachable_weight = 0;
  // Counts are in units of 2^unit_shift samples. 0 unless the weights sum past 2^56 (they are
  // scaled down to fit) and the result scaled back up would not fit in 64 bits.
  uint32_t unit_shift = 0;
};

// Deterministic; never throws except std::invalid_argument for an edge naming a block that does
// not exist, or 2^28 blocks or edges and more.
InferredFlow infer_flow(const FlowGraph& graph);

}  // namespace profcollect
