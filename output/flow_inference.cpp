#include "output/flow_inference.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "output/count_sum.h"

namespace profcollect {
namespace {

// Per-unit costs of changing a block's count (see the header; profi's defaults but for lowering
// and the entry block, tuned on IP samples).
constexpr int32_t kCostBlockInc = 10;
constexpr int32_t kCostBlockDec = 40;
constexpr int32_t kCostBlockZeroInc = 11;
constexpr int32_t kCostEntryInc = 10;
constexpr int32_t kCostEntryDec = 40;
constexpr int32_t kCostUnlikely = int32_t{1} << 30;
constexpr int32_t kDecBelowHalf = 4;
constexpr int32_t kIncPastUnseen = 4;

// Weights are scaled down until they sum to at most kMaxTotalWeight; every flow then stays far
// below kInfinite, the capacity of the arcs without a limit, and no residual can wrap.
constexpr uint64_t kMaxTotalWeight = uint64_t{1} << 56;
constexpr int64_t kInfinite = int64_t{1} << 62;
constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();
constexpr size_t kMaxBlocks = size_t{1} << 28;

// Min-cost flow with node supplies and non-negative arc costs, by successive shortest paths:
// Dijkstra on reduced costs finds the distance D from the excess to the nearest deficit and
// updates the potentials so that every arc of a cheapest route has reduced cost 0; the excess is
// then pushed down a level graph of those tight arcs (each level one hop closer to a deficit),
// split evenly among the equally good arcs, until no excess reaches a deficit at that distance.
class MinCostFlow {
 public:
  explicit MinCostFlow(uint32_t nodes) : balance_(nodes, 0), potential_(nodes, 0) {}

  // Arc a and its reverse a ^ 1 (residual: the flow that can be undone) sit side by side.
  size_t add_arc(uint32_t from, uint32_t to, int64_t capacity, int32_t cost) {
    arcs_.push_back({to, cost, capacity});
    arcs_.push_back({from, -cost, 0});
    return arcs_.size() - 2;
  }
  void add_supply(uint32_t node, int64_t amount) { balance_[node] += amount; }
  int64_t flow(size_t arc) const { return arcs_[arc ^ 1].residual; }

  // False when some excess cannot reach any deficit (a network built wrong).
  bool solve() {
    build_adjacency();
    while (has_excess()) {
      if (!update_potentials() || !build_levels()) return false;
      do push_round();
      while (build_levels());
    }
    return true;
  }

 private:
  struct Arc {  // 16 bytes: the BFS and Dijkstra walk them all, many times
    uint32_t to;
    int32_t cost;
    int64_t residual;
  };

  uint32_t from(size_t a) const { return arcs_[a ^ 1].to; }
  int64_t reduced_cost(size_t a) const {
    return arcs_[a].cost + potential_[from(a)] - potential_[arcs_[a].to];
  }
  bool tight(size_t a) const { return arcs_[a].residual > 0 && reduced_cost(a) == 0; }
  bool has_excess() const {
    return std::any_of(balance_.begin(), balance_.end(), [](int64_t b) { return b > 0; });
  }

  void build_adjacency() {
    first_.assign(balance_.size() + 1, 0);
    for (const Arc& arc : arcs_) ++first_[arc.to + 1];  // each arc's reverse leaves arc.to
    for (size_t v = 1; v < first_.size(); ++v) first_[v] += first_[v - 1];
    adjacency_.resize(arcs_.size());
    std::vector<uint32_t> next(first_.begin(), first_.end() - 1);
    for (size_t a = 0; a < arcs_.size(); ++a) adjacency_[next[from(a)]++] = a;
  }

  // Dijkstra from every excess node, stopped at the first deficit (distance D). Raising each
  // potential by min(distance, D) keeps every reduced cost non-negative and makes the arcs of
  // every route of cost D tight.
  bool update_potentials() {
    constexpr int64_t kFar = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> dist(balance_.size(), kFar);
    using Item = std::pair<int64_t, uint32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    for (uint32_t v = 0; v < balance_.size(); ++v) {
      if (balance_[v] > 0) {
        dist[v] = 0;
        queue.push({0, v});
      }
    }
    int64_t reach = -1;
    while (!queue.empty()) {
      auto [d, v] = queue.top();
      queue.pop();
      if (d > dist[v]) continue;
      if (balance_[v] < 0) {
        reach = d;
        break;
      }
      for (uint32_t i = first_[v]; i < first_[v + 1]; ++i) {
        const size_t a = adjacency_[i];
        if (arcs_[a].residual == 0) continue;
        const int64_t nd = d + reduced_cost(a);
        if (nd < dist[arcs_[a].to]) {
          dist[arcs_[a].to] = nd;
          queue.push({nd, arcs_[a].to});
        }
      }
    }
    if (reach < 0) return false;
    for (size_t v = 0; v < dist.size(); ++v) potential_[v] += std::min(dist[v], reach);
    return true;
  }

  // Levels by hops to the nearest deficit over tight arcs (a BFS backwards). True when some
  // excess has a level, that is, can still reach a deficit at the current distance.
  bool build_levels() {
    level_.assign(balance_.size(), kNoIndex);
    order_.clear();
    for (uint32_t v = 0; v < balance_.size(); ++v) {
      if (balance_[v] < 0) {
        level_[v] = 0;
        order_.push_back(v);
      }
    }
    bool reaches = false;
    for (size_t head = 0; head < order_.size(); ++head) {
      const uint32_t v = order_[head];
      reaches |= balance_[v] > 0;
      for (uint32_t i = first_[v]; i < first_[v + 1]; ++i) {
        const size_t back = adjacency_[i] ^ 1;  // an arc into v
        const uint32_t u = from(back);
        if (level_[u] == kNoIndex && tight(back)) {
          level_[u] = level_[v] + 1;
          order_.push_back(u);
        }
      }
    }
    return reaches;
  }

