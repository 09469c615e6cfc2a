// `profcollect convert`: a perf.data and a binary in, a BOLT profile out -- perf2bolt's job with
// the deterministic address rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "output/profile_format.h"
#include "output/profile_renderer.h"

namespace profcollect {

// What convert writes. One format: -o names the file. Several: -o names a directory that receives
// bolt.fdata, bolt.preagg, autofdo.prof, autofdo.unsym and meta.json. `bolt` is branch fdata when the
// input has branch stacks (no_lbr with -nl or without them); `preagg` is BOLT's pre-aggregated
// profile (perf2bolt --pa / llvm-bolt --pa).

struct ConvertOptions {
  std::string perf_data;
  std::string perf_script;  // --perf-script: `perf script -F ip,brstack --show-mmap-events` text
  std::vector<ProfileFormat> formats = {format_named("bolt")};
  std::string output;
  std::string binary;
  bool no_lbr = false;  // --nl: a no_lbr BOLT profile from IP samples even where branch stacks are
  std::optional<uint32_t> pid;
  bool ignore_build_id = false;
  std::vector<std::string> debug_dirs;
  // --kernel (llvm-profgen's spelling): the binary must be a kernel image or module. Its samples
  // are the kernel's own mappings' either way: [kernel.kallsyms] for a vmlinux, slid by the
  // runtime _text perf recorded; the module's mapping for a .ko.
  bool kernel = false;
  bool quiet = false;
};

// Returns the exit code; throws CliError for user-facing failures.
int run_convert(const ConvertOptions& options);

// "bolt,autofdo" -> formats; throws CliError (usage) for an unknown name.
std::vector<ProfileFormat> parse_formats(const std::string& list);

}  // namespace profcollect
