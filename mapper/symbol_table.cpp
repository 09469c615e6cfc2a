#include "mapper/symbol_table.h"

#include <elf.h>

#include <algorithm>
#include <iterator>

#include "mapper/debug_file_locator.h"
#include "mapper/eh_frame_ranges.h"
#include "mapper/elf_symbols.h"
#include "mapper/function_discovery.h"
#include "mapper/plt_symbols.h"

namespace profcollect {

const char* to_string(SymbolSource source) {
  switch (source) {
    case SymbolSource::Symtab:
      return "symtab";
    case SymbolSource::DebugFile:
      return "debug file";
    case SymbolSource::Dynsym:
      return "dynsym";
    case SymbolSource::None:
      return "none";
  }
  return "none";
}

SymbolTable SymbolTable::load(const ElfBinary& binary, const SymbolSearchOptions& options) {
  // The file whose symbol table names the functions. A separate debug file carries the full
  // .symtab of the unstripped binary (same section headers, contents NOBITS), so BOLT's
  // counting of local names comes out as it would on the unstripped binary.
  std::shared_ptr<const ElfBinary> debug_file;
  const ElfBinary* symbol_file = &binary;
  SymbolTableKind kind = SymbolTableKind::Static;
  SymbolSource source = SymbolSource::None;
  if (has_symbol_table(binary, SymbolTableKind::Static)) {
    source = SymbolSource::Symtab;
  } else if (auto found = locate_debug_file(binary, options.debug_dirs, [](const ElfBinary& f) {
               return has_symbol_table(f, SymbolTableKind::Static);
             })) {
    debug_file = found->elf;
    symbol_file = debug_file.get();
    source = SymbolSource::DebugFile;
  } else if (has_symbol_table(binary, SymbolTableKind::Dynamic)) {
    kind = SymbolTableKind::Dynamic;
    source = SymbolSource::Dynsym;
  }

  std::vector<ElfSymbol> symbols;
  if (source != SymbolSource::None) symbols = read_symbols(*symbol_file, kind);
  // Code and PLT always from the binary itself: a debug file has no section contents. An
  // ET_REL file's .eh_frame (if any) is not relocated: its FDEs name no address, so none.
  const std::vector<CodeRange> fdes =
      binary.elf_type() == ET_REL ? std::vector<CodeRange>() : read_fde_ranges(binary);
  const PltLayout plt = read_plt(binary);

  DiscoveryInput input;
  input.machine = binary.machine();
  input.symbols = &symbols;
  input.sections = &symbol_file->sections();
  input.fdes = &fdes;
  input.plt = &plt;
  return from_functions(discover_functions(input), source,
                        source == SymbolSource::None ? std::string() : symbol_file->path());
}

SymbolTable SymbolTable::from_functions(std::vector<FunctionSymbol> functions, SymbolSource source,
                                        std::string source_path) {
  SymbolTable table;
  table.functions_ = std::move(functions);
  std::stable_sort(
      table.functions_.begin(), table.functions_.end(),
      [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.addr < b.addr; });
  table.source_ = source;
  table.source_path_ = std::move(source_path);
  return table;
}

const FunctionSymbol* SymbolTable::find(uint64_t vaddr) const { return find_run(vaddr).function; }

SymbolTable::FoundRun SymbolTable::find_run(uint64_t vaddr) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), vaddr,
                             [](uint64_t a, const FunctionSymbol& f) { return a < f.addr; });
  if (it == functions_.begin()) return {nullptr, vaddr, vaddr + 1};
  const FunctionSymbol& f = *std::prev(it);
  const uint64_t extent = std::max(f.max_size, f.size);
  if (vaddr - f.addr >= extent) return {nullptr, vaddr, vaddr + 1};
  uint64_t end = f.addr + extent < f.addr ? UINT64_MAX : f.addr + extent;
  if (it != functions_.end()) end = std::min(end, it->addr);
  return {&f, f.addr, end};
}

}  // namespace profcollect