  template <typename F>
  void for_admissible(uint32_t v, F f) const {
    for (uint32_t i = first_[v]; i < first_[v + 1]; ++i) {
      const size_t a = adjacency_[i];
      if (level_[arcs_[a].to] + 1 == level_[v] && tight(a)) f(a);
    }
  }

  // One pass from the farthest level down: each node with excess hands it one level on.
  void push_round() {
    for (size_t i = order_.size(); i-- > 0;) {
      const uint32_t v = order_[i];
      if (balance_[v] > 0 && level_[v] > 0) push_from(v);
    }
  }

  // Water-filling: the arcs that take less than an even share are filled, the rest share
  // what remains evenly (the rounding goes to the arcs first in order). Excess the arcs cannot
  // take stays here and waits for the next round.
  void push_from(uint32_t v) {
    candidates_.clear();
    for_admissible(v, [&](size_t a) { candidates_.push_back(a); });
    std::sort(candidates_.begin(), candidates_.end(), [&](size_t x, size_t y) {
      return std::tie(arcs_[x].residual, x) < std::tie(arcs_[y].residual, y);
    });
    int64_t left = balance_[v];
    for (size_t i = 0; i < candidates_.size() && left > 0; ++i) {
      const int64_t ways = static_cast<int64_t>(candidates_.size() - i);
      const size_t a = candidates_[i];
      const int64_t amount = std::min((left + ways - 1) / ways, arcs_[a].residual);
      arcs_[a].residual -= amount;
      arcs_[a ^ 1].residual += amount;
      balance_[v] -= amount;
      balance_[arcs_[a].to] += amount;
      left -= amount;
    }
  }

  std::vector<Arc> arcs_;
  std::vector<uint32_t> first_;  // arcs leaving v: adjacency_[first_[v] .. first_[v + 1])
  std::vector<uint32_t> adjacency_;
  std::vector<int64_t> balance_;  // > 0: excess; < 0: deficit
  std::vector<int64_t> potential_;
  std::vector<uint32_t> level_;
  std::vector<uint32_t> order_;  // the BFS order: by level, ascending
  std::vector<size_t> candidates_;
};

// The CFG as adjacency lists of edge indices, and each block's role.
struct Cfg {
  explicit Cfg(const FlowGraph& graph) : graph(graph), n(graph.blocks.size()) {
    first_out.assign(n + 1, 0);
    first_in.assign(n + 1, 0);
    for (const FlowGraph::Edge& e : graph.edges) {
      if (e.from >= n || e.to >= n) throw std::invalid_argument("flow graph edge out of range");
      ++first_out[e.from + 1];
      ++first_in[e.to + 1];
    }
    for (size_t b = 0; b < n; ++b) {
      first_out[b + 1] += first_out[b];
      first_in[b + 1] += first_in[b];
    }
    out_edges.resize(graph.edges.size());
    in_edges.resize(graph.edges.size());
    std::vector<uint32_t> next_out(first_out.begin(), first_out.end() - 1);
    std::vector<uint32_t> next_in(first_in.begin(), first_in.end() - 1);
    for (uint32_t e = 0; e < graph.edges.size(); ++e) {
      out_edges[next_out[graph.edges[e].from]++] = e;
      in_edges[next_in[graph.edges[e].to]++] = e;
    }
    find_roles();
  }

  template <typename F>
  void for_out(uint32_t b, F f) const {
    for (uint32_t i = first_out[b]; i < first_out[b + 1]; ++i) f(out_edges[i]);
  }
  template <typename F>
  void for_in(uint32_t b, F f) const {
    for (uint32_t i = first_in[b]; i < first_in[b + 1]; ++i) f(in_edges[i]);
  }

  const FlowGraph& graph;
  const size_t n;
  std::vector<uint32_t> first_out, out_edges, first_in, in_edges;
  std::vector<bool> entry, exit, reachable;

 private:
  // Marks `from` and everything it reaches (forward, or backward along edges) in `seen`.
  void flood(std::vector<bool>& seen, std::vector<uint32_t> work, bool forward) const {
    while (!work.empty()) {
      const uint32_t b = work.back();
      work.pop_back();
      auto visit = [&](uint32_t e) {
        const uint32_t next = forward ? graph.edges[e].to : graph.edges[e].from;
        if (!seen[next]) {
          seen[next] = true;
          work.push_back(next);
        }
      };
      forward ? for_out(b, visit) : for_in(b, visit);
    }
  }

