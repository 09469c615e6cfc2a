#include "output/fdata_writer.h"

#include <algorithm>
#include <cstdio>

namespace profcollect {

std::string FdataWriter::escape_name(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ' ' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string FdataWriter::no_lbr(const FunctionProfile& profile,
                                const std::vector<std::string>& events) {
  std::string out = "no_lbr";
  for (const auto& e : events) {
    out += ' ';
    out += e;
    if (e.empty() || e.back() != ':') out += ':';
  }
  out += '\n';

  struct Line {
    std::string name;
    uint64_t offset, count;
  };
  std::vector<Line> lines;
  lines.reserve(profile.samples.size());
  for (const auto& s : profile.samples) {
    lines.push_back({escape_name(s.function->name), s.offset, s.count});
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.name != b.name ? a.name < b.name : a.offset < b.offset;
  });
  // Two symbols of one BOLT name cannot exist, but guard against merging anyway: equal
  // (name, offset) lines are summed, as BOLT would when reading them.
  char buf[64];
  for (size_t i = 0; i < lines.size(); ++i) {
    uint64_t count = lines[i].count;
    while (i + 1 < lines.size() && lines[i + 1].name == lines[i].name &&
           lines[i + 1].offset == lines[i].offset) {
      count += lines[++i].count;
    }
    out += "1 ";
    out += lines[i].name;
    std::snprintf(buf, sizeof buf, " %llx %llu\n", static_cast<unsigned long long>(lines[i].offset),
                  static_cast<unsigned long long>(count));
    out += buf;
  }
  return out;
}

}  // namespace profcollect
