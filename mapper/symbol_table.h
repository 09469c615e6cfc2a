// The functions of one binary, named and bounded as BOLT 19 does, for address -> (function,
// offset). The rules (checked against perf2bolt 19; mapper/function_discovery.h has the detail):
//
// - Names: a global (non-STB_LOCAL) symbol keeps its name. A local symbol is "name/N": N
//   counts, from 1 and in address order, every local symbol of that name in an allocated
//   section -- data objects, NOTYPE labels, TLS and section symbols included, FILE symbols and
//   symbols at address 0 not. Several symbols at one address make one function named after the
//   first of them, FUNC before other types, ties in symbol-table order. gcc's "foo.cold"
//   fragments are functions of their own ("foo.cold/1"). PLT entries are "callee@PLT"; a PLT
//   section's header is "__BOLT_PSEUDO_.plt"; code only an FDE covers is
//   "__BOLT_FDE_FUNCat<hex>". Spaces and backslashes are escaped when written (FdataWriter).
// - Extent: a function reaches up to the next function, the next symbol that could not sit
//   inside it, or the end of its section, whichever comes first (BOLT's "max size"), so
//   padding after a function belongs to it.
//
// Symbols come from .symtab, else from a separate debug file (build-id under the debug
// directories, then .gnu_debuglink), else from .dynsym. PLT entries and FDEs always come from
// the binary itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct FunctionSymbol {
  uint64_t addr = 0;
  uint64_t size = 0;     // BOLT's function size: the symbol's, or its FDE's, or max_size if 0
  std::string name;      // BOLT's name ("main", "step/2", "cos@PLT")
  std::string raw_name;  // the symbol-table name ("step", "cos"); empty for FDE-only code
  bool is_local = false;
  bool is_plt = false;
  uint64_t max_size = 0;             // extent used for lookups (see above); size when left 0
  std::vector<std::string> aliases;  // BOLT's other names for the same address
};

// Where the symbols came from, for report and error messages.
enum class SymbolSource { Symtab, DebugFile, Dynsym, None };

const char* to_string(SymbolSource source);

struct SymbolSearchOptions {
  // Searched in order for "<dir>/.build-id/xx/yyyy.debug" and debuglink files.
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

class SymbolTable {
 public:
  static SymbolTable load(const ElfBinary& binary, const SymbolSearchOptions& options = {});
  // For tests and callers that already have the functions (any order, one per address).
  static SymbolTable from_functions(std::vector<FunctionSymbol> functions, SymbolSource source,
                                    std::string source_path);

  // The function BOLT attributes vaddr to: the one with the highest start <= vaddr, if vaddr
  // is within max(max_size, size); else nullptr. Allocation-free.
  const FunctionSymbol* find(uint64_t vaddr) const;
  // find()'s function for vaddr and the addresses [begin, end) around it for which find() gives
  // the same function (its extent, up to the next function's start); {nullptr, vaddr, vaddr + 1}
  // when find() gives none.
  struct FoundRun {
    const FunctionSymbol* function = nullptr;
    uint64_t begin = 0, end = 0;
  };
  FoundRun find_run(uint64_t vaddr) const;

  const std::vector<FunctionSymbol>& functions() const { return functions_; }  // sorted by addr
  SymbolSource source() const { return source_; }
  const std::string& source_path() const { return source_path_; }  // file the symbols came from

 private:
  std::vector<FunctionSymbol> functions_;
  SymbolSource source_ = SymbolSource::None;
  std::string source_path_;
};

}  // namespace profcollect
