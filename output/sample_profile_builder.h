// Turns aggregated ranges and branches of one binary into a line-number sample profile, by
// llvm-profgen 19's rules (ProfileGenerator::generateLineNumBasedProfile):
//
// 1. Zero fill: every function (by DWARF name, all its ranges) that a range starts in is added
//    as a range of count 0, so that its unsampled lines are listed with 0 -- the compiler reads
//    0 as "cold", a missing line as "unknown".
// 2. The ranges are cut into disjoint pieces, each instruction counted with the sum of the
//    ranges over it; every instruction of a piece is symbolized to its inline chain.
// 3. Totals: each frame of the chain gets count x instruction size (bytes).
// 4. The leaf line (offset from the function's first line, base discriminator) gets, for IP
//    samples (llvm-profgen --leading-ip-only), the SUM of its instructions' counts; for branch
//    samples the MAX over its instructions of count x duplication factor.
// 5. A branch to a function entry adds "callee:count" at the source's line and head samples to
//    the callee; then a top-level line's count is raised to the sum of its call targets.
// 6. Functions named __cxx_global_var_init* or __tls_init* are dropped (ambiguous after name
//    canonicalization), at any inline depth.
// Names are canonical (mapper/canonical_name.h).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>

#include "mapper/autofdo_binary.h"
#include "output/range_profile.h"
#include "output/sample_profile.h"

#include "output/render_stop.h"

namespace profcollect {

enum class CountingRule {
  IpSamples,     // SUM per line, no duplication factor
  BranchRanges,  // MAX per line of count x duplication factor
};

struct ProfileBuildStats {
  uint64_t instructions = 0;               // instructions symbolized (sampled or zero-filled)
  uint64_t unsymbolized_instructions = 0;  // of those, in no DWARF subroutine
  uint64_t call_branches = 0;              // branches that reached a function entry
};

// `stop`, when given, is checked every stop->stride instructions (throws RenderStopped).
SampleProfile build_sample_profile(const RangeProfile& input, const AutofdoBinary& binary,
                                   CountingRule rule, ProfileBuildStats* stats = nullptr,
                                   const RenderStop* stop = nullptr);

// One range [first, last] (inclusive) and how often it ran.
struct CountedRange {
  uint64_t first = 0, last = 0, count = 0;
};
// The same from a list of ranges (in any order; a range may repeat) and the branches: IP samples
// need no map of one-instruction ranges (a million of them over a kernel).
SampleProfile build_sample_profile(
    std::span<const CountedRange> ranges,
    const std::map<std::pair<uint64_t, uint64_t>, uint64_t>& branches, const AutofdoBinary& binary,
    CountingRule rule, ProfileBuildStats* stats = nullptr, const RenderStop* stop = nullptr);

}  // namespace profcollect
