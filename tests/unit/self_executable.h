// The path of the running test program: a real ELF file with symbols, DWARF and a build-id that
// unit tests read as a binary under test.
#pragma once

#include <limits.h>
#include <unistd.h>

#include <string>

namespace profcollect {

// "" when /proc/self/exe cannot be read.
inline std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace profcollect
