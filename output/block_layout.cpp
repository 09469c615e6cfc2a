#include "output/block_layout.h"

#include "output/count_sum.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace profcollect {
namespace {

// The ext-TSP model (see the header; LLVM's defaults).
constexpr double kFallthroughWeight = 1.0;
// A fall-through that removes an unconditional jump saves an instruction as well.
constexpr double kUnconditionalFallthroughWeight = 1.05;
constexpr double kForwardWeight = 0.1;
constexpr double kBackwardWeight = 0.1;
constexpr uint64_t kForwardDistance = 1024;
constexpr uint64_t kBackwardDistance = 640;

// Chains of at most this many blocks are tried split at every point (LLVM's
// ext-tsp-chain-split-threshold).
constexpr size_t kSplitThreshold = 128;
// Past this many hot blocks the simpler greedy lays the function out (see the header).
constexpr size_t kMaxExtTspBlocks = 2000;
// Gains within this of each other are equal (LLVM's EPS).
constexpr double kEpsilon = 1e-8;
// A block's size in addresses is at most this: every jump past it scores 0 whatever the size,
// and 2^32 blocks of it still sum below 2^64.
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 31;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

uint64_t address_size(uint64_t size) { return std::clamp<uint64_t>(size, 1, kMaxBlockSize); }

double jump_score(uint64_t source_address, uint64_t source_size, uint64_t target_address,
                  uint64_t count, bool conditional) {
  const uint64_t source_end = source_address + source_size;
  if (source_end == target_address) {
    return (conditional ? kFallthroughWeight : kUnconditionalFallthroughWeight) *
           static_cast<double>(count);
  }
  if (source_end < target_address) {
    const uint64_t distance = target_address - source_end;
    if (distance > kForwardDistance) return 0;
    return kForwardWeight * (1.0 - static_cast<double>(distance) / kForwardDistance) *
           static_cast<double>(count);
  }
  const uint64_t distance = source_end - target_address;
  if (distance > kBackwardDistance) return 0;
  return kBackwardWeight * (1.0 - static_cast<double>(distance) / kBackwardDistance) *
         static_cast<double>(count);
}

// The hot blocks renumbered 0..n-1 (in the order of their indices, so the entry is 0), the
// counted jumps between different blocks, and the forced pairs.
struct HotGraph {
  struct Jump {
    uint32_t from = 0, to = 0;
    uint64_t count = 0;
    bool conditional = false;  // its source has more than one successor
  };
  std::vector<uint32_t> original;  // hot block -> index in the input
  std::vector<uint64_t> size;      // in [1, kMaxBlockSize]
  std::vector<uint64_t> count;     // at least its counted edges', the entry's at least 1
  std::vector<Jump> jumps;
  // A block's forced successor: its only successor (by any edge, counted or not, to any block)
  // when the jump to it has a count (else the profile says the CFG is not the whole story),
  // which has it as only predecessor and is not the entry; cycles broken. kNone: none.
  std::vector<uint32_t> forced_succ, forced_pred;