  // Entries (block 0 when none is marked), what they reach, and the exits: marked, without
  // successors, or in an endless loop (see mark_endless_loops).
  void find_roles() {
    entry.assign(n, false);
    exit.assign(n, false);
    reachable.assign(n, false);
    for (uint32_t b = 0; b < n; ++b) entry[b] = graph.blocks[b].entry;
    if (n > 0 && std::none_of(entry.begin(), entry.end(), [](bool e) { return e; })) {
      entry[0] = true;
    }
    std::vector<uint32_t> work;
    for (uint32_t b = 0; b < n; ++b) {
      if (entry[b]) {
        reachable[b] = true;
        work.push_back(b);
      }
    }
    flood(reachable, std::move(work), true);
    work.clear();
    std::vector<bool> leaves(n, false);
    for (uint32_t b = 0; b < n; ++b) {
      exit[b] = graph.blocks[b].exit || first_out[b] == first_out[b + 1];
      if (exit[b]) {
        leaves[b] = true;
        work.push_back(b);
      }
    }
    flood(leaves, std::move(work), false);
    mark_endless_loops(leaves);
  }

  // Blocks that cannot reach an exit end in loops with no way out (a server's main loop, a
  // spin on a call that never returns). Flow has to leave somewhere for the counts to
  // conserve, and the samples say the loop ran: every block of a strongly connected component
  // that no edge leaves becomes an exit, then every block reaches one. Tarjan's algorithm,
  // iterative, over those blocks (their successors are among them); it closes a component
  // only after every component it leads to, so those already have their numbers.
  void mark_endless_loops(const std::vector<bool>& leaves) {
    std::vector<uint32_t> index(n, kNoIndex), low(n, 0), component(n, kNoIndex), stack;
    std::vector<std::pair<uint32_t, uint32_t>> calls;  // block, position in its out_edges
    uint32_t counter = 0;
    auto open = [&](uint32_t b) {
      index[b] = low[b] = counter++;
      stack.push_back(b);
      calls.push_back({b, first_out[b]});
    };
    for (uint32_t root = 0; root < n; ++root) {
      if (leaves[root] || index[root] != kNoIndex) continue;
      open(root);
      while (!calls.empty()) {
        const uint32_t b = calls.back().first;
        if (calls.back().second < first_out[b + 1]) {
          const uint32_t to = graph.edges[out_edges[calls.back().second++]].to;
          if (index[to] == kNoIndex) {
            open(to);
          } else if (component[to] == kNoIndex) {  // still on the stack
            low[b] = std::min(low[b], index[to]);
          }
          continue;
        }
        calls.pop_back();
        if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[b]);
        if (low[b] != index[b]) continue;
        const auto at = std::find(stack.rbegin(), stack.rend(), b);  // b opened the component
        const size_t members = static_cast<size_t>(stack.rend() - at) - 1;
        for (size_t i = members; i < stack.size(); ++i) component[stack[i]] = b;
        bool sink = true;
        for (size_t i = members; i < stack.size(); ++i) {
          for_out(stack[i], [&](uint32_t e) { sink &= component[graph.edges[e].to] == b; });
        }
        for (size_t i = members; i < stack.size(); ++i) exit[stack[i]] = exit[stack[i]] || sink;
        stack.resize(members);
      }
    }
  }
};

// A flow on the CFG: edge counts plus what enters and leaves each block from outside.
struct CfgFlow {
  std::vector<uint64_t> edge, inflow, outflow, count;

