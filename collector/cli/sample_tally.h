// Walks a record source through the process table and tallies every sample: per mapped file as
// perf script's dso column names it, and -- when a target binary is given -- per outcome, with the
// target's samples aggregated per ELF address. Shared by `convert` and `report` so both count
// alike.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/record_source.h"
#include "mapper/binary_matcher.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/sample_outcome.h"
#include "output/branch_profile.h"
#include "output/branch_stack_counter.h"
#include "output/ip_profile.h"

namespace profcollect {

struct TallyTarget {
  BinaryMatcher* matcher = nullptr;
  const ExecSegmentMap* segments = nullptr;
  // When set, the branch stacks of samples are resolved into the binary's addresses and counted
  // as ranges and branches (for AutoFDO from branch samples).
  BranchStackCounter* branches = nullptr;
  // When set, the same stacks are counted as BOLT counts them (taken branches, fall-throughs).
  BranchProfile* bolt_branches = nullptr;
};

struct SampleTally {
  uint64_t samples = 0;  // every sample record read (after the pid filter)
  uint64_t lost = 0;     // PERF_RECORD_LOST + LOST_SAMPLES
  uint64_t throttled = 0;
  std::unordered_map<uint32_t, uint64_t> per_dso;  // Dso index -> samples
  uint64_t no_dso = 0;                             // samples in no mapping ("[unknown]")
  std::vector<uint64_t> per_attr;                  // samples per attr index
  OutcomeCounts outcomes;                          // with a target only
  IpProfile target_ips;                            // with a target only
};

struct TallyOptions {
  std::optional<uint32_t> pid;
  // Called now and then with (bytes read, bytes total) for progress display.
  std::function<void(uint64_t, uint64_t)> progress;
};

// Reads the source to its end. Throws SourceError on damage; `tally` then holds everything read
// before it.
void tally_samples(RecordSource& source, ProcessTable& processes, const TallyOptions& options,
                   const std::optional<TallyTarget>& target, SampleTally& tally);

// The recording's build-id for a path, from its build-id table (file header section, pipe
// records, MMAP2). Looked up once per mapped file, so a linear search is fine.
BinaryMatcher::BuildIdLookup recorded_build_ids(const RecordSource& source);

// The recording's build-id for a path, from its build-id table (file header section, pipe
// records, MMAP2). Looked up once per mapped file, so a linear search is fine.
BinaryMatcher::BuildIdLookup recorded_build_ids(const RecordSource& source);

// perf script's dso column for a mapped file: "[kernel.kallsyms]", "[module]", "[vdso]", a path.
std::string dso_display_name(const Dso& dso);

}  // namespace profcollect
