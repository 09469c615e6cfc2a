// unsymbolized: llvm-profgen's unsymbolized profile (--unsymbolized-profile=), ranges and
// branches by address; symbolized later, where the debug info is.
#include "output/profile_format.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"

namespace profcollect {

namespace {

FormatResult render_unsymbolized(const FormatInput& in) {
  FormatResult r;
  const bool from_ranges = in.branches && !in.branches->ranges.empty();
  r.content =
      write_unsymbolized_profile(from_ranges ? in.branches->ranges : ranges_from_ips(in.counts.ips),
                                 in.image.elf()->preferred_base());
  const UnsymbolizedKind kind =
      from_ranges ? UnsymbolizedKind::BranchRanges : UnsymbolizedKind::IpSamples;
  r.meta = {{"unsymbolized", unsymbolized_kind_name(kind)},
            {"unsymbolized_profgen_flags", unsymbolized_profgen_flags(kind)}};
  return r;
}

}  // namespace

extern const FormatSpec kUnsymbolizedFormat{
    .name = "unsymbolized",
    .file = "autofdo.unsym",
    .description = "llvm-profgen's unsymbolized profile, to symbolize where the debug info is",
    .live_default = false,
    .kernel = true,
    .branch_ranges = true,
    .render = render_unsymbolized,
};

}  // namespace profcollect