  size_t blocks() const { return original.size(); }
};

void check_edges(size_t blocks, std::span<const LayoutEdge> edges) {
  // Indices are 32 bits, and two values are kept for "none" and "several".
  if (blocks >= kNone - 1) throw std::invalid_argument("too many blocks to lay out");
  for (const LayoutEdge& e : edges) {
    if (e.from >= blocks || e.to >= blocks) {
      throw std::invalid_argument("layout edge names a block that does not exist");
    }
  }
}

void find_forced_pairs(HotGraph& graph, std::span<const LayoutEdge> edges,
                       const std::vector<uint32_t>& hot_index) {
  // The only successor and predecessor of every input block; kNone for none, kMany for several.
  constexpr uint32_t kMany = kNone - 1;
  const size_t n = hot_index.size();
  std::vector<uint32_t> only_succ(n, kNone), only_pred(n, kNone);
  std::vector<bool> counted_out(n, false);
  auto note = [&](uint32_t& only, uint32_t other) {
    if (only == kNone) {
      only = other;
    } else if (only != other) {
      only = kMany;
    }
  };
  for (const LayoutEdge& e : edges) {
    if (e.from == e.to) continue;
    counted_out[e.from] = counted_out[e.from] || e.count > 0;
    note(only_succ[e.from], e.to);
    note(only_pred[e.to], e.from);
  }
  const size_t hot = graph.blocks();
  graph.forced_succ.assign(hot, kNone);
  graph.forced_pred.assign(hot, kNone);
  for (uint32_t b = 0; b < hot; ++b) {
    const uint32_t succ = only_succ[graph.original[b]];
    if (succ == kNone || succ == kMany || succ == 0 || !counted_out[graph.original[b]]) continue;
    if (only_pred[succ] != graph.original[b] || hot_index[succ] == kNone) continue;
    graph.forced_succ[b] = hot_index[succ];
    graph.forced_pred[hot_index[succ]] = b;
  }
  // Each block has at most one forced successor and predecessor: the forced links form paths
  // and cycles. A cycle (a loop whose every block has one way on) is cut before its lowest
  // block, which keeps the loop in its original rotation, as LLVM does.
  std::vector<bool> seen(hot, false);
  for (uint32_t b = 0; b < hot; ++b) {
    if (graph.forced_pred[b] != kNone) continue;
    for (uint32_t v = b; v != kNone; v = graph.forced_succ[v]) seen[v] = true;
  }
  for (uint32_t b = 0; b < hot; ++b) {
    if (seen[b]) continue;
    const uint32_t last = graph.forced_pred[b];
    graph.forced_succ[last] = kNone;
    graph.forced_pred[b] = kNone;
    for (uint32_t v = b; v != kNone; v = graph.forced_succ[v]) seen[v] = true;
  }
}

// Per block: whether the edges give it more than one successor (itself included, counted or
// not), which makes its jumps conditional, as LLVM decides it.
std::vector<bool> has_several_successors(size_t blocks, std::span<const LayoutEdge> edges) {
  std::vector<uint32_t> first(blocks, kNone);
  std::vector<bool> several(blocks, false);
  for (const LayoutEdge& e : edges) {
    if (first[e.from] == kNone) {
      first[e.from] = e.to;
    } else if (first[e.from] != e.to) {
      several[e.from] = true;
    }
  }
  return several;
}

HotGraph hot_graph(std::span<const LayoutBlock> blocks, std::span<const LayoutEdge> edges) {
  const size_t n = blocks.size();
  std::vector<uint64_t> count(n);
  std::vector<uint64_t> in(n, 0), out(n, 0);
  for (size_t b = 0; b < n; ++b) count[b] = blocks[b].count;
  for (const LayoutEdge& e : edges) {
    if (e.count == 0) continue;
    out[e.from] = saturating_add(out[e.from], e.count);
    in[e.to] = saturating_add(in[e.to], e.count);
  }
  HotGraph graph;
  std::vector<uint32_t> hot_index(n, kNone);
  for (uint32_t b = 0; b < n; ++b) {
    const uint64_t c = std::max({count[b], in[b], out[b], uint64_t{b == 0 ? 1u : 0u}});
    if (c == 0) continue;
    hot_index[b] = graph.original.size();
    graph.original.push_back(b);
    graph.size.push_back(address_size(blocks[b].size));
    graph.count.push_back(c);
  }
  const std::vector<bool> conditional = has_several_successors(n, edges);
  for (const LayoutEdge& e : edges) {
    if (e.count == 0 || e.from == e.to) continue;
    graph.jumps.push_back({hot_index[e.from], hot_index[e.to], e.count, conditional[e.from]});
  }
  find_forced_pairs(graph, edges, hot_index);
  return graph;
}

// The chains laid out: the entry's first, then by density (count per byte), highest first,
// ties by their first block.
std::vector<uint32_t> concat_by_density(const HotGraph& graph,
                                        std::vector<std::vector<uint32_t>> chains) {
  struct Ranked {
    bool entry;
    double density;
    uint32_t first;
    size_t chain;
  };
  std::vector<Ranked> ranked;
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].empty()) continue;
    double count = 0, size = 0;
    for (uint32_t b : chains[c]) {
      count += static_cast<double>(graph.count[b]);
      size += static_cast<double>(graph.size[b]);
    }
    const uint32_t first = chains[c].front();
    ranked.push_back({first == 0, count / size, first, c});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::make_tuple(!a.entry, -a.density, a.first) <
           std::make_tuple(!b.entry, -b.density, b.first);
  });
  std::vector<uint32_t> order;
  order.reserve(graph.blocks());
  for (const Ranked& r : ranked) {
    for (uint32_t b : chains[r.chain]) order.push_back(graph.original[b]);
  }
  return order;
}

