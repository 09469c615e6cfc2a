// What kind of image a mapped file is, decided once from what the records say about it. Every
// part of the pipeline asks this instead of testing path strings, and each kind has its own way
// of turning a runtime address into an address in the image (mapper/image_translator.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mapper/process_table.h"

namespace profcollect {

enum class ImageKind : uint8_t {
  UserFile,      // an ELF file mapped by a process: the exec-segment rule applies
  Kernel,        // the kernel image ([kernel.kallsyms], [guest.kernel.kallsyms])
  KernelModule,  // a kernel module (ET_REL, no PT_LOAD), mapped by the kernel's own records
  Anonymous,     // anonymous memory, JIT code, heap, stack, memfd, SysV shm, perf-PID.map
  Special,       // other kernel-provided user mappings: [vdso], [vsyscall], [uprobes]
};

// Anonymous memory or JIT code, by the names perf and the kernel give it.
bool is_anonymous_path(std::string_view path);

// Memory perf names "/tmp/perf-PID.map" when it is executable, whether or not that file exists
// (perf's map__new): anonymous memory ("//anon", "/dev/zero", "/anon_hugepage"), the stack, the
// heap and SysV shared memory. Samples there are counted per process under that name.
bool is_perf_map_memory(std::string_view path);
std::string perf_map_name(uint32_t pid);

ImageKind classify_image(const Dso& dso);

// A kernel module's name as the kernel and perf spell it: the file name without ".ko" and what
// follows, '-' as '_' ("/lib/modules/6.1.0/kernel/fs/fuse/fuse.ko" and "[fuse]": "fuse").
std::string module_name(std::string_view path);

// perf script's dso column for a mapped file: "[kernel.kallsyms]", "[module]", "[vdso]", a path.
std::string dso_display_name(const Dso& dso);

}  // namespace profcollect
