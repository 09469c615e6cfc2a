// Live collection: `profcollect --pid PID[,PID...]`, `profcollect -- CMD ARGS...`,
// `profcollect -a`. Samples are resolved against the right executable segment as they arrive
// and flushed as complete profiles every --flush-interval seconds and at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace profcollect {

struct CollectOptions {
  std::vector<int> pids;               // --pid
  std::vector<std::string> command;    // after --
  bool system_wide = false;            // -a
  std::string event = "auto";          // -e
  std::string engine = "perf";         // --engine
  bool branch_any = false;             // -b
  std::string branch_filter;           // -j
  std::optional<uint64_t> frequency;   // -F
  std::optional<uint64_t> period;      // -c
  std::optional<uint64_t> mmap_pages;  // -m
  uint64_t backlog_mb = 64;            // --backlog-mb (kDefaultBacklogBytes)
  std::string output_dir = "profcollect.out";
  double flush_interval = 60;
  std::optional<double> duration;
  std::vector<std::string> binaries;  // --binary PATH|BUILD-ID
  std::vector<std::string> debug_dirs;
  bool quiet = false;
  bool unsymbolized = false;  // also write autofdo.unsym per binary
  std::string formats;        // --format: names joined by commas; empty: the live defaults
};

// Returns the exit code: 0, or the child's status in command mode. Throws for errors before
// collection starts (CliError, PerfEventError, OutputError, ...).
int run_collect(const CollectOptions& options);

}  // namespace profcollect
