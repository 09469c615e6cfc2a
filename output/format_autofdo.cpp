// autofdo: the LLVM sample profile (clang -fprofile-sample-use=), symbolized with the binary's
// debug info: from branch ranges when there are, else from the IP samples.
#include "output/autofdo_writer.h"
#include "output/parsed_format.h"
#include "output/profile_format.h"
#include "output/sample_profile_reader.h"

namespace profcollect {

namespace {

FormatResult render_autofdo(const FormatInput& in) {
  FormatResult r;
  const AutofdoBinary* debug = in.image.debug();
  if (!debug) {
    r.missing = in.image.debug_error();
    return r;
  }
  if (in.stop) in.stop->check();  // reading the debug info may have taken a while
  const bool from_ranges = in.branches && !in.branches->ranges.empty();
  r.content = from_ranges ? write_autofdo_from_ranges(in.branches->ranges, *debug, nullptr, in.stop)
                          : write_autofdo_from_ips(in.counts.ips, *debug, nullptr, in.stop);
  return r;
}

// Function totals, head samples, line and call counts, inlined callees' too.
void sum_function(CheckedSum& sum, const FunctionSamples& f) {
  sum.add(f.total);
  sum.add(f.head);
  for (const auto& [line, body] : f.body) {
    sum.add(body.count);
    for (const auto& [target, calls] : body.call_targets) sum.add(calls);
  }
  for (const auto& [line, callees] : f.inlinees) {
    for (const auto& [name, callee] : callees) sum_function(sum, callee);
  }
}

void sum_profile(CheckedSum& sum, const SampleProfile& p) {
  for (const auto& [function, samples] : p) sum_function(sum, samples);
}

void add_profile(SampleProfile& into, const SampleProfile& from) {
  for (const auto& [name, samples] : from) add_function_samples(into[name], samples);
}

const ParsedFormat<SampleProfile> kSampleProfile{parse_sample_profile_text, sum_profile,
                                                 add_profile, write_sample_profile_text};

}  // namespace

extern const FormatSpec kAutofdoFormat{
    .name = "autofdo",
    .file = "autofdo.prof",
    .description = "AutoFDO's sample profile (clang -fprofile-sample-use=); needs debug info",
    .live_default = true,
    .kernel = true,
    .branch_ranges = true,
    .debug_info = true,
    .render = render_autofdo,
    .total = [](std::string_view text,
                std::string* why) { return parsed_total(kSampleProfile, text, why); },
    .merger = [] { return parsed_merger(kSampleProfile); },
};

}  // namespace profcollect
