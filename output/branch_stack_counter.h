// Counts branch stacks (LBR, BRBE, ...) into ranges and branches by llvm-profgen 19's rules
// (PerfScriptReader::extractLBRStack and computeCounterFromLBR, non-CS profile):
//
// - A branch end that does not start an instruction of the binary's code (another binary, the
//   PLT, the kernel) is external; an entry external at both ends is dropped before pairing.
// - Every entry whose target is code counts the branch (source, target), the source possibly
//   external (calls from outside still give head samples).
// - Between consecutive entries (newest first), the code ran straight from the older entry's
//   target to the newer entry's source: that range counts when both ends are code, it is not
//   backwards, and no call, return or direct jump starts inside it before its last instruction.
//
// Addresses are ELF virtual addresses of the binary; kExternalAddress marks an end known to be
// elsewhere. The per-sample step allocates nothing once the maps hold its keys.
#pragma once

#include <cstdint>
#include <span>

#include "mapper/instruction_map.h"
#include "output/range_profile.h"
#include "output/recent_map_nodes.h"

namespace profcollect {

struct BranchEnds {
  uint64_t source = kExternalAddress;
  uint64_t target = kExternalAddress;
};

struct BranchStackStats {
  uint64_t stacks = 0;
  uint64_t entries = 0;
  uint64_t external_entries = 0;  // both ends outside the binary's code
  uint64_t invalid_ranges = 0;    // backwards, or crossing an unconditional branch
};

class BranchStackCounter {
 public:
  explicit BranchStackCounter(const InstructionMap& code) : code_(code) {}

  // One sample's branch stack, newest entry first, counted `weight` times.
  void add(std::span<const BranchEnds> stack, uint64_t weight = 1);

  const RangeProfile& profile() const { return profile_; }
  RangeProfile take() {
    recent_ranges_.clear();
    recent_branches_.clear();
    return std::move(profile_);
  }
  const BranchStackStats& stats() const { return stats_; }

 private:
  using Counts = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;
  struct PairHash {
    uint64_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
      return mix_hash(p.first, p.second);
    }
  };
  struct AddressHash {
    uint64_t operator()(uint64_t a) const { return mix_hash(a, 0); }
  };

  const InstructionMap& code_;
  RangeProfile profile_;
  BranchStackStats stats_;
  // A stack's ends and ranges were mostly met in earlier stacks: what the code said of them, and
  // their counts' map nodes, are kept at hand.
  RecentAnswers<uint64_t, bool, AddressHash> is_code_;
  RecentAnswers<std::pair<uint64_t, uint64_t>, bool, PairHash> range_valid_;
  RecentMapNodes<Counts, PairHash> recent_ranges_, recent_branches_;
};

}  // namespace profcollect
