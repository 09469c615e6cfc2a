// The binary a command profiles: its ELF model, executable segments and BOLT-named symbols,
// loaded once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"
#include "mapper/exec_segment_map.h"
#include "mapper/symbol_table.h"

namespace profcollect {

struct TargetBinary {
  std::shared_ptr<const ElfBinary> elf;
  ExecSegmentMap segments;
  SymbolTable symbols;

  // Throws ElfError naming the file.
  static TargetBinary load(const std::string& path, const std::vector<std::string>& debug_dirs);
};

}  // namespace profcollect
