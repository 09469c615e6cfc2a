#include "output/function_order.h"

#include "output/count_sum.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace profcollect {
namespace {

constexpr uint32_t kNoFunction = std::numeric_limits<uint32_t>::max();

double density(uint64_t samples, uint64_t size) {
  return static_cast<double>(samples) / static_cast<double>(size);
}

struct Cluster {
  std::vector<uint32_t> functions;
  uint64_t size = 0;
  uint64_t samples = 0;
};

}  // namespace

std::vector<uint32_t> call_chain_order(std::span<const OrderFunction> functions,
                                       std::span<const CallEdge> calls,
                                       const CallChainOptions& options) {
  const size_t n = functions.size();
  if (n >= kNoFunction) throw std::invalid_argument("too many functions to order");
  for (const CallEdge& call : calls) {
    if (call.caller >= n || call.callee >= n) {
      throw std::invalid_argument("call edge names a function that does not exist");
    }
  }
  // Calls summed per (callee, caller), self-calls and uncounted ones left out.
  std::vector<CallEdge> arcs;
  for (const CallEdge& call : calls) {
    if (call.count > 0 && call.caller != call.callee) arcs.push_back(call);
  }
  std::sort(arcs.begin(), arcs.end(), [](const CallEdge& a, const CallEdge& b) {
    return std::tie(a.callee, a.caller) < std::tie(b.callee, b.caller);
  });
  std::vector<uint64_t> samples(n), size(n), calls_in(n, 0), best_calls(n, 0);
  std::vector<uint32_t> best_caller(n, kNoFunction);
  for (size_t i = 0; i < arcs.size();) {
    const uint32_t callee = arcs[i].callee, caller = arcs[i].caller;
    uint64_t count = 0;
    for (; i < arcs.size() && arcs[i].callee == callee && arcs[i].caller == caller; ++i) {
      count = saturating_add(count, arcs[i].count);
    }
    calls_in[callee] = saturating_add(calls_in[callee], count);
    if (count > best_calls[callee]) {  // callers come in ascending order: ties keep the lowest
      best_calls[callee] = count;
      best_caller[callee] = caller;
    }
  }
  std::vector<uint32_t> hot;
  for (uint32_t f = 0; f < n; ++f) {
    samples[f] = std::max(functions[f].samples, calls_in[f]);
    size[f] = std::max<uint64_t>(functions[f].size, 1);
    if (samples[f] > 0) hot.push_back(f);
  }
  // Densest first; then by samples, highest first, then by index.
  std::sort(hot.begin(), hot.end(), [&](uint32_t a, uint32_t b) {
    const double da = density(samples[a], size[a]), db = density(samples[b], size[b]);
    if (da != db) return da > db;
    if (samples[a] != samples[b]) return samples[a] > samples[b];
    return a < b;
  });

  std::vector<Cluster> clusters(n);
  std::vector<uint32_t> cluster_of(n, kNoFunction);
  for (uint32_t f : hot) {
    clusters[f] = {{f}, size[f], samples[f]};
    cluster_of[f] = f;
  }
  for (uint32_t f : hot) {
    const uint32_t caller = best_caller[f];
    if (caller == kNoFunction) continue;
    if (static_cast<double>(best_calls[f]) <
        options.min_call_probability * static_cast<double>(samples[f])) {
      continue;
    }
    // A caller that nothing shows ran (no samples, no calls into it) has no cluster to join.
    const uint32_t into = cluster_of[caller], from = cluster_of[f];
    if (into == kNoFunction || into == from) continue;
    Cluster& pred = clusters[into];
    Cluster& own = clusters[from];
    const uint64_t merged_size = saturating_add(pred.size, own.size);
    if (merged_size > options.max_cluster_size) continue;
    const uint64_t merged_samples = saturating_add(pred.samples, own.samples);
    if (density(pred.samples, pred.size) >
        density(merged_samples, merged_size) * options.max_density_degradation) {
      continue;
    }
    for (uint32_t g : own.functions) cluster_of[g] = into;
    pred.functions.insert(pred.functions.end(), own.functions.begin(), own.functions.end());
    pred.size = merged_size;
    pred.samples = merged_samples;
    own = Cluster{};
  }

  std::vector<uint32_t> ranked;
  for (uint32_t c = 0; c < n; ++c) {
    if (!clusters[c].functions.empty()) ranked.push_back(c);
  }
  std::sort(ranked.begin(), ranked.end(), [&](uint32_t a, uint32_t b) {
    const double da = density(clusters[a].samples, clusters[a].size);
    const double db = density(clusters[b].samples, clusters[b].size);
    return std::make_tuple(-da, clusters[a].functions.front()) <
           std::make_tuple(-db, clusters[b].functions.front());
  });
  std::vector<uint32_t> order;
  order.reserve(hot.size());
  for (uint32_t c : ranked) {
    order.insert(order.end(), clusters[c].functions.begin(), clusters[c].functions.end());
  }
  return order;
}

}  // namespace profcollect
