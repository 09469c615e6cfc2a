#include "output/branch_stack_counter.h"

namespace profcollect {

void BranchStackCounter::add(std::span<const BranchEnds> stack, uint64_t weight) {
  ++stats_.stacks;
  bool have_newer = false;
  uint64_t newer_source = kExternalAddress;
  for (const BranchEnds& entry : stack) {
    ++stats_.entries;
    const uint64_t source = code_.is_code(entry.source) ? entry.source : kExternalAddress;
    const uint64_t target = code_.is_code(entry.target) ? entry.target : kExternalAddress;
    if (source == kExternalAddress && target == kExternalAddress) {
      ++stats_.external_entries;
      continue;
    }
    if (target != kExternalAddress) {
      profile_.branches[{source, target}] += weight;
      if (have_newer && newer_source != kExternalAddress) {
        if (target <= newer_source && !code_.crosses_unconditional_branch(target, newer_source)) {
          profile_.ranges[{target, newer_source}] += weight;
        } else {
          ++stats_.invalid_ranges;
        }
      }
    }
    have_newer = true;
    newer_source = source;
  }
}

}  // namespace profcollect
