#include "output/sample_profile_reader.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "output/text_lines.h"

namespace profcollect {

namespace {

bool parse_number(std::string_view s, uint64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// "<offset>[.<discriminator>]", both 32 bits as LLVM keeps them.
bool parse_location(std::string_view s, LineLocation& out) {
  const size_t dot = s.find('.');
  uint64_t offset = 0, discriminator = 0;
  if (!parse_number(s.substr(0, dot), offset) || offset > UINT32_MAX) return false;
  if (dot != std::string_view::npos &&
      (!parse_number(s.substr(dot + 1), discriminator) || discriminator > UINT32_MAX)) {
    return false;
  }
  out = {static_cast<uint32_t>(offset), static_cast<uint32_t>(discriminator)};
  return true;
}

// "<name>:<count>", the name being everything before the last colon (C++ names hold "::").
bool parse_name_count(std::string_view s, std::string_view& name, uint64_t& count) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = s.substr(0, colon);
  return parse_number(s.substr(colon + 1), count);
}

// Takes "<callee>:<calls>" off the front of `rest`: the callee ends at the first colon followed by
// a whole number and then a space or the end, as LLVM's reader finds it.
bool take_call_target(std::string_view& rest, std::string_view& callee, uint64_t& calls) {
  for (size_t colon = rest.find(':'); colon != std::string_view::npos;
       colon = rest.find(':', colon + 1)) {
    if (colon == 0) return false;
    const size_t end = std::min(rest.find(' ', colon), rest.size());
    if (parse_number(rest.substr(colon + 1, end - colon - 1), calls)) {
      callee = rest.substr(0, colon);
      rest.remove_prefix(end);
      return true;
    }
  }
  return false;
}

}  // namespace

void add_function_samples(FunctionSamples& into, const FunctionSamples& from) {
  into.total += from.total;
  into.head += from.head;
  for (const auto& [location, line] : from.body) {
    BodySample& sum = into.body[location];
    sum.count += line.count;
    for (const auto& [callee, calls] : line.call_targets) sum.call_targets[callee] += calls;
  }
  for (const auto& [location, callees] : from.inlinees) {
    auto& sum = into.inlinees[location];
    for (const auto& [name, callee] : callees) add_function_samples(sum[name], callee);
  }
}

std::optional<SampleProfile> parse_sample_profile_text(std::string_view text, std::string* error) {
  SampleProfile profile;
  TextLines lines(text);
  auto fail = [&](const std::string& why) -> std::optional<SampleProfile> {
    if (error) *error = "line " + std::to_string(lines.number()) + ": " + why;
    return std::nullopt;
  };
  // The function whose lines are at each depth: [0] the top-level one, [d] the callee inlined at
  // a line of depth d. A top-level function given twice is read apart and then added.
  std::vector<FunctionSamples*> open;
  FunctionSamples current_top;
  std::string current_name;
  bool have_top = false;
  auto close_top = [&] {
    if (have_top) add_function_samples(profile[current_name], current_top);
    current_top = FunctionSamples();
    have_top = false;
  };
  std::string_view line;
  while (lines.next(line)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t depth = line.find_first_not_of(' ');
    if (depth == std::string_view::npos) continue;
    line.remove_prefix(depth);
    if (line.starts_with('!'))
      return fail("metadata lines ('" + std::string(line) + "') are not supported");
    if (depth == 0) {
      // "<name>:<total>:<head>"
      if (line.starts_with('[')) return fail("context-sensitive profiles are not supported");
      const size_t last = line.rfind(':');
      const size_t middle = last == std::string_view::npos || last == 0 ? std::string_view::npos
                                                                        : line.rfind(':', last - 1);
      uint64_t total = 0, head = 0;
      if (middle == std::string_view::npos || middle == 0 ||
          !parse_number(line.substr(middle + 1, last - middle - 1), total) ||
          !parse_number(line.substr(last + 1), head)) {
        return fail("expected '<function>:<total samples>:<head samples>'");
      }
      close_top();
      current_name = std::string(line.substr(0, middle));
      current_top.total = total;
      current_top.head = head;
      have_top = true;
      open.assign(1, &current_top);
      continue;
    }
    if (depth > open.size()) return fail("indented deeper than the function it belongs to");
    open.resize(depth);
    FunctionSamples& owner = *open.back();
    // "<location>: <count>[ <callee>:<calls>...]" or "<location>: <inlined callee>:<total>"
    const size_t colon = line.find(": ");
    LineLocation location;
    if (colon == std::string_view::npos || !parse_location(line.substr(0, colon), location)) {
      return fail("expected '<line offset>[.<discriminator>]: ...'");
    }
    // As LLVM's reader tells them apart: a count starts with a digit, a callee's name never does.
    // Names (DWARF names of template instances) may hold spaces and colons.
    std::string_view rest = line.substr(colon + 2);
    uint64_t count = 0;
    if (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
      const size_t space = rest.find(' ');
      const std::string_view first = rest.substr(0, space);
      if (!parse_number(first, count)) return fail("bad sample count '" + std::string(first) + "'");
      BodySample& sample = owner.body[location];
      sample.count += count;
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      while (!rest.empty()) {
        if (rest[0] == ' ') {
          rest.remove_prefix(1);
          continue;
        }
        std::string_view callee;
        if (!take_call_target(rest, callee, count))
          return fail("bad call target in '" + std::string(rest) + "'");
        sample.call_targets[std::string(callee)] += count;
      }
    } else {
      std::string_view callee;
      if (!parse_name_count(rest, callee, count))
        return fail("expected '<inlined callee>:<total samples>'");
      FunctionSamples& inlined = owner.inlinees[location][std::string(callee)];
      inlined.total += count;
      open.push_back(&inlined);
    }
  }
  close_top();
  return profile;
}

}  // namespace profcollect
