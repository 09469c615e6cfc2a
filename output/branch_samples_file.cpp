#include "output/branch_samples_file.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <vector>

#include "output/text_lines.h"

namespace profcollect {

namespace {

constexpr std::string_view kHeader = "# profcollect branch samples 1";

void append_line(std::string& out, const char* format, auto... values) {
  char buf[160];
  int n = std::snprintf(buf, sizeof buf, format, values...);
  out.append(buf, static_cast<size_t>(n));
}

std::string end_text(uint64_t address) {
  if (address == kExternalAddress) return "x";
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIx64, address);
  return buf;
}

bool parse_hex(std::string_view s, uint64_t& out, bool allow_external = false) {
  if (allow_external && s == "x") {
    out = kExternalAddress;
    return true;
  }
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

bool parse_dec(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return false;  // overflow
    v = next;
  }
  out = v;
  return true;
}

}  // namespace

void BranchSamples::merge(const BranchSamples& other) {
  stacks += other.stacks;
  for (const auto& [branch, counts] : other.bolt.branches()) {
    bolt.add_branch(branch, counts.count, counts.mispredicts);
  }
  for (const auto& [range, count] : other.bolt.fall_throughs()) bolt.add_fall_through(range, count);
  for (const auto& [range, count] : other.ranges.ranges) ranges.ranges[range] += count;
  for (const auto& [branch, count] : other.ranges.branches) ranges.branches[branch] += count;
}

std::string format_branch_samples(const BranchSamples& s) {
  std::string out(kHeader);
  out += '\n';
  append_line(out, "stacks %" PRIu64 "\n", s.stacks);
  for (const auto& [b, c] : s.bolt.branches()) {
    const char* ext = b.from_external ? (b.to_external ? "ft" : "f") : (b.to_external ? "t" : "-");
    append_line(out, "B %" PRIx64 " %" PRIx64 " %s %" PRIu64 " %" PRIu64 "\n", b.from, b.to, ext,
                c.count, c.mispredicts);
  }
  for (const auto& [r, count] : s.bolt.fall_throughs()) {
    append_line(out, "%c %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", r.external_origin ? 'f' : 'F',
                r.start, r.end, count);
  }
  for (const auto& [r, count] : s.ranges.ranges) {
    append_line(out, "R %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", r.first, r.second, count);
  }
  for (const auto& [b, count] : s.ranges.branches) {
    append_line(out, "T %s %s %" PRIu64 "\n", end_text(b.first).c_str(), end_text(b.second).c_str(),
                count);
  }
  return out;
}

std::optional<BranchSamples> parse_branch_samples(const std::string& text, std::string* error) {
  auto fail = [&](size_t line_no, const std::string& why) -> std::optional<BranchSamples> {
    if (error) *error = "line " + std::to_string(line_no) + ": " + why;
    return std::nullopt;
  };
  BranchSamples s;
  std::string_view rest = text;
  size_t line_no = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (line_no == 1) {
      if (line != kHeader) return fail(1, "not a profcollect branch samples file");
      continue;
    }
    std::vector<std::string_view> f = space_separated_fields(line);
    if (f.empty()) continue;  // a blank line, spaces only included
    const std::string_view kind = f[0];
    if (kind == "stacks" && f.size() == 2) {
      uint64_t n = 0;
      if (!parse_dec(f[1], n)) return fail(line_no, "bad stack count");
      s.stacks += n;
    } else if (kind == "B" && f.size() == 6) {
      TakenBranch b;
      uint64_t count = 0, mispredicts = 0;
      if (!parse_hex(f[1], b.from) || !parse_hex(f[2], b.to) || !parse_dec(f[4], count) ||
          !parse_dec(f[5], mispredicts)) {
        return fail(line_no, "bad B record");
      }
      if (f[3] == "f") {
        b.from_external = true;
      } else if (f[3] == "t") {
        b.to_external = true;
      } else if (f[3] == "ft") {
        b.from_external = b.to_external = true;
      } else if (f[3] != "-") {
        return fail(line_no, "bad B record");
      }
      s.bolt.add_branch(b, count, mispredicts);
    } else if ((kind == "F" || kind == "f") && f.size() == 4) {
      FallThrough r;
      uint64_t count = 0;
      if (!parse_hex(f[1], r.start) || !parse_hex(f[2], r.end) || !parse_dec(f[3], count)) {
        return fail(line_no, "bad fall-through record");
      }
      r.external_origin = kind == "f";
      s.bolt.add_fall_through(r, count);
    } else if (kind == "R" && f.size() == 4) {
      uint64_t first = 0, last = 0, count = 0;
      if (!parse_hex(f[1], first) || !parse_hex(f[2], last) || !parse_dec(f[3], count)) {
        return fail(line_no, "bad R record");
      }
      s.ranges.ranges[{first, last}] += count;
    } else if (kind == "T" && f.size() == 4) {
      uint64_t source = 0, target = 0, count = 0;
      if (!parse_hex(f[1], source, true) || !parse_hex(f[2], target, true) ||
          !parse_dec(f[3], count)) {
        return fail(line_no, "bad T record");
      }
      s.ranges.branches[{source, target}] += count;
    } else {
      return fail(line_no, "unknown record '" + std::string(kind) + "'");
    }
  }
  if (line_no == 0) return fail(1, "empty file");
  return s;
}

}  // namespace profcollect
