// The counts of one image's profile, every kind of them in one value: what a flush or a
// conversion takes from the aggregator (ImageProfile::counts), what the profile store adds to
// the counts of earlier runs and merge to those of other hosts, what the profile-directory codec
// keeps in a directory's count files so that runs add up (output/profile_directory.h), and what
// the formats render from (output/profile_format.h).
//
// A new kind of count (call chains, basic-block counts) is a member here with its lines in add(),
// the aggregator that fills it, and its count file in the codec; the session's flush, the store,
// convert and merge carry the whole value and do not change.
#pragma once

#include <optional>

#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/ip_profile.h"

namespace profcollect {

struct ImageCounts {
  IpProfile ips;      // samples per image address
  NoLbrFdata no_lbr;  // the same samples as BOLT's no_lbr profile, with their events
  // The branch stacks, counted as BOLT and llvm-profgen count them; only when the event records
  // them (a profile with them is a branch profile from then on).
  std::optional<BranchSamples> branches;

  // Adds `more` (a later run's counts, another host's): every count summed, the no_lbr events
  // joined in order of arrival.
  void add(const ImageCounts& more);
};

}  // namespace profcollect
