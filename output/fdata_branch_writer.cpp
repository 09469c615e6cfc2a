#include "output/fdata_branch_writer.h"

#include <cstdio>

#include "output/fdata_writer.h"

namespace profcollect {

namespace {

std::string hex(uint64_t value) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

std::string FdataBranchWriter::location(const FunctionSymbol* function, uint64_t address) const {
  if (function == nullptr) return "0 [unknown] " + hex(address);
  return "1 " + FdataWriter::escape_name(function->name) + " " + hex(address - function->addr);
}

void FdataBranchWriter::add_fall_through(BranchFdata& out, const FallThrough& range,
                                         uint64_t count) {
  const FunctionSymbol* function = symbols_.find(range.start);
  if (function == nullptr || function != symbols_.find(range.end) || range.start > range.end) {
    stats_.invalid_ranges += count;
    return;
  }
  const BoltFunctionBlocks& code = blocks_.blocks(*function);
  const uint64_t from = range.start - function->addr;
  const uint64_t to = range.end - function->addr;
  int first = code.simple ? code.block_containing(from) : -1;
  const int last = code.simple ? code.block_containing(to) : -1;
  if (first < 0 || last < 0) {
    stats_.invalid_ranges += count;
    return;
  }
  // Coming from elsewhere to the start of a block that follows a call: the call returned.
  if (range.external_origin && first > 0 && from == code.blocks[first].offset &&
      code.blocks[first - 1].ends_in_call && code.blocks[first - 1].falls_through) {
    --first;
  }
  for (int b = first; b < last; ++b) {
    if (!code.blocks[b].falls_through) {
      stats_.invalid_ranges += count;
      return;
    }
  }
  for (int b = first; b < last; ++b) {
    FdataBranchCounts& counts =
        out[{location(function, function->addr + code.blocks[b].last_offset),
             location(function, function->addr + code.blocks[b + 1].offset)}];
    counts.count += count;
  }
}

BranchFdata FdataBranchWriter::to_fdata(const BranchProfile& profile) {
  BranchFdata out;
  for (const auto& [branch, counts] : profile.branches()) {
    const FunctionSymbol* from = branch.from_external ? nullptr : symbols_.find(branch.from);
    const FunctionSymbol* to = branch.to_external ? nullptr : symbols_.find(branch.to);
    if (from == nullptr && to == nullptr) {
      stats_.outside_functions += counts.count;
      continue;
    }
    if (from != nullptr && blocks_.blocks(*from).is_return(branch.from - from->addr)) {
      stats_.returns_ignored += counts.count;
      continue;
    }
    FdataBranchCounts& line = out[{location(from, branch.from), location(to, branch.to)}];
    line.count += counts.count;
    line.mispredicts += counts.mispredicts;
  }
  for (const auto& [range, count] : profile.fall_throughs()) add_fall_through(out, range, count);
  return out;
}

std::string FdataBranchWriter::format(const BranchFdata& fdata) {
  std::string text;
  for (const auto& [ends, counts] : fdata) {
    text += ends.first + " " + ends.second + " " + std::to_string(counts.mispredicts) + " " +
            std::to_string(counts.count) + "\n";
  }
  return text;
}

std::string FdataBranchWriter::write(const BranchProfile& profile) {
  return format(to_fdata(profile));
}

}  // namespace profcollect