// The ext-TSP greedy of the header, on at most kMaxExtTspBlocks blocks.
class ExtTsp {
 public:
  explicit ExtTsp(const HotGraph& graph)
      : graph_(graph),
        in_jumps_(graph.blocks()),
        out_jumps_(graph.blocks()),
        chain_of_(graph.blocks()),
        position_(graph.blocks(), 0),
        chain_offset_(graph.blocks(), 0) {
    for (uint32_t j = 0; j < graph.jumps.size(); ++j) {
      out_jumps_[graph.jumps[j].from].push_back(j);
      in_jumps_[graph.jumps[j].to].push_back(j);
    }
    chains_.resize(graph.blocks());
    for (uint32_t b = 0; b < graph.blocks(); ++b) {
      chains_[b].nodes = {b};
      chains_[b].size = graph.size[b];
      chain_of_[b] = b;
    }
    alive_ = graph.blocks();
    for (uint32_t j = 0; j < graph.jumps.size(); ++j) {
      const uint32_t from = chain_of_[graph.jumps[j].from], to = chain_of_[graph.jumps[j].to];
      const uint32_t existing = find_edge(from, to);
      if (existing != kNone) {
        edges_[existing].jumps.push_back(j);
        continue;
      }
      ChainEdge edge;
      edge.src = from;
      edge.dst = to;
      edge.jumps = {j};
      edges_.push_back(std::move(edge));
      chains_[from].edges.push_back({to, uint32_t(edges_.size() - 1)});
      chains_[to].edges.push_back({from, uint32_t(edges_.size() - 1)});
    }
  }

  std::vector<uint32_t> run() {
    merge_forced_pairs();
    merge_chain_pairs();
    std::vector<std::vector<uint32_t>> chains;
    for (Chain& chain : chains_) chains.push_back(std::move(chain.nodes));
    return concat_by_density(graph_, std::move(chains));
  }

 private:
  // X split at `offset` into X1 X2 and glued with Y.
  enum class MergeType { kXY, kX1YX2, kYX2X1, kX2X1Y };

  struct Gain {
    double score = -1;
    uint32_t offset = 0;
    MergeType type = MergeType::kXY;
    // LLVM's rule: only a positive gain counts, and only one better by more than kEpsilon.
    bool worse_than(const Gain& other) const {
      return other.score > kEpsilon && other.score > score + kEpsilon;
    }
  };

  struct Chain {
    std::vector<uint32_t> nodes;
    uint64_t size = 0;  // bytes
    double score = 0;   // of the jumps within the chain
    // Each chain linked to this one by a jump (this one too, for jumps within), and the edge.
    std::vector<std::pair<uint32_t, uint32_t>> edges;
  };

  // The jumps between two chains (or within one: src == dst), and the best merges of the two
  // each way round, cached until either chain changes.
  struct ChainEdge {
    uint32_t src = 0, dst = 0;
    std::vector<uint32_t> jumps;
    Gain forward, backward;  // src's chain as X; dst's chain as X
    bool forward_valid = false, backward_valid = false;
  };

  uint32_t find_edge(uint32_t chain, uint32_t other) const {
    for (auto [c, e] : chains_[chain].edges) {
      if (c == other) return e;
    }
    return kNone;
  }

  // Calls f(node) for the nodes of X and Y merged as (offset, type) says.
  template <typename F>
  void for_merged(const Chain& x, const Chain& y, uint32_t offset, MergeType type, F f) const {
    const auto x1 = std::span(x.nodes).first(offset);
    const auto x2 = std::span(x.nodes).subspan(offset);
    const std::span<const uint32_t> all_y(y.nodes);
    auto each = [&](std::span<const uint32_t> part) {
      for (uint32_t b : part) f(b);
    };
    switch (type) {
      case MergeType::kXY:
        each(x.nodes), each(all_y);
        break;
      case MergeType::kX1YX2:
        each(x1), each(all_y), each(x2);
        break;
      case MergeType::kYX2X1:
        each(all_y), each(x2), each(x1);
        break;
      case MergeType::kX2X1Y:
        each(x2), each(x1), each(all_y);
        break;
    }
  }

