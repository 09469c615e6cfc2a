// Finds the separate debug file of a stripped binary, in gdb's order:
//   1. <dir>/.build-id/<first byte>/<rest>.debug for each debug directory (build-id must match);
//   2. the .gnu_debuglink name next to the binary, in ".debug/" beside it, then under
//      <dir>/<binary's directory>/ for each debug directory (CRC-32 must match, and the
//      build-id too when both files have one).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

enum class DebugFileLink { BuildId, Debuglink };

struct DebugFile {
  std::shared_ptr<const ElfBinary> elf;
  DebugFileLink found_by = DebugFileLink::BuildId;
};

// The candidate paths, in search order (for error messages and tests).
std::vector<std::string> debug_file_candidates(const ElfBinary& binary,
                                               const std::vector<std::string>& debug_dirs);

// The first candidate that opens, matches the binary and satisfies `usable` (e.g. "has a
// .symtab"); nullopt when none does.
std::optional<DebugFile> locate_debug_file(const ElfBinary& binary,
                                           const std::vector<std::string>& debug_dirs,
                                           const std::function<bool(const ElfBinary&)>& usable);

// CRC-32 (the zlib/ISO-HDLC one .gnu_debuglink uses) of a whole file; nullopt if unreadable.
std::optional<uint32_t> file_crc32(const std::string& path);

}  // namespace profcollect
