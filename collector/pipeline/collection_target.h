// What a live collection samples: existing processes (`--pid`), a command profcollect starts
// (`-- CMD`), or every process (`-a`). The attr and the way events are opened depend on it.
#pragma once

#include <sys/types.h>

#include <vector>

namespace profcollect {

enum class TargetKind {
  Processes,   // --pid PID[,PID...]: every thread of each, and what they create after the attach
  Command,     // -- CMD: one child, stopped before its exec; the events start at the exec
  SystemWide,  // -a: every process on every online CPU
};

struct CollectionTarget {
  TargetKind kind = TargetKind::Processes;
  // Processes: the process ids; Command: the child's pid (one); SystemWide: unused.
  std::vector<pid_t> pids;
};

}  // namespace profcollect