  void recount(const Cfg& cfg) {
    count.assign(cfg.n, 0);
    for (uint32_t b = 0; b < cfg.n; ++b) {
      count[b] = inflow[b];
      cfg.for_in(b, [&](uint32_t e) { count[b] += edge[e]; });
    }
  }
};

std::pair<int32_t, int32_t> block_costs(const FlowGraph::Block& block, bool entry) {
  if (!block.known) return {0, 0};
  // Every instruction the estimate was sampled over is evidence (see the header).
  const int32_t evidence =
      static_cast<int32_t>(std::clamp<uint32_t>(block.evidence, 1, FlowGraph::Block::kMaxEvidence));
  if (entry) return {kCostEntryInc * evidence, kCostEntryDec * evidence};
  return {(block.weight == 0 ? kCostBlockZeroInc : kCostBlockInc) * evidence,
          kCostBlockDec * evidence};
}

// The count up to which raising a block without samples costs its plain rate: the count at which
// it would have made FlowGraph::kSamplesUnseen samples (in units scaled down by `shift`, at
// least 1). 0: no such limit (a sampled, unknown or entry block, or no weight_per_sample).
int64_t unseen_count(const FlowGraph& graph, const FlowGraph::Block& block, bool entry,
                     uint32_t shift) {
  if (!block.known || block.weight != 0 || entry || graph.weight_per_sample == 0) return 0;
  const double count = FlowGraph::kSamplesUnseen * static_cast<double>(graph.weight_per_sample) /
                       std::clamp<uint32_t>(block.evidence, 1, FlowGraph::Block::kMaxEvidence);
  const double scaled = std::ldexp(count, -static_cast<int>(shift));
  return std::max<int64_t>(1, std::llround(std::min(scaled, static_cast<double>(kMaxTotalWeight))));
}

// The min-cost flow on the network of the header, with the block weights `weight` (scaled down
// by `shift`).
bool solve_network(const Cfg& cfg, const std::vector<int64_t>& weight, uint32_t shift,
                   CfgFlow& flow) {
  const uint32_t n = cfg.n;
  const uint32_t source = 2 * n, sink = 2 * n + 1;
  MinCostFlow network(2 * n + 2);
  std::vector<size_t> entry_arc(n, SIZE_MAX), exit_arc(n, SIZE_MAX);
  std::vector<size_t> edge_arc(cfg.graph.edges.size(), SIZE_MAX);
  for (uint32_t b = 0; b < n; ++b) {
    if (!cfg.reachable[b]) continue;
    const auto [inc, dec] = block_costs(cfg.graph.blocks[b], cfg.entry[b]);
    // Raising a block without samples past what it could have run unseen costs kIncPastUnseen
    // times as much (see the header).
    const int64_t unseen = unseen_count(cfg.graph, cfg.graph.blocks[b], cfg.entry[b], shift);
    if (unseen > 0) {
      network.add_arc(2 * b, 2 * b + 1, unseen, inc);
      network.add_arc(2 * b, 2 * b + 1, kInfinite, inc * kIncPastUnseen);
    } else {
      network.add_arc(2 * b, 2 * b + 1, kInfinite, inc);
    }
    // A block that ran unseen is estimated at its unseen count (see "Ran" in the header).
    const int64_t estimate = weight[b] == 0 && cfg.graph.blocks[b].ran ? unseen : weight[b];
    if (estimate > 0) {
      // Lowering past half the estimate costs kDecBelowHalf times as much (see the header).
      const int64_t half = estimate / 2;
      if (half > 0) network.add_arc(2 * b + 1, 2 * b, half, dec);
      network.add_arc(2 * b + 1, 2 * b, estimate - half, dec * kDecBelowHalf);
      network.add_supply(2 * b + 1, estimate);
      network.add_supply(2 * b, -estimate);
    }
    if (cfg.entry[b]) entry_arc[b] = network.add_arc(source, 2 * b, kInfinite, 0);
    if (cfg.exit[b]) exit_arc[b] = network.add_arc(2 * b + 1, sink, kInfinite, 0);
  }
  for (uint32_t e = 0; e < cfg.graph.edges.size(); ++e) {
    const FlowGraph::Edge& edge = cfg.graph.edges[e];
    if (!cfg.reachable[edge.from]) continue;
    edge_arc[e] = network.add_arc(2 * edge.from + 1, 2 * edge.to, kInfinite,
                                  edge.unlikely ? kCostUnlikely : 0);
  }
  network.add_arc(sink, source, kInfinite, 0);
  if (!network.solve()) return false;

  auto flow_of = [&](size_t arc) -> uint64_t { return arc == SIZE_MAX ? 0 : network.flow(arc); };
  flow.edge.assign(cfg.graph.edges.size(), 0);
  flow.inflow.assign(n, 0);
  flow.outflow.assign(n, 0);
  for (uint32_t e = 0; e < flow.edge.size(); ++e) flow.edge[e] = flow_of(edge_arc[e]);
  for (uint32_t b = 0; b < n; ++b) {
    flow.inflow[b] = flow_of(entry_arc[b]);
    flow.outflow[b] = flow_of(exit_arc[b]);
  }
  flow.recount(cfg);
  return true;
}

// Likeliest paths between the outside and every block, as a tree: forward, each block's edge
// from its predecessor on the likeliest path from an entry (kNoIndex: entered here); backward, its
// edge to the next block on the likeliest path to an exit (kNoIndex: leaves here). "Likeliest" is
// lexicographic: fewest unlikely edges, then fewest steps without flow (each changes a branch
// probability from 0), then fewest steps.
std::vector<uint32_t> likeliest_tree(const Cfg& cfg, const CfgFlow& flow, bool forward) {
  using PathCost = std::tuple<uint64_t, uint64_t, uint64_t>;
  constexpr uint64_t kFar = std::numeric_limits<uint64_t>::max();
  std::vector<PathCost> dist(cfg.n, {kFar, kFar, kFar});
  std::vector<uint32_t> via(cfg.n, kNoIndex);
  using Item = std::pair<PathCost, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  auto relax = [&](uint32_t b, const PathCost& d, bool unlikely, uint64_t amount, uint32_t e) {
    const PathCost next{std::get<0>(d) + unlikely, std::get<1>(d) + (amount == 0),
                        std::get<2>(d) + 1};
    if (next < dist[b]) {
      dist[b] = next;
      via[b] = e;
      queue.push({next, b});
    }
  };
  for (uint32_t b = 0; b < cfg.n; ++b) {
    if (!cfg.reachable[b]) continue;
    if (forward && cfg.entry[b]) relax(b, {0, 0, 0}, false, flow.inflow[b], kNoIndex);
    if (!forward && cfg.exit[b]) relax(b, {0, 0, 0}, false, flow.outflow[b], kNoIndex);
  }
  while (!queue.empty()) {
    const auto [d, v] = queue.top();
    queue.pop();
    if (d > dist[v]) continue;
    auto step = [&](uint32_t e) {
      const FlowGraph::Edge& edge = cfg.graph.edges[e];
      relax(forward ? edge.to : edge.from, d, edge.unlikely, flow.edge[e], e);
    };
    forward ? cfg.for_out(v, step) : cfg.for_in(v, step);
  }
  return via;
}

// Likeliest paths from an entry through a block to an exit (the two trees of likeliest_tree).
struct LikeliestPaths {
  LikeliestPaths(const Cfg& cfg, const CfgFlow& flow)
      : from_entry(likeliest_tree(cfg, flow, true)), to_exit(likeliest_tree(cfg, flow, false)) {}

