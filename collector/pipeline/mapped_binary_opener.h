// Opens the file a process mapped, the way it was mapped: through /proc/PID/map_files/<range>
// while the process lives (works for deleted or replaced binaries), then /proc/PID/root/<path>
// (containers), then the path itself -- and takes a file only if its build-id is the one the
// MMAP2 record carried.
#pragma once

#include <memory>
#include <string>

#include "mapper/elf_binary.h"
#include "mapper/loaded_image.h"
#include "mapper/process_table.h"

namespace profcollect {

enum class OpenProblem : uint8_t {
  None,
  Unreadable,       // no candidate could be opened as an ELF file (gone, not ELF, no access)
  BuildIdMismatch,  // a file was there, with another build-id than the mapped one
};

struct OpenResult {
  std::shared_ptr<const ElfBinary> elf;  // null on a problem
  BinaryIdentity identity;
  OpenProblem problem = OpenProblem::None;
  std::string why;
};

OpenResult open_mapped_binary(uint32_t pid, const Mapping& mapping, const Dso& dso);

}  // namespace profcollect
