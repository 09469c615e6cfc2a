#include "output/propeller_profile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "output/block_layout.h"
#include "output/count_sum.h"
#include "output/function_order.h"

namespace profcollect {

namespace {

// The counts laid on one function's blocks, indexed by their place in its ranges (in order).
struct FunctionCounts {
  std::vector<uint64_t> in, out, within;  // per block
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> edges;
  uint64_t calls_in = 0;
};

class CountsOnMap {
 public:
  explicit CountsOnMap(const BbAddrMap& map) : map_(map) {}

  // The function's index and the block's place in it, for a location with a block.
  std::pair<uint32_t, uint32_t> place(const BbLocation& at) const {
    const BbFunction& f = *at.function;
    uint32_t index = 0;
    for (const BbRange& r : f.ranges) {
      if (&r == at.range) break;
      index += static_cast<uint32_t>(r.blocks.size());
    }
    return {static_cast<uint32_t>(at.function - map_.functions().data()),
            index + static_cast<uint32_t>(at.block - at.range->blocks.data())};
  }

  FunctionCounts& of(uint32_t function) {
    FunctionCounts& c = counts_[function];
    if (c.in.empty()) {
      const size_t n = map_.functions()[function].block_count();
      c.in.assign(n, 0);
      c.out.assign(n, 0);
      c.within.assign(n, 0);
    }
    return c;
  }

  void edge(uint32_t function, uint32_t from, uint32_t to, uint64_t count) {
    FunctionCounts& c = of(function);
    c.out[from] = saturating_add(c.out[from], count);
    c.in[to] = saturating_add(c.in[to], count);
    uint64_t& e = c.edges[{from, to}];
    e = saturating_add(e, count);
  }

  std::unordered_map<uint32_t, FunctionCounts>& all() { return counts_; }

