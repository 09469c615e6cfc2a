// `profcollect merge -o OUT DIR...`: the output directories of many hosts into one, a profile per
// binary (output/profile_merge.h does the work).
#pragma once

#include <string>
#include <vector>

namespace profcollect {

struct MergeOptions {
  std::string output;
  std::vector<std::string> inputs;
  bool quiet = false;
};

// Returns the exit code; throws CliError for user-facing failures.
int run_merge(const MergeOptions& options);

}  // namespace profcollect