  // Adds one unit of flow along the path through `block`, whose edges it leaves in `path` (from
  // the entry on). False, adding nothing, when the trees lead to no entry or no exit from it.
  bool add_unit_through(const Cfg& cfg, CfgFlow& flow, uint32_t block,
                        std::vector<uint32_t>& path) const {
    path.clear();
    uint32_t first = block, last = block;
    for (uint32_t e = from_entry[first]; e != kNoIndex; e = from_entry[first]) {
      path.push_back(e);
      first = cfg.graph.edges[e].from;
    }
    std::reverse(path.begin(), path.end());
    for (uint32_t e = to_exit[last]; e != kNoIndex; e = to_exit[last]) {
      path.push_back(e);
      last = cfg.graph.edges[e].to;
    }
    if (!cfg.entry[first] || !cfg.exit[last]) return false;
    ++flow.inflow[first];
    ++flow.count[first];
    for (uint32_t e : path) {
      ++flow.edge[e];
      ++flow.count[cfg.graph.edges[e].to];
    }
    ++flow.outflow[last];
    return true;
  }

  std::vector<uint32_t> from_entry, to_exit;
};

// profi's "join islands": every block with flow must be reached from an entry along edges
// with flow. The solver can leave a loop's samples circulating on their own while its way in
// carries nothing, even when a connected flow of the same counts exists (exact inputs have one).
// So first, at no cost, flow is rerouted: a cycle of changes that raises an edge from a reached
// block into the island and, alternately, lowers and raises other edges (or what enters and
// leaves the function) leaves every block's count as it was. Only edges with at least 2 are
// lowered, by half at most, so no edge loses its flow and what is reached stays reached. When
// no such cycle exists, as profi does, one unit is added along the likeliest path from an entry
// through the island to an exit.
class IslandJoiner {
 public:
  IslandJoiner(const Cfg& cfg, CfgFlow& flow)
      : cfg_(cfg),
        flow_(flow),
        seen_(cfg.n),
        tried_(cfg.n),
        closing_(cfg.n, kNoIndex),
        parent_(2 * cfg.n + 2, kNoIndex),
        via_(2 * cfg.n + 2) {
    for (uint32_t b = 0; b < cfg.n; ++b) {
      if (cfg.reachable[b] && cfg.entry[b]) entries_.push_back(b);
      if (cfg.reachable[b] && cfg.exit[b]) exits_.push_back(b);
    }
  }

  void run() {
    // Each round gives flow to at least one more edge (or entry) and takes it from none, so
    // rounds are bounded and what is reached stays reached. Each search walks the graph, so a
    // block is tried once and searches are capped: with noisy weights they mostly fail (no
    // reroute keeps every count), with exact ones islands are few.
    size_t searches = 64;
    for (uint32_t b : entries_) {
      if (flow_.inflow[b] > 0) see(b);
    }
    for (uint32_t first = 0;;) {
      uint32_t island = kNoIndex;
      bool rerouted = false;
      for (uint32_t b = first; b < cfg_.n && !rerouted; ++b) {
        if (flow_.count[b] == 0 || seen_[b]) continue;
        if (island == kNoIndex) island = b;
        if (searches > 0 && !tried_[b] && (cfg_.entry[b] || has_seen_predecessor(b))) {
          --searches;
          tried_[b] = true;
          rerouted = reroute_into(b);
        }
      }
      if (island == kNoIndex) return;
      if (!rerouted && !add_unit_through(island)) return;
      first = island;  // the blocks before it are reached or have no flow
    }
  }

 private:
  // Nodes of the search: in(b) = 2b, out(b) = 2b + 1, the outside as source and sink.
  // A move changes one quantity by +1 or -1 (scaled by the amount later).
  enum class Kind : uint8_t { kEdge, kInflow, kOutflow, kNoIndex };
  struct Move {
    Kind kind = Kind::kNoIndex;
    uint32_t index = 0;
    bool raise = false;
  };

  // Marks b, and what it reaches along edges with flow, as reached.
  void see(uint32_t b) {
    if (seen_[b]) return;
    seen_[b] = true;
    work_.assign(1, b);
    while (!work_.empty()) {
      const uint32_t v = work_.back();
      work_.pop_back();
      cfg_.for_out(v, [&](uint32_t e) {
        const uint32_t to = cfg_.graph.edges[e].to;
        if (flow_.edge[e] > 0 && !seen_[to]) {
          seen_[to] = true;
          work_.push_back(to);
        }
      });
    }
  }

  bool has_seen_predecessor(uint32_t b) const {
    bool found = false;
    cfg_.for_in(b, [&](uint32_t e) {
      found |= seen_[cfg_.graph.edges[e].from] && !cfg_.graph.edges[e].unlikely;
    });
    return found;
  }

  // A breadth-first search from in(island) back to out(u) for a reached u with an edge
  // u -> island, or to the outside when the island is an entry; raising that edge (or what
  // enters the island) closes the cycle.
  bool reroute_into(uint32_t island) {
    const bool done = search(island);
    for (uint32_t v : queue_) parent_[v] = kNoIndex;
    cfg_.for_in(island, [&](uint32_t e) { closing_[cfg_.graph.edges[e].from] = kNoIndex; });
    return done;
  }

