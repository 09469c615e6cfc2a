// `profcollect convert`: a perf.data and a binary in, a BOLT profile out -- perf2bolt's job with
// the deterministic address rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace profcollect {

struct ConvertOptions {
  std::string perf_data = "perf.data";
  std::string output;
  std::string binary;
  bool no_lbr = false;  // -nl; IP samples are all this version reads, so it changes nothing yet
  std::optional<uint32_t> pid;
  bool ignore_build_id = false;
  std::vector<std::string> debug_dirs;
  bool quiet = false;
};

// Returns the exit code; throws CliError for user-facing failures.
int run_convert(const ConvertOptions& options);

}  // namespace profcollect