  uint32_t first_merged(const Chain& x, const Chain& y, uint32_t offset, MergeType type) const {
    switch (type) {
      case MergeType::kXY:
      case MergeType::kX1YX2:
        return x.nodes.front();
      case MergeType::kYX2X1:
        return y.nodes.front();
      case MergeType::kX2X1Y:
        return x.nodes[offset];
    }
    return kNone;
  }

  // The score of the jumps of `edges` (all between or within chains x and y) with the two laid
  // out as (offset, type) says. Addresses come from each block's offset in its chain, so the
  // cost is that of the jumps, not of the chains' lengths. y == kNone: x alone.
  double score(uint32_t x_index, uint32_t y_index, uint32_t offset, MergeType type,
               std::span<const ChainEdge* const> edges) const {
    const Chain& x = chains_[x_index];
    const uint64_t y_size = y_index == kNone ? 0 : chains_[y_index].size;
    const uint64_t x1_size = offset == 0               ? 0
                             : offset < x.nodes.size() ? chain_offset_[x.nodes[offset]]
                                                       : x.size;
    const uint64_t x2_size = x.size - x1_size;
    uint64_t x1 = 0, x2 = 0, y = 0;  // where each part starts
    switch (type) {
      case MergeType::kXY:
        x1 = 0, x2 = x1_size, y = x.size;
        break;
      case MergeType::kX1YX2:
        x1 = 0, y = x1_size, x2 = x1_size + y_size;
        break;
      case MergeType::kYX2X1:
        y = 0, x2 = y_size, x1 = y_size + x2_size;
        break;
      case MergeType::kX2X1Y:
        x2 = 0, x1 = x2_size, y = x.size;
        break;
    }
    auto address = [&](uint32_t b) {
      if (chain_of_[b] != x_index) return y + chain_offset_[b];
      return position_[b] < offset ? x1 + chain_offset_[b] : x2 + chain_offset_[b] - x1_size;
    };
    double total = 0;
    for (const ChainEdge* edge : edges) {
      for (uint32_t j : edge->jumps) {
        const HotGraph::Jump& jump = graph_.jumps[j];
        total += jump_score(address(jump.from), graph_.size[jump.from], address(jump.to),
                            jump.count, jump.conditional);
      }
    }
    return total;
  }

  // The best way to merge chain x with chain y (linked by `edge`), x possibly split.
  Gain best_merge(uint32_t x_index, uint32_t y_index, uint32_t edge_index) {
    ChainEdge& edge = edges_[edge_index];
    const bool forward = edge.src == x_index;
    if (forward ? edge.forward_valid : edge.backward_valid) {
      return forward ? edge.forward : edge.backward;
    }
    const Chain& x = chains_[x_index];
    const Chain& y = chains_[y_index];
    // Only X's jumps within and the jumps between X and Y change their score: Y stays whole.
    std::vector<const ChainEdge*> jumps = {&edge};
    if (const uint32_t self = find_edge(x_index, x_index); self != kNone) {
      jumps.push_back(&edges_[self]);
    }
    const bool holds_entry = x.nodes.front() == 0 || y.nodes.front() == 0;
    Gain best;
    auto try_merge = [&](uint32_t offset, MergeType type) {
      if (holds_entry && first_merged(x, y, offset, type) != 0) return;
      // X kept whole keeps its own score: only the jumps between X and Y need adding up.
      const Gain gain =
          offset == 0 ? Gain{score(x_index, y_index, 0, type, {&jumps[0], 1}), 0, type}
                      : Gain{score(x_index, y_index, offset, type, jumps) - x.score, offset, type};
      if (best.worse_than(gain)) best = gain;
    };
    auto try_split = [&](uint32_t offset, std::initializer_list<MergeType> types) {
      if (offset == 0 || offset >= x.nodes.size()) return;
      if (graph_.forced_succ[x.nodes[offset - 1]] != kNone) return;  // keeps forced pairs
      for (MergeType type : types) try_merge(offset, type);
    };
    try_merge(0, MergeType::kXY);
    // Splits that put Y right after a block of X that jumps to Y's first block, or right before
    // one that Y's last block jumps to.
    for (uint32_t j : in_jumps_[y.nodes.front()]) {
      const uint32_t from = graph_.jumps[j].from;
      if (chain_of_[from] != x_index) continue;
      try_split(position_[from] + 1, {MergeType::kX1YX2, MergeType::kX2X1Y});
    }
    for (uint32_t j : out_jumps_[y.nodes.back()]) {
      const uint32_t to = graph_.jumps[j].to;
      if (chain_of_[to] != x_index) continue;
      try_split(position_[to], {MergeType::kX1YX2, MergeType::kYX2X1});
    }
    if (x.nodes.size() <= kSplitThreshold) {
      // X2 Y X1 is left out, as LLVM does: it hardly ever helps.
      for (uint32_t offset = 1; offset < x.nodes.size(); ++offset) {
        try_split(offset, {MergeType::kX1YX2, MergeType::kYX2X1, MergeType::kX2X1Y});
      }
    }
    (forward ? edge.forward : edge.backward) = best;
    (forward ? edge.forward_valid : edge.backward_valid) = true;
    return best;
  }

