#include "output/edge_inference.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "output/flow_inference.h"

namespace profcollect {

namespace {

// One function's inferred counts, kept until every function is inferred: the call branches into
// a function need its callers' counts.
struct InferredFunction {
  const FunctionSymbol* function = nullptr;
  const BoltFunctionBlocks* code = nullptr;
  InferredFlow flow;
};

}  // namespace

FlowGraph sampled_flow_graph(const BoltFunctionBlocks& code, uint64_t function_address,
                             std::span<const std::pair<uint64_t, uint64_t>> samples) {
  FlowGraph graph;
  graph.weight_per_sample = kWeightScale;
  graph.blocks.resize(code.blocks.size());
  // Per block: samples on the instructions but the first, and whether any fell on the first.
  std::vector<uint64_t> block_samples(code.blocks.size(), 0);
  std::vector<bool> first_sampled(code.blocks.size(), false);
  for (const auto& [address, count] : samples) {
    const int b = code.block_containing(address - function_address);
    if (b < 0) continue;
    // A block's first instruction's samples are left out of its estimate (see the header).
    if (code.blocks[static_cast<size_t>(b)].offset != address - function_address) {
      block_samples[static_cast<size_t>(b)] += count;
    } else if (count > 0) {
      first_sampled[static_cast<size_t>(b)] = true;
    }
  }
  std::vector<bool> reached(code.blocks.size(), false);
  graph.edges.reserve(code.edges.size());
  std::vector<bool> has_successor(code.blocks.size(), false);
  for (const BoltEdge& e : code.edges) {
    graph.edges.push_back(FlowGraph::Edge{e.from, e.to});
    if (e.to != e.from) reached[e.to] = true;
    has_successor[e.from] = true;
  }
  for (size_t b = 0; b < code.blocks.size(); ++b) {
    const BoltBlock& block = code.blocks[b];
    FlowGraph::Block& node = graph.blocks[b];
    // Samples over the instructions but the first (see the header); a block of one instruction
    // has no estimate at all (its count is left to flow).
    if (block.instructions <= 1) {
      node.known = false;
    } else {
      const uint64_t sampled = block.instructions - 1;
      node.evidence = static_cast<uint32_t>(sampled);
      // Rounded to the nearest unit; at most 2^64 / kWeightScale samples in a block.
      node.weight = (block_samples[b] * kWeightScale + sampled / 2) / sampled;
      // A sample on an instruction says it was about to run: the block ran (see the header).
      node.ran = block_samples[b] == 0 && first_sampled[b];
    }
    // Nothing in the CFG reaches it (a landing pad, a target of an unread jump table): control
    // came from where the CFG does not show. But not into padding (see the header).
    node.entry = b == 0 || (!reached[b] && !block.only_nops);
    node.exit = block.leaves || block.unknown_successors || !has_successor[b];
  }
  return graph;
}

InferredEdges infer_edges(const IpProfile& samples, const SymbolTable& functions,
                          BoltBlockMap& blocks, const RenderStop* stop) {
  InferredEdges out{BranchProfile(&functions), {}};
  EdgeInferenceStats& stats = out.stats;
  std::vector<std::pair<uint64_t, uint64_t>> sorted(samples.counts().begin(),
                                                    samples.counts().end());
  std::sort(sorted.begin(), sorted.end());
  stats.samples = samples.total();

  std::vector<InferredFunction> inferred;
  for (size_t i = 0; i < sorted.size();) {
    const SymbolTable::FoundRun run = functions.find_run(sorted[i].first);
    size_t j = i;
    uint64_t function_samples = 0;
    while (j < sorted.size() && sorted[j].first >= run.begin && sorted[j].first < run.end)
      function_samples += sorted[j++].second;
    if (j == i) function_samples += sorted[j++].second;  // find_run gave an empty run
    const std::span<const std::pair<uint64_t, uint64_t>> mine(sorted.data() + i, j - i);
    i = j;
    if (run.function == nullptr) {
      stats.no_function_samples += function_samples;
      continue;
    }
    ++stats.functions;
    const BoltFunctionBlocks& code = blocks.blocks(*run.function);
    // llvm-bolt builds no CFG of a function with a jump that may go anywhere in it: edges there
    // would be traces it cannot place (mapper/bolt_block_map.h).
    if (!code.simple || code.blocks.empty() || code.unknown_jump_outside_epilogue) {
      stats.not_simple_samples += function_samples;
      continue;
    }
    if (stop != nullptr) stop->check();
    InferredFlow flow = infer_flow(sampled_flow_graph(code, run.function->addr, mine));
    if (flow.entered == 0) continue;  // too few samples to say anything
    ++stats.inferred_functions;
    stats.blocks_kept_warm += flow.kept_warm;
    stats.inferred_samples += function_samples;
    stats.blocks += static_cast<uint64_t>(
        std::count_if(flow.blocks.begin(), flow.blocks.end(), [](uint64_t c) { return c > 0; }));
    inferred.push_back(InferredFunction{run.function, &code, std::move(flow)});
  }

  // Each edge, written the way BOLT reads it back as that edge.
  std::vector<std::pair<uint64_t, uint64_t>> calls_into;  // (callee address, count)
  for (const InferredFunction& f : inferred) {
    const uint64_t base = f.function->addr;
    const std::vector<BoltBlock>& code_blocks = f.code->blocks;
    for (size_t e = 0; e < f.code->edges.size(); ++e) {
      const uint64_t count = f.flow.edges[e];
      if (count == 0) continue;
      const BoltEdge& edge = f.code->edges[e];
      const uint64_t to = base + code_blocks[edge.to].offset;
      if (edge.branch_offset == BoltEdge::kFallThrough) {
        out.profile.add_fall_through(FallThrough{base + code_blocks[edge.from].offset, to, false},
                                     count);
      } else {
        out.profile.add_branch(TakenBranch{base + edge.branch_offset, to, false, false}, count, 0);
      }
    }
    for (const BoltCall& call : f.code->calls) {
      const uint64_t count = f.flow.blocks[call.block];
      const FunctionSymbol* callee = functions.find(call.target);
      if (count == 0 || callee == nullptr || callee->addr != call.target || callee->is_plt)
        continue;
      out.profile.add_branch(TakenBranch{base + call.offset, call.target, false, false}, count, 0);
      calls_into.emplace_back(call.target, count);
    }
  }
  std::sort(calls_into.begin(), calls_into.end());
  // What enters a function beyond its sampled callers' calls came from elsewhere.
  for (const InferredFunction& f : inferred) {
    uint64_t entered = f.flow.blocks[0];
    for (size_t e = 0; e < f.code->edges.size(); ++e)
      if (f.code->edges[e].to == 0) entered -= std::min(entered, f.flow.edges[e]);
    auto it = std::lower_bound(calls_into.begin(), calls_into.end(),
                               std::pair<uint64_t, uint64_t>{f.function->addr, 0});
    for (; it != calls_into.end() && it->first == f.function->addr; ++it)
      entered -= std::min(entered, it->second);
    if (entered > 0) {
      out.profile.add_branch(TakenBranch{kExternalAddress, f.function->addr, true, false}, entered,
                             0);
    }
  }
  return out;
}

}  // namespace profcollect
