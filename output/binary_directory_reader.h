// Reads every file of one binary's profile directory (output/profile_store.h's layout) whole and
// strictly, for `merge`: a damaged file is an error naming it and the line, never skipped, so
// that a merged profile never silently counts less than its inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_samples_file.h"
#include "output/directory_handle.h"
#include "output/fdata_branch_writer.h"
#include "output/fdata_reader.h"
#include "output/ip_profile.h"
#include "output/sample_profile.h"

namespace profcollect {

struct BinaryDirectoryFiles {
  std::string path;  // the directory, for messages
  BinaryIdentity identity;  // path and build-id as meta.json gives them
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;  // 0 when unknown
  std::vector<std::string> events;
  std::optional<uint64_t> branch_stacks;
  // Each file when present: the IP samples' no_lbr profile (bolt.fdata, or bolt.nolbr.fdata when
  // bolt.fdata is branch fdata), branch fdata, bolt.preagg, autofdo.prof, samples.ip and
  // samples.branch.
  std::optional<NoLbrFdata> no_lbr;
  std::optional<BranchFdata> branch_fdata;
  std::optional<BranchProfile> preagg;
  std::optional<SampleProfile> autofdo;
  std::optional<IpProfile> ips;
  std::optional<BranchSamples> branches;
  // Entries not merged, with the reason (set-aside files, unsymbolized profiles).
  std::vector<std::string> left_out;
};

// Throws OutputError naming the file (and line) that is missing, damaged, a link or another
// user's: meta.json is required, each profile file is optional.
BinaryDirectoryFiles read_binary_directory(const DirectoryHandle& directory);

}  // namespace profcollect