  // Merges chain `from` into chain `into` (laid out as into = X, from = Y with offset and type).
  void merge(uint32_t into_index, uint32_t from_index, uint32_t offset, MergeType type) {
    Chain& into = chains_[into_index];
    Chain& from = chains_[from_index];
    if (type == MergeType::kXY) {
      into.nodes.insert(into.nodes.end(), from.nodes.begin(), from.nodes.end());
    } else {
      std::vector<uint32_t> nodes;
      nodes.reserve(into.nodes.size() + from.nodes.size());
      for_merged(into, from, offset, type, [&](uint32_t b) { nodes.push_back(b); });
      into.nodes = std::move(nodes);
    }
    into.size += from.size;
    uint64_t address = 0;
    for (uint32_t i = 0; i < into.nodes.size(); ++i) {
      const uint32_t b = into.nodes[i];
      chain_of_[b] = into_index;
      position_[b] = i;
      chain_offset_[b] = address;
      address += graph_.size[b];
    }
    // Every edge of `from` becomes one of `into`, joined with the edge `into` already has to
    // the same chain; the edge between the two becomes (part of) into's edge to itself.
    const auto from_edges = std::move(from.edges);
    from.edges.clear();
    from.nodes.clear();
    for (auto [other, e] : from_edges) {
      const uint32_t target = other == from_index ? into_index : other;
      const uint32_t existing = find_edge(into_index, target);
      if (existing == kNone) {
        if (edges_[e].src == from_index) edges_[e].src = into_index;
        if (edges_[e].dst == from_index) edges_[e].dst = into_index;
        into.edges.push_back({target, e});
        if (other != into_index && other != from_index) {
          chains_[other].edges.push_back({into_index, e});
        }
      } else {
        std::vector<uint32_t>& jumps = edges_[existing].jumps;
        jumps.insert(jumps.end(), edges_[e].jumps.begin(), edges_[e].jumps.end());
        edges_[e].jumps.clear();
      }
      if (other != from_index) {
        auto& list = chains_[other].edges;
        list.erase(std::find_if(list.begin(), list.end(),
                                [&](const auto& p) { return p.first == from_index; }));
      }
    }
    into.score = 0;
    if (const uint32_t self = find_edge(into_index, into_index); self != kNone) {
      const ChainEdge* jumps[] = {&edges_[self]};
      into.score = score(into_index, kNone, 0, MergeType::kXY, jumps);
    }
    for (auto [other, e] : into.edges) edges_[e].forward_valid = edges_[e].backward_valid = false;
    --alive_;
  }

  void merge_forced_pairs() {
    for (uint32_t b = 0; b < graph_.blocks(); ++b) {
      if (graph_.forced_pred[b] != kNone) continue;
      for (uint32_t next = graph_.forced_succ[b]; next != kNone; next = graph_.forced_succ[next]) {
        merge(chain_of_[b], chain_of_[next], 0, MergeType::kXY);
      }
    }
  }

