#include "output/autofdo_writer.h"

#include <algorithm>
#include <vector>

#include "output/sample_profile_builder.h"

namespace profcollect {

namespace {

void append_location(std::string& out, const LineLocation& location) {
  out += std::to_string(location.offset);
  if (location.discriminator != 0) {
    out += '.';
    out += std::to_string(location.discriminator);
  }
}

void append_body(std::string& out, const FunctionSamples& samples, size_t indent) {
  for (const auto& [location, line] : samples.body) {
    out.append(indent + 1, ' ');
    append_location(out, location);
    out += ": ";
    out += std::to_string(line.count);
    std::vector<std::pair<std::string_view, uint64_t>> targets(line.call_targets.begin(),
                                                               line.call_targets.end());
    std::stable_sort(targets.begin(), targets.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [callee, calls] : targets) {
      out += ' ';
      out += callee;
      out += ':';
      out += std::to_string(calls);
    }
    out += '\n';
  }
  for (const auto& [location, callees] : samples.inlinees) {
    for (const auto& [name, callee] : callees) {
      out.append(indent + 1, ' ');
      append_location(out, location);
      out += ": ";
      out += name;
      out += ':';
      out += std::to_string(callee.total);
      out += '\n';
      append_body(out, callee, indent + 1);
    }
  }
}

void count_into(AutofdoStats* stats, const ProfileBuildStats& build, const SampleProfile& profile) {
  if (stats == nullptr) return;
  stats->functions = profile.size();
  stats->instructions = build.instructions;
  stats->unsymbolized_instructions = build.unsymbolized_instructions;
}

}  // namespace

std::string write_sample_profile_text(const SampleProfile& profile) {
  std::vector<const std::pair<const std::string, FunctionSamples>*> order;
  order.reserve(profile.size());
  for (const auto& entry : profile) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->second.total > b->second.total; });
  std::string out;
  for (const auto* entry : order) {
    out += entry->first;
    out += ':';
    out += std::to_string(entry->second.total);
    out += ':';
    out += std::to_string(entry->second.head);
    out += '\n';
    append_body(out, entry->second, 0);
  }
  return out;
}

std::string write_autofdo_from_ips(const IpProfile& ips, const AutofdoBinary& binary,
                                   AutofdoStats* stats, const RenderStop* stop) {
  // Each sampled address is the one-instruction range [ip, ip]; in address order, so that the
  // code is decoded and looked up function by function.
  std::vector<CountedRange> ranges;
  ranges.reserve(ips.counts().size());
  for (const auto& [address, count] : ips.counts())
    ranges.push_back(CountedRange{address, address, count});
  std::sort(ranges.begin(), ranges.end(),
            [](const CountedRange& a, const CountedRange& b) { return a.first < b.first; });
  uint64_t not_code = 0;
  std::erase_if(ranges, [&](const CountedRange& r) {
    if (binary.instructions().is_code(r.first)) return false;
    not_code += r.count;
    return true;
  });
  ProfileBuildStats build;
  SampleProfile profile =
      build_sample_profile(ranges, {}, binary, CountingRule::IpSamples, &build, stop);
  if (stats != nullptr) {
    stats->samples = ips.total();
    stats->samples_not_code = not_code;
  }
  count_into(stats, build, profile);
  return write_sample_profile_text(profile);
}

std::string write_autofdo_from_ranges(const RangeProfile& ranges, const AutofdoBinary& binary,
                                      AutofdoStats* stats, const RenderStop* stop) {
  ProfileBuildStats build;
  SampleProfile profile =
      build_sample_profile(ranges, binary, CountingRule::BranchRanges, &build, stop);
  if (stats != nullptr) {
    uint64_t weight = 0;
    for (const auto& [range, count] : ranges.ranges) weight += count;
    stats->samples = weight;
  }
  count_into(stats, build, profile);
  return write_sample_profile_text(profile);
}

}  // namespace profcollect
