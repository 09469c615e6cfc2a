#include "output/fdata_branch_writer.h"

#include <cstdio>

#include "output/fdata_reader.h"
#include "output/fdata_writer.h"
#include "record/hex_text.h"

namespace profcollect {

std::string FdataBranchWriter::location(const FunctionSymbol* function, uint64_t address) const {
  if (function == nullptr) return "0 [unknown] " + hex_digits(address);
  return "1 " + FdataWriter::escape_name(function->name) + " " +
         hex_digits(address - function->addr);
}

std::string FdataBranchWriter::translated_location(const BatLocation& at, uint64_t address) const {
  if (at.function == nullptr) return location(nullptr, address);
  return "1 " + FdataWriter::escape_name(BoltedBinary::profile_name(*at.named)) + " " +
         hex_digits(at.offset);
}

void FdataBranchWriter::add_fall_through(BranchFdata& out, const FallThrough& range,
                                         uint64_t count) {
  if (bolted_) {
    add_translated_fall_through(out, range, count);
    return;
  }
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
        out.edges[{location(function, function->addr + code.blocks[b].last_offset),
                   location(function, function->addr + code.blocks[b + 1].offset)}];
    counts.count += count;
  }
}

void FdataBranchWriter::add_translated_fall_through(BranchFdata& out, const FallThrough& range,
                                                    uint64_t count) {
  const FunctionSymbol* function = symbols_.find(range.start);
  const BatFragment* fragment = function ? bolted_->table()->fragment(function->addr) : nullptr;
  if (fragment == nullptr || function != symbols_.find(range.end)) {
    stats_.invalid_ranges += count;
    return;
  }
  const FunctionSymbol* named = function;
  if (fragment->cold) {
    if (const FunctionSymbol* hot = symbols_.find(fragment->hot_address)) named = hot;
  }
  BoltAddressTranslation::fall_throughs(*fragment, range.start - function->addr,
                                        range.end - function->addr, boundaries_);
  for (const auto& [block, next] : boundaries_) {
    const BatLocation from{function, named, fragment,
                           BoltAddressTranslation::translate(*fragment, block, true)};
    const BatLocation to{function, named, fragment,
                         BoltAddressTranslation::translate(*fragment, next, false)};
    out.edges[{translated_location(from, 0), translated_location(to, 0)}].count += count;
  }
}

void FdataBranchWriter::add_branch(BranchFdata& out, const TakenBranch& branch,
                                   const BranchCounts& counts) {
  const FunctionSymbol* from = branch.from_external ? nullptr : symbols_.find(branch.from);
  const FunctionSymbol* to = branch.to_external ? nullptr : symbols_.find(branch.to);
  if (from == nullptr && to == nullptr) {
    stats_.outside_functions += counts.count;
    return;
  }
  if (from != nullptr && blocks_.blocks(*from).is_return(branch.from - from->addr)) {
    stats_.returns_ignored += counts.count;
    return;
  }
  FdataBranchCounts& line = out.edges[{location(from, branch.from), location(to, branch.to)}];
  line.count += counts.count;
  line.mispredicts += counts.mispredicts;
}

void FdataBranchWriter::add_translated_branch(BranchFdata& out, const TakenBranch& branch,
                                              const BranchCounts& counts) {
  BatLocation from, to;
  if (!branch.from_external) from = bolted_->locate(symbols_, branch.from, true);
  if (!branch.to_external) to = bolted_->locate(symbols_, branch.to, false);
  if (from.function == nullptr && to.function == nullptr) {
    stats_.outside_functions += counts.count;
    return;
  }
  // A return is judged on the code that ran: the BOLTed binary's.
  if (from.function != nullptr &&
      blocks_.blocks(*from.function).is_return(branch.from - from.function->addr)) {
    stats_.returns_ignored += counts.count;
    return;
  }
  FdataBranchCounts& line =
      out.edges[{translated_location(from, branch.from), translated_location(to, branch.to)}];
  line.count += counts.count;
  line.mispredicts += counts.mispredicts;
}

BranchFdata FdataBranchWriter::to_fdata(const BranchProfile& profile) {
  BranchFdata out;
  out.bolted_collection = bolted_ != nullptr;
  for (const auto& [branch, counts] : profile.branches()) {
    if (bolted_) {
      add_translated_branch(out, branch, counts);
    } else {
      add_branch(out, branch, counts);
    }
  }
  for (const auto& [range, count] : profile.fall_throughs()) add_fall_through(out, range, count);
  return out;
}

std::string FdataBranchWriter::format(const BranchFdata& fdata) {
  std::string text;
  if (fdata.bolted_collection) (text += kBoltedCollectionLine) += '\n';
  for (const auto& [ends, counts] : fdata.edges) {
    text += ends.first + " " + ends.second + " " + std::to_string(counts.mispredicts) + " " +
            std::to_string(counts.count) + "\n";
  }
  return text;
}

std::string FdataBranchWriter::write(const BranchProfile& profile) {
  return format(to_fdata(profile));
}

}  // namespace profcollect
