#include "output/preagg_reader.h"

#include <vector>

#include "output/text_lines.h"

namespace profcollect {

namespace {

// "<hex>" or, with `external`, "X:<hex>".
bool parse_end(std::string_view s, uint64_t& address, bool& external) {
  external = s.starts_with("X:");
  return parse_whole_number(external ? s.substr(2) : s, 16, address);
}

}  // namespace

std::optional<BranchProfile> parse_preagg(std::string_view text, std::string* error) {
  BranchProfile out;
  TextLines lines(text);
  auto fail = [&](const std::string& why) -> std::optional<BranchProfile> {
    if (error) *error = "line " + std::to_string(lines.number()) + ": " + why;
    return std::nullopt;
  };
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    const std::vector<std::string_view> f = space_separated_fields(line);
    if (!f.empty() && f[0] == "B") {
      TakenBranch branch;
      uint64_t count = 0, mispredicts = 0;
      if (f.size() != 5 || !parse_end(f[1], branch.from, branch.from_external) ||
          !parse_end(f[2], branch.to, branch.to_external) || !parse_whole_number(f[3], 10, count) ||
          !parse_whole_number(f[4], 10, mispredicts)) {
        return fail("expected 'B <from> <to> <count> <mispredicts>'");
      }
      out.add_branch(branch, count, mispredicts);
    } else if (!f.empty() && (f[0] == "F" || f[0] == "f")) {
      FallThrough range;
      range.external_origin = f[0] == "f";
      uint64_t count = 0;
      if (f.size() != 4 || !parse_whole_number(f[1], 16, range.start) ||
          !parse_whole_number(f[2], 16, range.end) || !parse_whole_number(f[3], 10, count)) {
        return fail("expected '" + std::string(f[0]) + " <start> <end> <count>'");
      }
      out.add_fall_through(range, count);
    } else {
      return fail("not a pre-aggregated record (B, F or f)");
    }
  }
  return out;
}

}  // namespace profcollect
