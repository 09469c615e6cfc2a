// `perf script -F ip,brstack --show-mmap-events` text as a record source, the input
// llvm-profgen --perfscript reads:
//
//     PERF_RECORD_MMAP2 1234/1234: [0x555555555000(0x1000) @ 0x1000 fe:00 1 0]: r-xp /path/bin
//     PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1209988) @ 0xffffffff81000000]: x [kernel.kallsyms]_text
//                555555555204 0x555555555212/0x5555555551f0/P/-/-/0  0x.../0x.../P/-/-/0
//
// MMAP and MMAP2 lines (build-id form "<hex>" included) become MmapRecords; every other line
// that starts with a hex IP becomes a SampleRecord, its branch entries (newest first:
// 0xFROM/0xTO/M|P|-/X|-/A|-/cycles[/type[/spec]], the type and speculation names kept in the
// entry's flags) in `branches`. An optional first token "pid/tid" (from -F pid,tid,...) is
// understood, and an event name token ending in ':' (-F event) gives the sample's attr, one per
// name, named by it (a BOLT profile's header names the event); without one the attr is named
// "perf-script". Lines of other kinds are skipped and counted.
//
// The text has no pid column (llvm-profgen refuses one), so a sample without "pid/tid" is
// attributed to the process of the latest MMAP line of a user process: exact for a recording of
// one process, and llvm-profgen's own approximation (one load address per binary) otherwise.
// The IP's cpumode is Kernel when its top bit is set, else User.
#pragma once

#include <memory>
#include <string>

#include "collector/records/record_source.h"

namespace profcollect {

struct PerfScriptStats {
  uint64_t lines = 0;
  uint64_t samples = 0;
  uint64_t mmaps = 0;
  uint64_t skipped_lines = 0;       // neither a sample nor an MMAP line
  uint64_t bad_branch_entries = 0;  // entries that do not parse; the rest of their line is dropped
};

class PerfScriptReader : public RecordSource {
 public:
  // path: a file, or "-" for standard input. Throws OpenError.
  static std::unique_ptr<PerfScriptReader> open(const std::string& path);
  ~PerfScriptReader() override;

  bool next(Record& out) override;
  const SessionInfo& session() const override { return session_; }
  uint64_t bytes_read() const override { return bytes_read_; }
  uint64_t bytes_total() const override { return bytes_total_; }
  const PerfScriptStats& stats() const { return stats_; }

 private:
  PerfScriptReader() = default;
  bool parse_mmap(std::string_view line, Record& out);
  bool parse_sample(std::string_view line, Record& out);
  // The attr of samples of event `name` (perf script's event field), made at its first sample.
  uint32_t attr_named(std::string_view name);
  bool named_ = false;

  std::string path_;
  void* file_ = nullptr;  // FILE*
  bool owns_file_ = false;
  char* line_ = nullptr;  // getline's buffer, reused
  size_t line_capacity_ = 0;
  SessionInfo session_;
  uint64_t bytes_read_ = 0, bytes_total_ = 0;
  uint32_t current_pid_ = kNoPid;
  std::vector<BranchEntry> branches_;
  PerfScriptStats stats_;
};

}  // namespace profcollect
