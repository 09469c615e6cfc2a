// How much CPU a process has used, for tests that must wait until a target has done some work
// rather than sleep for a while. On a loaded machine a sleep gives the target less CPU time, and
// cpu-clock, opened per task, samples only the time the task itself runs: "N ms of the target's
// CPU time" means N ms x the rate samples whatever the load, "N ms of sleep" means anything
// from 0 to that.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace profcollect::test {

// CPU time (user + system) of all threads of process `pid`; nullopt once it is gone.
std::optional<std::chrono::nanoseconds> process_cpu_time(pid_t pid);

// Waits until process `pid` has used `amount` more CPU time than when called (polling every
// millisecond); false when it is gone or `timeout` passes first.
bool wait_for_cpu_time(pid_t pid, std::chrono::nanoseconds amount,
                       std::chrono::milliseconds timeout);

// The processes whose parent is `pid` (from /proc/*/stat), e.g. the command profcollect runs.
std::vector<pid_t> child_processes(pid_t pid);

// The state letter of /proc/PID/stat ('R', 'S', 'T' once SIGSTOP has taken effect, ...); 0 once
// the process is gone.
char process_state(pid_t pid);

// voluntary_ctxt_switches of /proc/PID/status: how often its main thread went to sleep (in poll,
// for profcollect's event loop); nullopt once it is gone.
std::optional<uint64_t> voluntary_context_switches(pid_t pid);

// A generous bound for a wait on a condition that an idle machine meets in a fraction of it: a
// loaded one may take many times longer, and a wait that succeeds returns at once anyway.
inline constexpr std::chrono::seconds kPatience{120};

}  // namespace profcollect::test
