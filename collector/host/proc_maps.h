// The mappings of a running process from /proc/PID/task/PID/maps, one line each:
//   start-end perms offset major:minor inode   pathname
// e.g. "55d0c1a00000-55d0c1a21000 r-xp 00002000 fd:01 1054742    /usr/bin/cat". The pathname
// is padded to a column, may contain spaces, ends in " (deleted)" for a removed file, and has
// '\n' escaped as "\012" by the kernel; anonymous mappings have none.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace profcollect {

struct ProcMapsEntry {
  uint64_t start = 0, end = 0;  // [start, end)
  uint64_t pgoff = 0;           // bytes
  uint32_t prot = 0;            // PROT_READ | PROT_WRITE | PROT_EXEC
  uint32_t flags = 0;           // MAP_SHARED or MAP_PRIVATE
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  std::string path;  // "" for anonymous memory; "[vdso]", "[stack]", ...

  bool executable() const;
};

// One line; nullopt if it is not a maps line.
std::optional<ProcMapsEntry> parse_proc_maps_line(std::string_view line);

// Every line of a maps file's text (lines that do not parse are left out).
std::vector<ProcMapsEntry> parse_proc_maps(std::string_view text);

// The mappings of process `pid` from /proc/PID/task/PID/maps, as perf reads them (another
// thread's view when the main thread has exited); nullopt if the process is gone or its maps
// cannot be read.
std::optional<std::vector<ProcMapsEntry>> read_proc_maps(pid_t pid);

}  // namespace profcollect
