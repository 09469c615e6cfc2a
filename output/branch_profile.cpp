#include "output/branch_profile.h"

namespace profcollect {

void BranchProfile::add_branch(const TakenBranch& branch, uint64_t count, uint64_t mispredicts) {
  BranchCounts& counts = recent_branches_(branches_, branch);
  counts.count += count;
  counts.mispredicts += mispredicts;
}

void BranchProfile::add_fall_through(const FallThrough& range, uint64_t count) {
  recent_fall_throughs_(fall_throughs_, range) += count;
}

void BranchProfile::add_stack(std::span<const BranchStackEntry> newest_first, uint64_t weight) {
  ++stats_.stacks;
  stats_.entries += newest_first.size();
  // The maps are reached through recent_*_ here (inlined): a stack's 32 or 64 entries are
  // mostly branches and ranges counted before.
  for (const BranchStackEntry& entry : newest_first) {
    if (!entry.from_inside && !entry.to_inside) {
      ++stats_.external_entries;
      continue;
    }
    BranchCounts& counts = recent_branches_(
        branches_, TakenBranch{entry.from, entry.to, !entry.from_inside, !entry.to_inside});
    counts.count += weight;
    if (entry.mispredicted) counts.mispredicts += weight;
  }
  // The code ran straight from the older entry's target to the newer entry's source. An older
  // entry dropped above (external at both ends) still bounds the range: it cannot start one.
  for (size_t i = 0; i + 1 < newest_first.size(); ++i) {
    const BranchStackEntry& newer = newest_first[i];
    const BranchStackEntry& older = newest_first[i + 1];
    if (!older.to_inside || !newer.from_inside) continue;
    bool external_origin = !older.from_inside;
    if (!external_origin && functions_ != nullptr) {
      const FunctionSymbol* function = recent_functions_(older.to, [this](uint64_t a) {
                                         return functions_->find_run(a);
                                       }).function;
      external_origin = function == nullptr || older.from < function->addr ||
                        older.from - function->addr >= function->size;
    }
    recent_fall_throughs_(fall_throughs_, FallThrough{older.to, newer.from, external_origin}) +=
        weight;
  }
}

}  // namespace profcollect
