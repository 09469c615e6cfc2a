// The running kernel's build-id, from /sys/kernel/notes: the kernel's own ELF note section
// (.notes) as raw bytes, a list of notes each laid out as Elf64_Nhdr (namesz, descsz, type, four
// bytes each) then the name and the descriptor, each padded to four bytes. The build-id is the
// note of name "GNU" and type NT_GNU_BUILD_ID (3), as readelf -n shows it for the vmlinux.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "record/build_id.h"

namespace profcollect {

inline constexpr const char* kRunningKernelNotes = "/sys/kernel/notes";

// The GNU build-id note of a note list; nullopt when it holds none. Every size is checked
// against what remains: a cut or damaged list ends the search.
std::optional<BuildId> build_id_from_notes(std::string_view notes);

// From the file (by default the running kernel's); nullopt when it cannot be read or holds no
// build-id.
std::optional<BuildId> read_kernel_build_id(const std::string& notes_path = kRunningKernelNotes);

}  // namespace profcollect
