// bolt: BOLT's profile (llvm-bolt -data=). With branch stacks and the binary's BOLT block map,
// the branch profile perf2bolt writes; else the no_lbr profile of the IP samples (perf2bolt -nl).
#include "output/branch_fdata_reader.h"
#include "output/parsed_format.h"
#include "output/fdata_branch_writer.h"
#include "output/fdata_reader.h"
#include "output/profile_format.h"

namespace profcollect {

namespace {

FormatResult render_bolt(const FormatInput& in) {
  FormatResult r;
  if (in.branches && !in.no_lbr) {
    if (BoltBlockMap* blocks = in.image.blocks()) {
      FdataBranchWriter writer(in.image.symbols(), *blocks, &in.image.bolted());
      r.content = writer.write(in.branches->bolt);
      r.meta = {{"bolt_fdata", "branch"}};
      return r;
    }
  }
  r.content = format_no_lbr_fdata(in.counts.no_lbr);
  r.meta = {{"bolt_fdata", "no_lbr"}};
  return r;
}

void sum_branch_fdata(CheckedSum& sum, const BranchFdata& fdata) {
  for (const auto& [ends, counts] : fdata.edges) {
    sum.add(counts.count);
    sum.add(counts.mispredicts);
  }
}

// A sum with a profile collected on a BOLTed binary is one too: llvm-bolt must read it as
// permissively as its part that came through BAT. (merge-fdata refuses to mix the two.)
void add_branch_fdata(BranchFdata& into, const BranchFdata& from) {
  into.bolted_collection |= from.bolted_collection;
  for (const auto& [ends, counts] : from.edges) {
    FdataBranchCounts& sum = into.edges[ends];
    sum.count += counts.count;
    sum.mispredicts += counts.mispredicts;
  }
}

// Branch fdata: counts and mispredicts are its total. (A no_lbr bolt.fdata is read and merged
// as the IP samples it counts, by the codec; its total is its samples.)
const ParsedFormat<BranchFdata> kBranchFdata{parse_branch_fdata, sum_branch_fdata, add_branch_fdata,
                                             FdataBranchWriter::format};

std::optional<uint64_t> total_bolt(std::string_view text, std::string* why) {
  if (!is_no_lbr_fdata(text)) return parsed_total(kBranchFdata, text, why);
  const auto parsed = parse_no_lbr_fdata(std::string(text), why);
  if (!parsed) return std::nullopt;
  CheckedSum sum;
  for (const auto& [key, count] : parsed->counts) sum.add(count);
  if (sum.overflow) {
    *why = "its counts add up past 2^64";
    return std::nullopt;
  }
  return sum.value;
}

}  // namespace

extern const FormatSpec kBoltFormat{
    .name = "bolt",
    .file = "bolt.fdata",
    .description = "BOLT's profile (llvm-bolt -data=): branches with branch stacks, else no_lbr",
    .live_default = true,
    .kernel = true,
    .branch_stacks = true,
    .function_symbols = true,
    .render = render_bolt,
    .total = total_bolt,
    .merger = [] { return parsed_merger(kBranchFdata); },
};

}  // namespace profcollect
