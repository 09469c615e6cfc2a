#include "output/autofdo_writer.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

#include "output/sample_profile_builder.h"

namespace profcollect {

namespace {

// Where the text goes: its length first, then a string of that length (a profile of megabytes
// grown by doubling would hold up to three times its size at once).
struct TextLength {
  size_t size = 0;
  void text(std::string_view s) { size += s.size(); }
  void fill(size_t n, char) { size += n; }
  void number(uint64_t v) {
    char buf[24];
    size += static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf);
  }
};

struct TextOut {
  std::string& out;
  void text(std::string_view s) { out.append(s); }
  void fill(size_t n, char c) { out.append(n, c); }
  void number(uint64_t v) {
    char buf[24];
    out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }
};

template <class Sink>
void append_location(Sink& out, const LineLocation& location) {
  out.number(location.offset);
  if (location.discriminator != 0) {
    out.text(".");
    out.number(location.discriminator);
  }
}

template <class Sink>
void append_body(Sink& out, const FunctionSamples& samples, size_t indent) {
  std::vector<std::pair<std::string_view, uint64_t>> targets;
  for (const auto& [location, line] : samples.body) {
    out.fill(indent + 1, ' ');
    append_location(out, location);
    out.text(": ");
    out.number(line.count);
    targets.assign(line.call_targets.begin(), line.call_targets.end());
    std::stable_sort(targets.begin(), targets.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [callee, calls] : targets) {
      out.text(" ");
      out.text(callee);
      out.text(":");
      out.number(calls);
    }
    out.text("\n");
  }
  for (const auto& [location, callees] : samples.inlinees) {
    for (const auto& [name, callee] : callees) {
      out.fill(indent + 1, ' ');
      append_location(out, location);
      out.text(": ");
      out.text(name);
      out.text(":");
      out.number(callee.total);
      out.text("\n");
      append_body(out, callee, indent + 1);
    }
  }
}

template <class Sink>
void write_profile(Sink& out,
                   const std::vector<const std::pair<const std::string, FunctionSamples>*>& order) {
  for (const auto* entry : order) {
    out.text(entry->first);
    out.text(":");
    out.number(entry->second.total);
    out.text(":");
    out.number(entry->second.head);
    out.text("\n");
    append_body(out, entry->second, 0);
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
  TextLength length;
  write_profile(length, order);
  std::string text;
  text.reserve(length.size);
  TextOut out{text};
  write_profile(out, order);
  return text;
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
