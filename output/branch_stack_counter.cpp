#include "output/branch_stack_counter.h"

namespace profcollect {

void BranchStackCounter::add(std::span<const BranchEnds> stack, uint64_t weight) {
  ++stats_.stacks;
  auto code = [this](uint64_t a) { return code_.is_code(a); };
  auto straight = [this](const std::pair<uint64_t, uint64_t>& r) {
    return r.first <= r.second && !code_.crosses_unconditional_branch(r.first, r.second);
  };
  bool have_newer = false;
  uint64_t newer_source = kExternalAddress;
  for (const BranchEnds& entry : stack) {
    ++stats_.entries;
    const uint64_t source = entry.source != kExternalAddress && is_code_(entry.source, code)
                                ? entry.source
                                : kExternalAddress;
    const uint64_t target = entry.target != kExternalAddress && is_code_(entry.target, code)
                                ? entry.target
                                : kExternalAddress;
    if (source == kExternalAddress && target == kExternalAddress) {
      ++stats_.external_entries;
      continue;
    }
    if (target != kExternalAddress) {
      recent_branches_(profile_.branches, {source, target}) += weight;
      if (have_newer && newer_source != kExternalAddress) {
        if (range_valid_({target, newer_source}, straight)) {
          recent_ranges_(profile_.ranges, {target, newer_source}) += weight;
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
