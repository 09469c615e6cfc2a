// MMAP2 records as tests feed them to a process table: a user process's mapping of a file.
#pragma once

#include <cstdint>
#include <string_view>

#include "record/record.h"

namespace profcollect {

// `file` must outlive the record's use (the record holds a view of it).
inline MmapRecord user_mmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                            std::string_view file, bool executable = true) {
  MmapRecord r;
  r.pid = r.tid = pid;
  r.start = start;
  r.len = len;
  r.pgoff = pgoff;
  r.filename = file;
  r.executable = executable;
  r.is_mmap2 = true;
  r.cpumode = CpuMode::User;
  return r;
}

}  // namespace profcollect
