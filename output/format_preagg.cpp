// preagg: BOLT's pre-aggregated profile (llvm-bolt --pa -data=): taken branches and fall-through
// ranges of the branch stacks.
#include "output/parsed_format.h"
#include "output/preagg_reader.h"
#include "output/preagg_writer.h"
#include "output/profile_format.h"

namespace profcollect {

namespace {

FormatResult render_preagg(const FormatInput& in) {
  FormatResult r;
  if (!in.branches) {
    r.missing = "no branch stacks: the pre-aggregated format needs branch samples";
    return r;
  }
  r.content = PreaggWriter::write(in.branches->bolt);
  return r;
}

void sum_preagg(CheckedSum& sum, const BranchProfile& p) {
  for (const auto& [branch, counts] : p.branches()) {
    sum.add(counts.count);
    sum.add(counts.mispredicts);
  }
  for (const auto& [range, count] : p.fall_throughs()) sum.add(count);
}

void add_preagg(BranchProfile& into, const BranchProfile& from) {
  for (const auto& [branch, counts] : from.branches())
    into.add_branch(branch, counts.count, counts.mispredicts);
  for (const auto& [range, count] : from.fall_throughs()) into.add_fall_through(range, count);
}

// Branch, mispredict and fall-through counts are its total.
const ParsedFormat<BranchProfile> kPreagg{parse_preagg, sum_preagg, add_preagg,
                                          PreaggWriter::write};

}  // namespace

extern const FormatSpec kPreaggFormat{
    .name = "preagg",
    .file = "bolt.preagg",
    .description = "BOLT's pre-aggregated profile (llvm-bolt --pa -data=); needs branch stacks",
    .live_default = true,
    .kernel = false,
    .branch_stacks = true,
    .render = render_preagg,
    .total = [](std::string_view text,
                std::string* why) { return parsed_total(kPreagg, text, why); },
    .merger = [] { return parsed_merger(kPreagg); },
};

}  // namespace profcollect