 private:
  const BbAddrMap& map_;
  std::unordered_map<uint32_t, FunctionCounts> counts_;
};

bool starts_block(const BbLocation& at, uint64_t address) {
  return at.block != nullptr && at.range->address + at.block->offset == address;
}

// The count at or above which a block that ran is hot: the smallest count of the most-run
// blocks that together hold `share` of the bytes run (count times size) by every block of
// `functions` that ran. 0 (every block hot) when the share is 1 or more.
template <typename Functions>
uint64_t hot_count_threshold(const Functions& functions, double share) {
  if (!(share < 1.0)) return 0;
  std::vector<std::pair<uint64_t, uint64_t>> run;  // count, size
  long double total = 0;
  for (const auto& f : functions)
    for (const LayoutBlock& b : f.blocks)
      if (b.count > 0) {
        const uint64_t size = std::max<uint64_t>(b.size, 1);  // as the layout takes it
        run.emplace_back(b.count, size);
        total += static_cast<long double>(b.count) * static_cast<long double>(size);
      }
  std::sort(run.begin(), run.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  long double sum = 0;
  for (const auto& [count, size] : run) {
    sum += static_cast<long double>(count) * static_cast<long double>(size);
    if (sum >= total * share) return count;
  }
  return 0;
}

}  // namespace

PropellerProfile make_propeller_profile(const BranchProfile& branches, const BbAddrMap& map,
                                        const SymbolTable& symbols, const IpProfile* ips,
                                        const ModuleNameOf& module_of,
                                        const PropellerOptions& options) {
  PropellerProfile out;
  PropellerStats& stats = out.stats;
  CountsOnMap counts(map);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> calls;  // (caller, callee) functions

  for (const auto& [branch, c] : branches.branches()) {
    const BbLocation to = branch.to_external ? BbLocation{} : map.find(branch.to);
    const BbLocation from = branch.from_external ? BbLocation{} : map.find(branch.from);
    if (to.function != nullptr && to.function->address() == branch.to) {
      // A call (or a jump to an entry: a tail call); its caller, when it is one of ours, makes
      // the call graph.
      {
        uint64_t& in = counts.of(counts.place(to).first).calls_in;
        in = saturating_add(in, c.count);
      }
      if (from.block != nullptr && from.function != to.function) {
        uint64_t& n = calls[{counts.place(from).first, counts.place(to).first}];
        n = saturating_add(n, c.count);
      }
      stats.branches_mapped = saturating_add(stats.branches_mapped, c.count);
    } else if (from.block != nullptr && to.function == from.function &&
               starts_block(to, branch.to)) {
      const auto [function, source] = counts.place(from);
      counts.edge(function, source, counts.place(to).second, c.count);
      stats.branches_mapped = saturating_add(stats.branches_mapped, c.count);
    } else {
      stats.branches_unmapped = saturating_add(stats.branches_unmapped, c.count);
    }
  }
  for (const auto& [range, c] : branches.fall_throughs()) {
    const BbLocation first = map.find(range.start), last = map.find(range.end);
    if (first.block == nullptr || last.block == nullptr || first.range != last.range ||
        first.block > last.block) {
      stats.ranges_unmapped = saturating_add(stats.ranges_unmapped, c);
      continue;
    }
    const auto [function, begin] = counts.place(first);
    const uint32_t end = counts.place(last).second;
    if (begin == end) {
      FunctionCounts& f = counts.of(function);
      f.within[begin] = saturating_add(f.within[begin], c);
    }
    for (uint32_t b = begin; b < end; ++b) counts.edge(function, b, b + 1, c);
    stats.ranges_mapped = saturating_add(stats.ranges_mapped, c);
  }

  // Names: a symbol's own; one that other functions have too, with the function's module, when
  // each of them has a module of its own.
  std::unordered_map<std::string, std::set<uint64_t>> name_addresses;
  for (const FunctionSymbol& s : symbols.functions())
    if (!s.raw_name.empty()) name_addresses[s.raw_name].insert(s.addr);
  // Per shared name, asked once: the module of each of its functions, or nullopt.
  std::unordered_map<std::string, std::optional<std::map<uint64_t, std::string>>> shared_modules;
  auto module_telling_apart = [&](const FunctionSymbol& symbol) -> std::string {
    if (!module_of) return {};
    auto [it, fresh] = shared_modules.try_emplace(symbol.raw_name);
    if (fresh) {
      std::map<uint64_t, std::string> modules;
      std::set<std::string> seen;
      for (const uint64_t address : name_addresses[symbol.raw_name]) {
        std::string m = module_of(address);
        while (m.starts_with("./")) m.erase(0, 2);  // as LLVM compares them
        // A module the line cannot carry, or one that another function of the name is in too,
        // tells nothing apart.
        if (m.empty() || m.find_first_of(" \t\r\n") != std::string::npos || !seen.insert(m).second)
          return {};
        modules.emplace(address, std::move(m));
      }
      it->second = std::move(modules);
    }
    if (!it->second) return {};
    const auto m = it->second->find(symbol.addr);
    return m == it->second->end() ? std::string() : m->second;
  };

  struct Hot {
    uint32_t function;
    std::string name;
    std::string module;  // for a name other functions have too
    std::vector<LayoutBlock> blocks;
    std::vector<LayoutEdge> edges;
    std::vector<uint32_t> order;  // block places: the hot cluster
    std::vector<uint32_t> warm;   // block places: the warm cluster (may be empty)
    bool has_cold = false;
    uint64_t bytes = 0, weight = 0;  // of the hot cluster
  };
  std::vector<Hot> hot;
  std::vector<uint32_t> functions;
  for (const auto& [function, c] : counts.all()) functions.push_back(function);
  std::sort(functions.begin(), functions.end());
  for (const uint32_t function : functions) {
    FunctionCounts& c = counts.all()[function];
    const BbFunction& f = map.functions()[function];
    std::vector<LayoutBlock> blocks;
    blocks.reserve(c.in.size());
    for (const BbRange& r : f.ranges)
      for (const BbBlock& b : r.blocks) blocks.push_back(LayoutBlock{b.size, 0});
    c.in[0] = saturating_add(c.in[0], c.calls_in);
    bool any = false;
    for (size_t b = 0; b < blocks.size(); ++b) {
      blocks[b].count = std::max({c.in[b], c.out[b], c.within[b]});
      any = any || blocks[b].count > 0;
    }
    if (!any) continue;
    const FunctionSymbol* symbol = symbols.find(f.address());
    if (symbol == nullptr || symbol->addr != f.address() || symbol->raw_name.empty()) {
      ++stats.unnamed_functions;
      continue;
    }
    std::string module;
    if (name_addresses[symbol->raw_name].size() > 1) {
      module = module_telling_apart(*symbol);
      if (module.empty()) {
        ++stats.unnamed_functions;
        continue;
      }
    }
    // A block the map says can fall through to the next has that edge in its CFG, run or not:
    // with a jump that ran too, its branch is conditional, which the layout weighs.
    uint32_t place = 0;
    for (const BbRange& r : f.ranges) {
      for (size_t i = 0; i < r.blocks.size(); ++i, ++place) {
        if (r.blocks[i].can_fall_through && i + 1 < r.blocks.size())
          c.edges.try_emplace({place, place + 1}, 0);
      }
    }
    std::vector<LayoutEdge> edges;
    edges.reserve(c.edges.size());
    for (const auto& [e, n] : c.edges) edges.push_back(LayoutEdge{e.first, e.second, n});
    Hot& h = hot.emplace_back();
    h.function = function;
    h.name = symbol->raw_name;
    h.module = std::move(module);
    h.blocks = std::move(blocks);
    h.edges = std::move(edges);
  }

  const uint64_t hot_count = hot_count_threshold(hot, options.hot_share);
  for (Hot& h : hot) {
    // The blocks of each cluster, each laid out by its own edges: the others' counts set to 0
    // (their edges stay in the CFG, which the layout weighs).
    auto layout = [&h](auto in_cluster) {
      std::vector<LayoutBlock> blocks = h.blocks;
      for (uint32_t b = 0; b < blocks.size(); ++b)
        if (!in_cluster(b)) blocks[b].count = 0;
      std::vector<LayoutEdge> edges = h.edges;
      for (LayoutEdge& e : edges)
        if (!in_cluster(e.from) || !in_cluster(e.to)) e.count = 0;
      return ext_tsp_order(blocks, edges);
    };
    // Hot: the entry, the most-run blocks of the binary, and a block run in enough of the
    // function's runs (its count against the entry's, which calls and jumps into it made).
    const long double in_runs =
        options.runs_share_kept_hot * static_cast<long double>(h.blocks[0].count);
    auto is_hot = [&h, hot_count, in_runs](uint32_t b) {
      return b == 0 || h.blocks[b].count >= hot_count ||
             static_cast<long double>(h.blocks[b].count) >= in_runs;
    };
    h.order = layout(is_hot);
    // The entry block begins the first cluster (clang requires it), whatever its count.
    if (h.order.empty() || h.order.front() != 0) {
      std::erase(h.order, 0u);
      h.order.insert(h.order.begin(), 0);
    }
    const auto is_warm = [&h, &is_hot](uint32_t b) { return h.blocks[b].count > 0 && !is_hot(b); };
    bool any_warm = false;
    for (uint32_t b = 1; b < h.blocks.size() && !any_warm; ++b) any_warm = is_warm(b);
    if (any_warm) {
      for (const uint32_t b : layout(is_warm))
        if (is_warm(b)) h.warm.push_back(b);
    }
    h.has_cold = h.order.size() + h.warm.size() < h.blocks.size();
    for (const uint32_t b : h.order) {
      h.bytes += h.blocks[b].size;
      h.weight = saturating_add(h.weight, h.blocks[b].count);
    }
  }

  // The clusters, by block ID.
  out.clusters = "v1\n";
  std::unordered_map<uint32_t, uint32_t> hot_index;  // function -> index in `hot`
  for (uint32_t i = 0; i < hot.size(); ++i) {
    const Hot& h = hot[i];
    hot_index[h.function] = i;
    std::vector<uint32_t> ids;
    const BbFunction& f = map.functions()[h.function];
    for (const BbRange& r : f.ranges)
      for (const BbBlock& b : r.blocks) ids.push_back(b.id);
    if (!h.module.empty()) {
      out.clusters += "m " + h.module + "\n";
      ++stats.module_named;
    }
    out.clusters += "f " + h.name + "\nc";
    for (const uint32_t b : h.order) out.clusters += " " + std::to_string(ids[b]);
    out.clusters += "\n";
    if (!h.warm.empty()) {
      out.clusters += "c";
      for (const uint32_t b : h.warm) out.clusters += " " + std::to_string(ids[b]);
      out.clusters += "\n";
      ++stats.warm_parts;
      stats.warm_blocks += h.warm.size();
    }
    ++stats.functions;
    stats.blocks += h.order.size() + h.warm.size();
    if (h.has_cold) ++stats.cold_parts;
  }

  // The functions' order: hot parts by call chains, then the warm parts in the same order, then
  // the cold parts.
  std::vector<OrderFunction> order_functions;
  for (const Hot& h : hot) order_functions.push_back(OrderFunction{h.bytes, h.weight});
  std::vector<CallEdge> call_edges;
  for (const auto& [pair, n] : calls) {
    const auto caller = hot_index.find(pair.first), callee = hot_index.find(pair.second);
    if (caller != hot_index.end() && callee != hot_index.end())
      call_edges.push_back(CallEdge{caller->second, callee->second, n});
  }
  const std::vector<uint32_t> order = call_chain_order(order_functions, call_edges);
  // Each symbol once: lld places every symbol of a name (the static functions of several files)
  // where the name first comes.
  std::unordered_set<std::string> written;
  auto list = [&](const std::string& symbol) {
    if (written.insert(symbol).second) out.symbol_order += symbol + "\n";
  };
  std::vector<bool> listed(hot.size(), false);
  for (const uint32_t i : order) {
    list(hot[i].name);
    listed[i] = true;
  }
  for (uint32_t i = 0; i < hot.size(); ++i)  // weightless ones C3 may leave out
    if (!listed[i]) list(hot[i].name);
  // Each part after the hot ones in the order of their hot parts; clang names a function's
  // second cluster NAME.__part.1 and its cold section NAME.cold.
  auto list_parts = [&](const char* suffix, auto has_part) {
    for (const uint32_t i : order)
      if (has_part(hot[i])) list(hot[i].name + suffix);
    for (uint32_t i = 0; i < hot.size(); ++i)
      if (!listed[i] && has_part(hot[i])) list(hot[i].name + suffix);
  };
  list_parts(".__part.1", [](const Hot& h) { return !h.warm.empty(); });
  list_parts(".cold", [](const Hot& h) { return h.has_cold; });

  if (ips != nullptr) {
    stats.samples = ips->total();
    for (const auto& [address, n] : ips->counts()) {
      const BbLocation at = map.find(address);
      if (at.function != nullptr &&
          hot_index.count(static_cast<uint32_t>(at.function - map.functions().data())) > 0)
        stats.covered_samples = saturating_add(stats.covered_samples, n);
    }
  }
  return out;
}

}  // namespace profcollect
