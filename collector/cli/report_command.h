// `profcollect report`: what a perf.data holds -- samples, losses, samples per mapped file, and
// for a given binary how many samples map into it, why the others do not, and its top functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace profcollect {

struct ReportOptions {
  std::string input;
  std::string binary;  // optional
  bool json = false;
  std::optional<uint32_t> pid;
  bool ignore_build_id = false;
  std::vector<std::string> debug_dirs;
  size_t top = 20;
  bool quiet = false;
};

int run_report(const ReportOptions& options);

}  // namespace profcollect
