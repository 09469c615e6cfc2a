#include "output/image_profile.h"

#include <algorithm>

#include "output/fdata_writer.h"
#include "output/function_profile.h"

namespace profcollect {

void ImageProfile::add_ip(uint64_t vaddr, uint64_t count, uint64_t time_ns) {
  ++revision_;
  ips_.add(vaddr, count);
  if (time_ns) {
    if (first_ns_ == 0 || time_ns < first_ns_) first_ns_ = time_ns;
    last_ns_ = std::max(last_ns_, time_ns);
  }
}

void ImageProfile::prepare_branches() {
  // The symbol table judges which fall-throughs began outside their function, as perf2bolt does.
  branches_ = std::make_unique<BranchSamples>(
      BranchSamples{BranchProfile(count_bolt_ ? &image_->symbols() : nullptr), {}, 0});
  if (count_ranges_) {
    if (const AutofdoBinary* debug = image_->debug())
      counter_ = std::make_unique<BranchStackCounter>(debug->instructions());
  }
}

void ImageProfile::add_branch_stack(std::span<const BranchStackEntry> bolt,
                                    std::span<const BranchEnds> ranges, uint64_t count) {
  ++revision_;
  if (!branches_) prepare_branches();
  if (count_bolt_) branches_->bolt.add_stack(bolt, count);
  branches_->stacks += count;
  if (counter_) counter_->add(ranges, count);
}

void ImageProfile::merge(const ImageProfile& other) {
  ++revision_;
  ips_.merge(other.ips_);
  if (other.first_ns_ && (first_ns_ == 0 || other.first_ns_ < first_ns_))
    first_ns_ = other.first_ns_;
  last_ns_ = std::max(last_ns_, other.last_ns_);
  if (other.branches_) {
    if (!branches_) prepare_branches();
    // The other's ranges are folded in as counted; ours are still in the counter.
    branches_->merge(other.branch_samples());
  }
}

BranchSamples ImageProfile::branch_samples() const {
  if (!branches_) return BranchSamples{BranchProfile(nullptr), {}, 0};
  BranchSamples out = *branches_;
  if (counter_) {
    for (const auto& [range, c] : counter_->profile().ranges) out.ranges.ranges[range] += c;
    for (const auto& [branch, c] : counter_->profile().branches) out.ranges.branches[branch] += c;
  }
  return out;
}

ImageCounts ImageProfile::counts(const std::vector<std::string>& events, bool no_lbr) const {
  ImageCounts out;
  out.ips = ips_;
  if (no_lbr) {
    out.no_lbr = FdataWriter::to_no_lbr(
        FunctionProfile::build(ips_, image_->symbols(), &image_->bolted()), events);
  }
  if (branches_) out.branches = branch_samples();
  return out;
}

}  // namespace profcollect
