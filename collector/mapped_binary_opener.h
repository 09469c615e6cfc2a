// Opens the file a process mapped, the way it was mapped: through /proc/PID/map_files/<range>
// while the process lives (works for deleted or replaced binaries), then /proc/PID/root/<path>
// (containers), then the path itself -- and takes a file only if its build-id is the one the
// MMAP2 record carried.
#pragma once

#include <optional>
#include <string>

#include "mapper/process_table.h"
#include "output/binary_profiles.h"

namespace profcollect {

std::optional<OpenedBinary> open_mapped_binary(uint32_t pid, const Mapping& mapping, const Dso& dso,
                                               std::string& why);

}  // namespace profcollect
