// samples.branch: the branch-stack counts of one binary as live collection keeps them between
// runs, so that the next run adds to them and remakes every profile from the sum (the branch
// counterpart of samples.ip). It holds both aggregations exactly, in ELF virtual addresses:
//
//   # profcollect branch samples 1
//   stacks <n>                               branch stacks counted
//   B <from> <to> <ext> <count> <mispreds>   BOLT taken branch; ext: "-", "f" (from outside),
//                                            "t" (to outside) or "ft"
//   F <start> <end> <count>                  BOLT fall-through range
//   f <start> <end> <count>                  ... whose branch came from outside the function
//   R <first> <last> <count>                 llvm-profgen range (AutoFDO)
//   T <source> <target> <count>              llvm-profgen branch; "x" for an external end
//
// Addresses are hex without 0x. Lines may come in any order; equal keys add up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "output/branch_profile.h"
#include "output/range_profile.h"

namespace profcollect {

struct BranchSamples {
  BranchProfile bolt;   // what BOLT's fdata and pre-aggregated files are made from
  RangeProfile ranges;  // what AutoFDO is made from (empty without debug info)
  uint64_t stacks = 0;

  bool empty() const { return stacks == 0 && bolt.empty() && ranges.empty(); }
  void merge(const BranchSamples& other);
};

std::string format_branch_samples(const BranchSamples& samples);

// nullopt with `error` ("line N: ...") when the text is not a branch samples file.
std::optional<BranchSamples> parse_branch_samples(const std::string& text, std::string* error);

}  // namespace profcollect
