// Processes and threads as /proc lists them: the threads of a process (/proc/PID/task), every
// process (/proc), a thread's name and a process's owner.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace profcollect {

// The thread ids of process `pid`, its own id first; empty if the process does not exist.
std::vector<pid_t> list_threads(pid_t pid);

// Every process id in /proc, ascending.
std::vector<pid_t> list_processes();

// The name of thread `tid` of process `pid` (/proc/PID/task/TID/comm), nullopt if gone.
std::optional<std::string> read_thread_comm(pid_t pid, pid_t tid);

// The process (thread group) thread `tid` belongs to (the Tgid of /proc/TID/status); `tid`
// itself for a process's main thread, nullopt if gone. /proc/TID exists for every thread though
// only processes are listed.
std::optional<pid_t> thread_group_of(pid_t tid);

// The real uid owning process `pid` (the owner of /proc/PID), nullopt if gone.
std::optional<uid_t> process_owner(pid_t pid);

}  // namespace profcollect
