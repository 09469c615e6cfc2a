#include "output/branch_fdata_reader.h"

#include <vector>

#include "output/fdata_reader.h"
#include "output/text_lines.h"

namespace profcollect {

namespace {

// Space-separated fields; "\ " belongs to the field (a name with a space), as do other escapes.
std::vector<std::string_view> fdata_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') i += line[i] == '\\' && i + 1 < line.size() ? 2 : 1;
    fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace

std::optional<BranchFdata> parse_branch_fdata(std::string_view text, std::string* error) {
  BranchFdata out;
  bool bolted = false;
  const std::string_view body = after_bolted_collection(text, &bolted);
  out.bolted_collection = bolted;
  TextLines lines(body);
  const size_t skipped_lines = bolted ? 1 : 0;  // messages count lines of the whole file
  auto fail = [&](const std::string& why) -> std::optional<BranchFdata> {
    if (error) *error = "line " + std::to_string(lines.number() + skipped_lines) + ": " + why;
    return std::nullopt;
  };
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    const std::vector<std::string_view> f = fdata_fields(line);
    if (f.size() != 8) {
      return fail("expected '<k> <name> <offset> <k> <name> <offset> <mispredicts> <count>'");
    }
    uint64_t kind = 0, offset = 0, mispredicts = 0, count = 0;
    for (size_t end : {0u, 3u}) {
      if (!parse_whole_number(f[end], 10, kind) || kind > 1)
        return fail("bad location kind '" + std::string(f[end]) + "'");
      if (!parse_whole_number(f[end + 2], 16, offset))
        return fail("bad offset '" + std::string(f[end + 2]) + "'");
    }
    if (!parse_whole_number(f[6], 10, mispredicts))
      return fail("bad mispredict count '" + std::string(f[6]) + "'");
    if (!parse_whole_number(f[7], 10, count)) return fail("bad count '" + std::string(f[7]) + "'");
    auto location = [&](size_t at) {
      return std::string(f[at]) + " " + std::string(f[at + 1]) + " " + std::string(f[at + 2]);
    };
    FdataBranchCounts& counts = out.edges[{location(0), location(3)}];
    counts.mispredicts += mispredicts;
    counts.count += count;
  }
  return out;
}

}  // namespace profcollect
