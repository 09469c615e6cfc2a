#include "output/preagg_writer.h"

#include <cstdio>

namespace profcollect {

namespace {

void append_address(std::string& out, uint64_t address, bool external) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%s%llx", external ? "X:" : "",
                static_cast<unsigned long long>(address));
  out += buffer;
}

void append_decimal(std::string& out, uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%llu", static_cast<unsigned long long>(value));
  out += buffer;
}

}  // namespace

std::string PreaggWriter::write(const BranchProfile& profile) {
  std::string out;
  for (const auto& [branch, counts] : profile.branches()) {
    out += "B ";
    append_address(out, branch.from, branch.from_external);
    out += ' ';
    append_address(out, branch.to, branch.to_external);
    out += ' ';
    append_decimal(out, counts.count);
    out += ' ';
    append_decimal(out, counts.mispredicts);
    out += '\n';
  }
  for (const auto& [range, count] : profile.fall_throughs()) {
    out += range.external_origin ? "f " : "F ";
    append_address(out, range.start, false);
    out += ' ';
    append_address(out, range.end, false);
    out += ' ';
    append_decimal(out, count);
    out += '\n';
  }
  return out;
}

}  // namespace profcollect
