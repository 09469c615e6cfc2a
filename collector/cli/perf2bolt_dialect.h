// perf2bolt's spelling of `convert`'s options, so that a perf2bolt command line works after
// changing its first word: LLVM's option parser takes long options after one dash and values
// after '=' (`-perfdata=perf.data`, `-nl`, `-pid=42`), which CLI11 would read as short options
// (`-p erfdata=perf.data`). Options perf2bolt has and convert does not do are refused with the
// reason, rather than read as something else.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace profcollect {

struct Perf2boltRewrite {
  std::vector<std::string> args;  // in CLI11's spelling: `--perfdata FILE`, `--nl`, ...
  std::optional<std::string>
      unknown;  // a one-dash long option that is neither ours nor perf2bolt's
};

// Rewrites the arguments that follow `convert`. Throws CliError (exit 2) naming a perf2bolt
// option convert does not take and why.
Perf2boltRewrite from_perf2bolt_dialect(const std::vector<std::string>& args);

// The one-dash spellings taken ("-perfdata", "-nl", ...), for suggesting the option a typo meant.
std::vector<std::string> perf2bolt_spellings();

}  // namespace profcollect
