// The profile of one image as samples arrive: weighted IP samples per image address, and the
// branch stacks that touched the image, counted both as BOLT counts them (taken branches and
// fall-throughs) and as llvm-profgen does (ranges, when the image has debug info). Every add
// takes a count: a BPF engine delivers counts, a record source delivers ones. Nothing here
// allocates per sample once the maps hold its keys.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_profile.h"
#include "output/branch_samples_file.h"
#include "output/branch_stack_counter.h"
#include "output/image_counts.h"
#include "output/ip_profile.h"

namespace profcollect {

class ImageProfile {
 public:
  // count_ranges: also count branch stacks into llvm-profgen's ranges (needs the image's debug
  // info, loaded when the first stack arrives). count_bolt: count them as BOLT does (needs the
  // image's symbol table); without it BranchSamples::bolt stays empty.
  ImageProfile(const LoadedImage& image, bool count_ranges, bool count_bolt = true)
      : image_(&image), count_ranges_(count_ranges), count_bolt_(count_bolt) {}

  void add_ip(uint64_t vaddr, uint64_t count, uint64_t time_ns);
  // One stack, newest entry first, with its ends resolved in this image (an end elsewhere is
  // marked outside), counted `count` times: `bolt` when counting as BOLT does, `ranges` when
  // counting ranges (each empty otherwise).
  void add_branch_stack(std::span<const BranchStackEntry> bolt, std::span<const BranchEnds> ranges,
                        uint64_t count);
  // Adds another profile of the same image.
  void merge(const ImageProfile& other);

  const IpProfile& ips() const { return ips_; }
  uint64_t samples() const { return ips_.total(); }
  uint64_t first_ns() const { return first_ns_; }  // Unix epoch; 0 when unknown
  uint64_t last_ns() const { return last_ns_; }
  bool has_branch_stacks() const { return branches_ != nullptr; }
  // Changes whenever something is added: a profile whose revision is the one written last time
  // need not be written again.
  uint64_t revision() const { return revision_; }
  // The branch samples so far, with their ranges; empty without branch stacks.
  BranchSamples branch_samples() const;
  // Every kind of count so far (output/image_counts.h); the IP samples' no_lbr profile names
  // `events` (those of the samples). Without `no_lbr` that profile is left empty: it needs the
  // image's function symbols, whose table costs more than a kernel's AutoFDO profile (a third
  // of its time: 150K symbols named as BOLT names them), and only BOLT's formats read it.
  ImageCounts counts(const std::vector<std::string>& events, bool no_lbr = true) const;

 private:
  void prepare_branches();

  const LoadedImage* image_;
  bool count_ranges_;
  bool count_bolt_;
  IpProfile ips_;
  uint64_t first_ns_ = 0, last_ns_ = 0;
  uint64_t revision_ = 0;
  std::unique_ptr<BranchSamples> branches_;      // made when a stack first touches the image
  std::unique_ptr<BranchStackCounter> counter_;  // null without debug info
};

}  // namespace profcollect
