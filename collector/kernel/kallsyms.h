// The running kernel's symbols and modules as it publishes them: /proc/kallsyms ("ADDRESS TYPE
// NAME [MODULE]" per line, addresses zeroed when kernel.kptr_restrict hides them) and
// /proc/modules ("NAME SIZE REFS DEPS STATE ADDRESS ..."). Text symbols only (t/T, w/W): they
// are what a sample can land in. Parsed from text so tests give their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/kernel_function_summary.h"

namespace profcollect {

struct KallsymsTable {
  std::vector<KernelSymbol> functions;  // text symbols, sorted by address
  // The kernel image's reference symbols at run time (KASLR slides them all alike).
  std::optional<uint64_t> text, stext, etext;
  // Every address read as zero: kernel.kptr_restrict hides them from this process.
  bool hidden = false;
};

KallsymsTable parse_kallsyms(std::string_view text);
// Throws SettingError when the file cannot be read.
KallsymsTable read_kallsyms(const std::string& path = "/proc/kallsyms");

struct LoadedModule {
  std::string name;
  uint64_t address = 0;  // start of its memory (0 when hidden)
  uint64_t size = 0;
};

std::vector<LoadedModule> parse_proc_modules(std::string_view text);
// An unreadable file is no module (a kernel built without module support has none).
std::vector<LoadedModule> read_proc_modules(const std::string& path = "/proc/modules");

}  // namespace profcollect
