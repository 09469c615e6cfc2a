#include "collector/cli/merge_command.h"

#include <cstdio>

#include "collector/cli/cli_error.h"
#include "output/atomic_file.h"
#include "output/profile_merge.h"

namespace profcollect {

int run_merge(const MergeOptions& o) {
  if (o.inputs.empty()) throw CliError("merge: no input directory given", 2);
  MergeSummary summary;
  try {
    summary = merge_profile_directories(o.inputs, o.output);
  } catch (const OutputError& e) {
    throw CliError(std::string("merge: ") + e.what());
  }
  for (const std::string& warning : summary.warnings) {
    std::fprintf(stderr, "profcollect: warning: %s\n", warning.c_str());
  }
  if (!o.quiet) {
    std::fprintf(stderr, "profcollect: merged %zu input%s into %s: %zu binar%s\n", o.inputs.size(),
                 o.inputs.size() == 1 ? "" : "s", o.output.c_str(), summary.binaries.size(),
                 summary.binaries.size() == 1 ? "y" : "ies");
  }
  return 0;
}

}  // namespace profcollect
