// Merges the output directories of many hosts (live collection's layout, output/profile_store.h)
// into one, binary directory by binary directory: a build machine gets one profile per binary
// (basename + build-id) whatever the number of hosts that ran it.
//
// Each format is added up without the binary, as its own tools would:
//   bolt.fdata (branch)     equal edges add (mispredicts and counts), as BOLT's merge-fdata
//   bolt.fdata (no_lbr), bolt.nolbr.fdata
//                           equal (function, offset) counts add; the header's events are the
//                           union, in the order first met
//   bolt.preagg             equal records add
//   autofdo.prof            as `llvm-profdata merge --sample`: function totals, head samples,
//                           line counts, call targets and inlined callees add
//   samples.ip, samples.branch  equal keys add
//   meta.json               samples and branch_stacks add, first_sample_ns the earliest and
//                           last_sample_ns the latest (0, unknown, left out), events the union
// A BOLTed binary's directory whose profiles BAT translated (meta.json's bolt_address_translation
// status "translated") is a profile of the input binary: it is added to the directory with the
// input's build-id (or to one named after the BOLTed file with that build-id), its BOLT profiles
// and AutoFDO only (its samples files and bolt.preagg are in the BOLTed layout); the sums begin
// with "boltedcollection" (llvm-bolt reads them as permissively as perf2bolt's translated
// profiles; merge-fdata refuses to mix the two), and meta.json names the BOLTed build-ids
// (status "merged").
// A binary whose bolt.fdata is branch fdata on one host and no_lbr on another gets branch fdata,
// and the no_lbr counts go to bolt.nolbr.fdata, as when a run with branch stacks follows one
// without (output/profile_store.h).
//
// Every input is read and checked before anything is written; each binary's directory in the
// output is then replaced as one generation (output/profile_generation.h), so a failure leaves
// the output's earlier directories as they were.
#pragma once

#include <string>
#include <vector>

#include "output/profile_generation.h"

namespace profcollect {

struct MergeSummary {
  std::vector<std::string> binaries;  // directory names written, sorted
  std::vector<std::string> warnings;  // files left out, leftovers of interrupted writes removed
};

// Throws OutputError naming the file (and line) when an input is not an output directory or is
// given twice, a file is damaged (by output/profile_directory.h's rules: cut short, its totals
// not meta.json's, its build-id not its directory's), a sum would pass 2^64, or two inputs'
// same-named directories disagree on the build-id; nothing is written then.
MergeSummary merge_profile_directories(const std::vector<std::string>& inputs,
                                       const std::string& output, GenerationModes modes = {});

}  // namespace profcollect
