// The functions of one binary, named as BOLT names them, for address -> (function, offset).
//
// Naming (BOLT 19, checked against perf2bolt): a global symbol keeps its name; a local
// (STB_LOCAL) symbol is "name/N", N counting the local symbols of that name -- data objects
// included -- in order of address, from 1. PLT entries are "callee@PLT". Spaces and
// backslashes are escaped with a backslash when written (FdataWriter does that, not this class).
//
// Symbols come from .symtab, else from separate debug info (build-id under the debug
// directories, then .gnu_debuglink), else from .dynsym.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct FunctionSymbol {
  uint64_t addr = 0;
  uint64_t size = 0;
  std::string name;         // BOLT's name ("main", "step/2", "cos@PLT")
  std::string raw_name;     // the symbol-table name ("step", "cos")
  bool is_local = false;
  bool is_plt = false;
};

// Where the symbols came from, for report and error messages.
enum class SymbolSource { Symtab, DebugFile, Dynsym, None };

struct SymbolSearchOptions {
  // Searched in order for "<dir>/.build-id/xx/yyyy.debug" and debuglink files.
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

class SymbolTable {
 public:
  static SymbolTable load(const ElfBinary& binary, const SymbolSearchOptions& options = {});

  // The function whose [addr, addr + max(size, 1)) holds vaddr, or nullptr. Where symbols
  // overlap (aliases), the one BOLT picks.
  const FunctionSymbol* find(uint64_t vaddr) const;

  const std::vector<FunctionSymbol>& functions() const { return functions_; }  // sorted by addr
  SymbolSource source() const { return source_; }
  const std::string& source_path() const { return source_path_; }  // file the symbols came from

 private:
  std::vector<FunctionSymbol> functions_;
  SymbolSource source_ = SymbolSource::None;
  std::string source_path_;
};

}  // namespace profcollect