  bool search(uint32_t island) {
    const uint32_t n = cfg_.n, source = 2 * n, sink = 2 * n + 1;
    queue_.assign(1, 2 * island);
    cfg_.for_in(island, [&](uint32_t e) {
      const FlowGraph::Edge& edge = cfg_.graph.edges[e];
      if (seen_[edge.from] && !edge.unlikely) closing_[edge.from] = e;
    });
    parent_[2 * island] = 2 * island;
    uint32_t found = kNoIndex;
    auto step = [&](uint32_t from, uint32_t to, Move move) {
      if (parent_[to] != kNoIndex) return;
      parent_[to] = from;
      via_[to] = move;
      queue_.push_back(to);
    };
    for (size_t head = 0; head < queue_.size() && found == kNoIndex; ++head) {
      const uint32_t v = queue_[head];
      if (v == source) {
        if (cfg_.entry[island]) {
          found = v;
          break;
        }
        for (uint32_t b : entries_) step(v, 2 * b, {Kind::kInflow, b, true});
        step(v, sink, {});  // less enters and leaves
      } else if (v == sink) {
        for (uint32_t b : exits_) {
          if (flow_.outflow[b] >= 2) step(v, 2 * b + 1, {Kind::kOutflow, b, false});
        }
        step(v, source, {});    // more leaves and enters
      } else if (v % 2 == 0) {  // in(b): lower an edge into b (or what enters it)
        const uint32_t b = v / 2;
        cfg_.for_in(b, [&](uint32_t e) {
          if (flow_.edge[e] >= 2) {
            step(v, 2 * cfg_.graph.edges[e].from + 1, {Kind::kEdge, e, false});
          }
        });
        if (cfg_.entry[b] && flow_.inflow[b] >= 2) step(v, source, {Kind::kInflow, b, false});
      } else {  // out(b): raise an edge out of b (or what leaves it)
        const uint32_t b = v / 2;
        if (closing_[b] != kNoIndex) {
          found = v;
          break;
        }
        cfg_.for_out(b, [&](uint32_t e) {
          if (!cfg_.graph.edges[e].unlikely) {
            step(v, 2 * cfg_.graph.edges[e].to, {Kind::kEdge, e, true});
          }
        });
        if (cfg_.exit[b]) step(v, sink, {Kind::kOutflow, b, true});
      }
    }
    if (found == kNoIndex) return false;

    std::vector<Move> cycle{found == source ? Move{Kind::kInflow, island, true}
                                            : Move{Kind::kEdge, closing_[found / 2], true}};
    for (uint32_t v = found; v != 2 * island; v = parent_[v]) {
      if (via_[v].kind != Kind::kNoIndex) cycle.push_back(via_[v]);
    }
    uint64_t amount = std::numeric_limits<uint64_t>::max();
    for (const Move& move : cycle) {
      if (!move.raise) amount = std::min(amount, *quantity(move) / 2);
    }
    for (const Move& move : cycle) {
      uint64_t& q = *quantity(move);
      q = move.raise ? q + amount : q - amount;
    }
    // The raised edge into the island starts at a reached block (or the island is an entry
    // that now has inflow); other raised edges may reach more.
    for (const Move& move : cycle) {
      if (move.raise && move.kind == Kind::kInflow) see(move.index);
      if (move.raise && move.kind == Kind::kEdge) {
        const FlowGraph::Edge& edge = cfg_.graph.edges[move.index];
        if (seen_[edge.from]) see(edge.to);
      }
    }
    return true;
  }

  uint64_t* quantity(const Move& move) {
    switch (move.kind) {
      case Kind::kEdge:
        return &flow_.edge[move.index];
      case Kind::kInflow:
        return &flow_.inflow[move.index];
      default:
        return &flow_.outflow[move.index];
    }
  }

  // profi's way: one unit from an entry through the island to an exit. The trees are made
  // once: later units follow the flow as it was then, which is still a likely way. False when
  // the trees do not lead from an entry to an exit through the island (cannot happen: the
  // island is reachable and every reachable block reaches an exit).
  bool add_unit_through(uint32_t island) {
    if (!paths_) paths_.emplace(cfg_, flow_);
    if (!paths_->add_unit_through(cfg_, flow_, island, path_)) return false;
    const uint32_t first = path_.empty() ? island : cfg_.graph.edges[path_.front()].from;
    see(first);
    for (uint32_t e : path_) {  // in order, as the path's edges now carry flow
      if (seen_[cfg_.graph.edges[e].from]) see(cfg_.graph.edges[e].to);
    }
    return true;
  }

