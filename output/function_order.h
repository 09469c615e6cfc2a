// The order of hot functions for the linker (lld's --symbol-ordering-file): C3, call-chain
// clustering (Ottoni and Maher, "Optimizing Function Placement for Large-Scale Data-Center
// Applications", CGO 2017), the "hfsort" of HHVM and BOLT (bolt/lib/Passes/HFSort.cpp,
// clusterize); implemented here on its own. Pure function, no I/O.
//
// Every hot function starts as a cluster of its own. Functions are taken by density (samples
// per byte), highest first, as BOLT takes them (the paper says by samples); each is considered
// for merging its cluster after (so the caller comes before the callee) the cluster of its most
// frequent caller, and merged unless
//   - the calls from that caller are fewer than min_call_probability times the function's
//     samples (BOLT: 0.1): the function is mostly reached some other way;
//   - the caller is in the same cluster already;
//   - the merged cluster would be larger than max_cluster_size (BOLT and HHVM: 1 MiB; the paper
//     speaks of a page, which in HHVM's use was a 2 MiB huge page);
//   - the caller's cluster is more than max_density_degradation times as dense as the merged
//     one would be (BOLT: 8): a hot small caller is not diluted by a big lukewarm callee.
// The clusters are then laid out by density, highest first. Ties go to lower indices: the
// order is deterministic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace profcollect {

struct OrderFunction {
  uint64_t size = 0;     // bytes (0 is taken as 1)
  uint64_t samples = 0;  // samples in the function (its own, not its callees')
};

struct CallEdge {
  uint32_t caller = 0, callee = 0;  // function indices
  uint64_t count = 0;               // calls seen
};

struct CallChainOptions {
  uint64_t max_cluster_size = uint64_t{1} << 20;
  double min_call_probability = 0.1;
  double max_density_degradation = 8;
};

// The hot functions, callers' clusters before their callees', clusters by density (see above).
// A function is hot when it has samples or a counted call into it; its samples are taken as at
// least the calls into it (as HHVM's hfsort does). Self-calls are ignored, calls between the
// same two functions summed. Throws std::invalid_argument for a call naming a function that
// does not exist.
std::vector<uint32_t> call_chain_order(std::span<const OrderFunction> functions,
                                       std::span<const CallEdge> calls,
                                       const CallChainOptions& options = {});

}  // namespace profcollect
