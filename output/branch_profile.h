// Branch-stack samples of one binary, aggregated as BOLT's pre-aggregated profile counts them
// (formats.md section 3), in ELF virtual addresses:
//
// - taken branches (from, to) -> count and mispredicts; an end outside the binary is marked
//   external and keeps whatever address the caller had for it (the runtime address, which is
//   what perf2bolt writes for "[unknown]" ends, or kExternalAddress when unknown, e.g. kernel);
// - fall-through ranges between consecutive entries of one stack: from the target of the older
//   entry to the source of the newer one, both inside the binary. A range whose older branch
//   came from outside is kept apart (BOLT's "f" record, "F" otherwise). "Outside" is outside
//   the binary; given the binary's SymbolTable, outside the range's function, which is how
//   perf2bolt 19 splits its traces of a perf.data (intern/extern counts) -- and it matters:
//   BOLT moves an "f" range that starts just after a call back into the call's block (the call
//   returned there), which adds an edge.
//
// Entries external at both ends are dropped. Ranges are kept as recorded (even backwards):
// judging them needs the code, which the writers have.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <span>
#include <utility>

#include "mapper/symbol_table.h"
#include "output/range_profile.h"  // kExternalAddress
#include "output/recent_map_nodes.h"

namespace profcollect {

// One entry of a branch stack in the binary's terms.
struct BranchStackEntry {
  uint64_t from = kExternalAddress;  // ELF vaddr when from_inside, else the address outside
  uint64_t to = kExternalAddress;
  bool from_inside = false;
  bool to_inside = false;
  bool mispredicted = false;
};

struct TakenBranch {
  uint64_t from = 0;
  uint64_t to = 0;
  bool from_external = false;
  bool to_external = false;
  auto operator<=>(const TakenBranch&) const = default;
};

struct BranchCounts {
  uint64_t count = 0;
  uint64_t mispredicts = 0;
  bool operator==(const BranchCounts&) const = default;
};

struct FallThrough {
  uint64_t start = 0;            // target of the older branch
  uint64_t end = 0;              // source of the newer branch
  bool external_origin = false;  // the older branch came from outside ("f"); see above
  auto operator<=>(const FallThrough&) const = default;
};

struct BranchProfileStats {
  uint64_t stacks = 0;
  uint64_t entries = 0;
  uint64_t external_entries = 0;  // both ends outside the binary: dropped
};

class BranchProfile {
 public:
  // functions: the binary's, to judge the origin of ranges as perf2bolt does (kept by
  // reference); nullptr judges by the binary only.
  explicit BranchProfile(const SymbolTable* functions = nullptr) : functions_(functions) {}

  // One sample's stack, newest entry first, counted `weight` times. Allocates only when a new
  // branch or range is first seen.
  void add_stack(std::span<const BranchStackEntry> newest_first, uint64_t weight = 1);

  // Direct adders, for pre-aggregated input and tests.
  void add_branch(const TakenBranch& branch, uint64_t count, uint64_t mispredicts);
  void add_fall_through(const FallThrough& range, uint64_t count);

  const std::map<TakenBranch, BranchCounts>& branches() const { return branches_; }
  const std::map<FallThrough, uint64_t>& fall_throughs() const { return fall_throughs_; }
  const BranchProfileStats& stats() const { return stats_; }
  bool empty() const { return branches_.empty() && fall_throughs_.empty(); }

 private:
  struct BranchHash {
    uint64_t operator()(const TakenBranch& b) const {
      return mix_hash(b.from, b.to, (b.from_external ? 1 : 0) | (b.to_external ? 2 : 0));
    }
  };
  struct FallThroughHash {
    uint64_t operator()(const FallThrough& r) const {
      return mix_hash(r.start, r.end, r.external_origin ? 1 : 0);
    }
  };

  std::map<TakenBranch, BranchCounts> branches_;
  std::map<FallThrough, uint64_t> fall_throughs_;
  RecentMapNodes<std::map<TakenBranch, BranchCounts>, BranchHash> recent_branches_;
  RecentMapNodes<std::map<FallThrough, uint64_t>, FallThroughHash> recent_fall_throughs_;
  BranchProfileStats stats_;
  const SymbolTable* functions_ = nullptr;
  // The functions ranges' starts were found in, with the addresses that find them too.
  RecentRuns<SymbolTable::FoundRun> recent_functions_;
};

}  // namespace profcollect