  const Cfg& cfg_;
  CfgFlow& flow_;
  std::vector<bool> seen_, tried_;
  std::vector<uint32_t> entries_, exits_;
  std::optional<LikeliestPaths> paths_;
  // The search's state, kept between searches (reset where touched): per block u the edge
  // u -> island to raise, per node its parent and the move that reached it.
  std::vector<uint32_t> closing_, parent_, queue_, path_, work_;
  std::vector<Move> via_;
};

// Blocks that flow left at 0 although their samples cannot say they did not run (see the
// header, FlowGraph::weight_per_sample), and whose way on rejoins counted code at once (a
// successor with a count, or an exit), get one unit along the likeliest path from an entry
// through them to an exit. The candidates are chosen on the flow as the solver and the
// rebalancing left it; a path may pass other candidates, which then need none of their own.
// Returns how many blocks it gave flow.
uint32_t keep_warm(const Cfg& cfg, CfgFlow& flow, uint32_t shift) {
  const double per_sample = static_cast<double>(cfg.graph.weight_per_sample);
  if (per_sample <= 0) return 0;
  std::vector<uint32_t> candidates;
  for (uint32_t b = 0; b < cfg.n; ++b) {
    if (!cfg.reachable[b] || flow.count[b] > 0) continue;
    uint64_t busiest = 0;  // the busiest predecessor's count
    cfg.for_in(
        b, [&](uint32_t e) { busiest = std::max(busiest, flow.count[cfg.graph.edges[e].from]); });
    if (busiest == 0) continue;
    bool rejoins = cfg.exit[b];
    cfg.for_out(b, [&](uint32_t e) { rejoins |= flow.count[cfg.graph.edges[e].to] > 0; });
    if (!rejoins) continue;
    const double expected = std::ldexp(static_cast<double>(busiest), static_cast<int>(shift)) *
                            std::max<uint32_t>(cfg.graph.blocks[b].evidence, 1) / per_sample;
    if (expected < FlowGraph::kSamplesThatSayCold) candidates.push_back(b);
  }
  if (candidates.empty()) return 0;
  const std::vector<uint64_t> before = flow.count;
  const LikeliestPaths paths(cfg, flow);
  std::vector<uint32_t> path;
  for (uint32_t b : candidates) {
    if (flow.count[b] == 0) paths.add_unit_through(cfg, flow, b, path);  // else on an earlier path
  }
  uint32_t warmed = 0;
  for (uint32_t b = 0; b < cfg.n; ++b) warmed += before[b] == 0 && flow.count[b] > 0;
  return warmed;
}

// Sets the flow of `edges` to `amount` split evenly (rounding up, in order).
void split_evenly(uint64_t amount, const std::vector<uint32_t>& edges, CfgFlow& flow) {
  const uint64_t share = amount / edges.size() + (amount % edges.size() != 0);
  for (uint32_t e : edges) {
    flow.edge[e] = std::min(share, amount);
    amount -= flow.edge[e];
  }
}

// profi's rebalancing of unknown subgraphs, widened to every block without evidence (unknown, or
// 0 samples): from a sampled block `root`, the region of evidence-less blocks it leads into,
// when all of it drains into one sampled block `dest` (or only leaves the function), is acyclic
// and every way through it costs the same, gets its flow split evenly at every branch. Equal
// costs keep the flow a cheapest one; without them the solver's choice stands (a way through
// fewer unsampled blocks is a real preference).
class Rebalancer {
 public:
  Rebalancer(const Cfg& cfg, CfgFlow& flow)
      : cfg_(cfg), flow_(flow), mark_(cfg.n, 0), pending_(cfg.n, 0), level_(cfg.n, -1) {
    evidence_.resize(cfg.n);
    for (uint32_t b = 0; b < cfg.n; ++b) {
      const FlowGraph::Block& block = cfg.graph.blocks[b];
      evidence_[b] = block.known && (block.weight > 0 || block.ran);
    }
  }

  void run() {
    for (uint32_t b = 0; b < cfg_.n; ++b) {
      if (evidence_[b] && flow_.count[b] > 0) try_root(b);
    }
  }

 private:
  // Edges that take no part (their flow stays): unlikely ones without flow, the root's own
  // edges to sampled blocks other than dest, and edges into sampled blocks without flow.
  bool ignored(uint32_t e, uint32_t root, uint32_t dest) const {
    const FlowGraph::Edge& edge = cfg_.graph.edges[e];
    if (edge.unlikely && flow_.edge[e] == 0) return true;
    if (edge.to == dest) return false;
    return evidence_[edge.to] && (edge.from == root || flow_.count[edge.to] == 0);
  }
  bool in_region(uint32_t b) const { return mark_[b] == stamp_ && !evidence_[b]; }

  template <typename F>
  void for_kept(uint32_t b, uint32_t root, uint32_t dest, F f) const {
    cfg_.for_out(b, [&](uint32_t e) {
      if (!ignored(e, root, dest)) f(e);
    });
  }

