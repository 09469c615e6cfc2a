// The records that describe a process that was running before the events were opened, read
// from /proc as perf's synthetic-events.c does: a COMM for each thread, then an MMAP2 for each
// executable mapping of /proc/PID/task/PID/maps. The kernel reports only what changes after the
// events are open, so these must be taken after enabling them (a mapping made in between then
// shows up twice, which the process table tolerates, rather than not at all).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "collector/live/synthetic_records.h"

namespace profcollect {

struct SynthesisCount {
  uint32_t threads = 0;
  uint32_t mappings = 0;
};

// Appends the records of process `pid` to `out`; false (nothing appended) if it is gone.
bool synthesize_process(pid_t pid, const SampleIdLayout& layout, std::vector<uint8_t>& out,
                        SynthesisCount* count = nullptr);

}  // namespace profcollect
