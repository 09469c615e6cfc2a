#include "collector/cli/target_binary.h"

namespace profcollect {

TargetBinary TargetBinary::load(const std::string& path, const std::vector<std::string>& debug_dirs) {
  TargetBinary t;
  t.elf = ElfBinary::open(path);
  t.segments = ExecSegmentMap(t.elf->load_segments());
  SymbolSearchOptions options;
  for (const auto& d : debug_dirs) options.debug_dirs.insert(options.debug_dirs.begin(), d);
  t.symbols = SymbolTable::load(*t.elf, options);
  return t;
}

}  // namespace profcollect