  void try_root(uint32_t root) {
    // The region: evidence-less blocks reached from the root, and the sampled blocks beyond.
    ++stamp_;
    mark_[root] = stamp_;
    order_.assign(1, root);
    uint32_t dest = kNoIndex;
    for (size_t head = 0; head < order_.size(); ++head) {
      bool several = false;
      for_kept(order_[head], root, kNoIndex, [&](uint32_t e) {
        const uint32_t to = cfg_.graph.edges[e].to;
        if (mark_[to] == stamp_) return;
        mark_[to] = stamp_;
        if (!evidence_[to]) {
          order_.push_back(to);
        } else {
          several |= dest != kNoIndex;
          dest = to;
        }
      });
      if (several) return;
    }
    const size_t region_size = order_.size() - 1;
    if (region_size == 0) return;

    // Where the flow goes: every block passes it on, or (with no dest) leaves the function.
    for (size_t i = 1; i < order_.size(); ++i) {
      const uint32_t b = order_[i];
      size_t kept = 0;
      for_kept(b, root, dest, [&](uint32_t) { ++kept; });
      if (cfg_.exit[b] ? kept > 0 || dest != kNoIndex : kept == 0) return;
    }

    // A topological order (Kahn); a cycle, or a way back to the root, ends the attempt.
    for (size_t i = 0; i < order_.size(); ++i) pending_[order_[i]] = 0;
    bool loops = false;
    for (uint32_t b : order_) {
      for_kept(b, root, dest, [&](uint32_t e) {
        const uint32_t to = cfg_.graph.edges[e].to;
        loops |= to == root;
        if (in_region(to)) ++pending_[to];
      });
    }
    if (loops) return;
    topo_.assign(1, root);
    for (size_t head = 0; head < topo_.size(); ++head) {
      for_kept(topo_[head], root, dest, [&](uint32_t e) {
        const uint32_t to = cfg_.graph.edges[e].to;
        if (in_region(to) && --pending_[to] == 0) topo_.push_back(to);
      });
    }
    if (topo_.size() != order_.size()) return;

    // Equal costs: every block is reached at one cost, and so are dest and the outside.
    for (size_t i = 1; i < topo_.size(); ++i) level_[topo_[i]] = -1;
    level_[root] = 0;
    int64_t at_dest = -1, at_outside = -1;
    auto same = [](int64_t& slot, int64_t value) {
      if (slot < 0) slot = value;
      return slot == value;
    };
    for (uint32_t b : topo_) {
      if (b != root && cfg_.exit[b] && !same(at_outside, level_[b])) return;
      bool equal = true;
      for_kept(b, root, dest, [&](uint32_t e) {
        const FlowGraph::Edge& edge = cfg_.graph.edges[e];
        const int64_t cost = level_[b] + (edge.unlikely ? kCostUnlikely : 0);
        if (edge.to == dest) {
          equal &= same(at_dest, cost);
        } else {
          const FlowGraph::Block& block = cfg_.graph.blocks[edge.to];
          equal &= same(level_[edge.to], cost + block_costs(block, cfg_.entry[edge.to]).first);
        }
      });
      if (!equal) return;
    }

    // The even split, in topological order so each block's inflow is final when it is split.
    for (uint32_t b : topo_) {
      uint64_t amount = 0;
      if (b != root) {
        amount = flow_.inflow[b];
        cfg_.for_in(b, [&](uint32_t e) { amount += flow_.edge[e]; });
        flow_.count[b] = amount;
      }
      edges_.clear();
      for_kept(b, root, dest, [&](uint32_t e) {
        edges_.push_back(e);
        if (b == root) amount += flow_.edge[e];
      });
      if (edges_.empty()) {
        flow_.outflow[b] = amount;
      } else {
        split_evenly(amount, edges_, flow_);
      }
    }
  }

  const Cfg& cfg_;
  CfgFlow& flow_;
  std::vector<bool> evidence_;
  std::vector<uint32_t> mark_;  // == stamp_: seen from the current root
  uint32_t stamp_ = 0;
  std::vector<uint32_t> pending_;
  std::vector<int64_t> level_;  // cost of reaching the block from the root, -1: not yet
  std::vector<uint32_t> order_, topo_, edges_;
};

}  // namespace

InferredFlow infer_flow(const FlowGraph& graph) {
  // Node, edge and arc numbers fit 32 bits (a network arc pair per edge, up to 5 per block).
  if (graph.blocks.size() >= kMaxBlocks || graph.edges.size() >= kMaxBlocks) {
    throw std::invalid_argument("flow graph too large");
  }
  const Cfg cfg(graph);
  InferredFlow result;
  result.blocks.assign(cfg.n, 0);
  result.edges.assign(graph.edges.size(), 0);
  if (cfg.n == 0) return result;

  // The weights, scaled down by a power of two when they would sum past kMaxTotalWeight.
  CheckedSum unreachable;
  for (uint32_t b = 0; b < cfg.n; ++b) {
    if (graph.blocks[b].known && !cfg.reachable[b]) unreachable.add(graph.blocks[b].weight);
  }
  result.unreachable_weight =
      unreachable.overflow ? std::numeric_limits<uint64_t>::max() : unreachable.value;
  std::vector<int64_t> weight(cfg.n, 0);
  uint32_t shift = 0;
  for (;; ++shift) {
    CheckedSum total;
    for (uint32_t b = 0; b < cfg.n; ++b) {
      const FlowGraph::Block& block = graph.blocks[b];
      const uint64_t w = block.known && cfg.reachable[b] ? block.weight >> shift : 0;
      weight[b] = static_cast<int64_t>(w);  // final only once the total fits
      total.add(w);
      // A block that ran unseen gets its unseen count for an estimate (solve_network).
      if (w == 0 && block.ran && cfg.reachable[b])
        total.add(static_cast<uint64_t>(unseen_count(graph, block, cfg.entry[b], shift)));
    }
    if (!total.overflow && total.value <= kMaxTotalWeight) break;
  }

  CfgFlow flow;
  if (!solve_network(cfg, weight, shift, flow)) {
    assert(false && "every excess reaches a deficit: each block can undo its own weight");
    return result;
  }
  IslandJoiner(cfg, flow).run();
  Rebalancer(cfg, flow).run();
  flow.recount(cfg);
  result.kept_warm = keep_warm(cfg, flow, shift);
  flow.recount(cfg);

  uint64_t largest = 0;
  for (uint32_t b = 0; b < cfg.n; ++b) {
    result.entered += flow.inflow[b];
    largest = std::max(largest, flow.count[b]);
  }
  largest = std::max(largest, result.entered);
  const bool scale_back = shift > 0 && largest <= (std::numeric_limits<uint64_t>::max() >> shift);
  const uint32_t up = scale_back ? shift : 0;
  result.unit_shift = shift - up;
  result.entered <<= up;
  for (uint32_t b = 0; b < cfg.n; ++b) result.blocks[b] = flow.count[b] << up;
  for (size_t e = 0; e < graph.edges.size(); ++e) result.edges[e] = flow.edge[e] << up;
  return result;
}

}  // namespace profcollect