  void merge_chain_pairs() {
    while (alive_ > 1) {
      Gain best;
      uint32_t best_x = kNone, best_y = kNone;
      for (uint32_t x = 0; x < chains_.size(); ++x) {
        if (chains_[x].nodes.empty()) continue;
        for (size_t i = 0; i < chains_[x].edges.size(); ++i) {
          const auto [y, e] = chains_[x].edges[i];
          if (y == x) continue;
          const Gain gain = best_merge(x, y, e);
          if (gain.score <= kEpsilon) continue;
          const bool tie = std::abs(gain.score - best.score) < kEpsilon &&
                           std::tie(x, y) < std::tie(best_x, best_y);
          if (best.worse_than(gain) || tie) {
            best = gain;
            best_x = x;
            best_y = y;
          }
        }
      }
      if (best_x == kNone) break;
      merge(best_x, best_y, best.offset, best.type);
    }
  }

  const HotGraph& graph_;
  std::vector<std::vector<uint32_t>> in_jumps_, out_jumps_;  // per block: indices of jumps
  std::vector<uint32_t> chain_of_;
  std::vector<uint32_t> position_;      // in its chain
  std::vector<uint64_t> chain_offset_;  // bytes from the start of its chain
  std::vector<Chain> chains_;           // by the index of their first block at the start
  std::vector<ChainEdge> edges_;
  size_t alive_ = 0;  // chains not merged into another
};

// The simpler greedy for large functions (see the header): forced pairs, then the jumps from
// the hottest down make their source fall through to their target where both are ends of
// different chains. Chains are linked lists, found by union-find.
std::vector<uint32_t> greedy_chains(const HotGraph& graph) {
  const uint32_t n = graph.blocks();
  std::vector<uint32_t> next(n, kNone), prev(n, kNone), parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](uint32_t b) {
    while (parent[b] != b) b = parent[b] = parent[parent[b]];
    return b;
  };
  auto link = [&](uint32_t from, uint32_t to) {
    if (to == 0 || next[from] != kNone || prev[to] != kNone) return;
    const uint32_t a = find(from), b = find(to);
    if (a == b) return;
    next[from] = to;
    prev[to] = from;
    parent[b] = a;
  };
  for (uint32_t b = 0; b < n; ++b) {
    if (graph.forced_succ[b] != kNone) link(b, graph.forced_succ[b]);
  }
  std::vector<uint32_t> by_count(graph.jumps.size());
  std::iota(by_count.begin(), by_count.end(), 0);
  std::stable_sort(by_count.begin(), by_count.end(), [&](uint32_t a, uint32_t b) {
    return graph.jumps[a].count > graph.jumps[b].count;
  });
  for (uint32_t j : by_count) link(graph.jumps[j].from, graph.jumps[j].to);
  std::vector<std::vector<uint32_t>> chains;
  for (uint32_t b = 0; b < n; ++b) {
    if (prev[b] != kNone) continue;
    chains.emplace_back();
    for (uint32_t v = b; v != kNone; v = next[v]) chains.back().push_back(v);
  }
  return concat_by_density(graph, std::move(chains));
}

}  // namespace

std::vector<uint32_t> ext_tsp_order(std::span<const LayoutBlock> blocks,
                                    std::span<const LayoutEdge> edges) {
  check_edges(blocks.size(), edges);
  if (blocks.empty()) return {};
  const HotGraph graph = hot_graph(blocks, edges);
  if (graph.blocks() > kMaxExtTspBlocks) return greedy_chains(graph);
  return ExtTsp(graph).run();
}

double ext_tsp_score(std::span<const uint32_t> order, std::span<const LayoutBlock> blocks,
                     std::span<const LayoutEdge> edges) {
  check_edges(blocks.size(), edges);
  constexpr uint64_t kAbsent = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> address(blocks.size(), kAbsent);
  uint64_t next = 0;
  for (uint32_t b : order) {
    if (b >= blocks.size()) throw std::invalid_argument("layout order names a missing block");
    if (address[b] != kAbsent) throw std::invalid_argument("layout order lists a block twice");
    address[b] = next;
    next += address_size(blocks[b].size);
  }
  const std::vector<bool> conditional = has_several_successors(blocks.size(), edges);
  double total = 0;
  for (const LayoutEdge& e : edges) {
    if (e.count == 0 || e.from == e.to) continue;
    if (address[e.from] == kAbsent || address[e.to] == kAbsent) continue;
    total += jump_score(address[e.from], address_size(blocks[e.from].size), address[e.to], e.count,
                        conditional[e.from]);
  }
  return total;
}

}  // namespace profcollect
