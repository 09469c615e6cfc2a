// The raw entries of one ELF symbol table (.symtab or .dynsym), in file order: what
// SymbolTable's naming rules start from. File order matters: BOLT breaks ties between symbols
// at one address by it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;     // STT_*
  uint8_t binding = 0;  // STB_*
  uint32_t shndx = 0;   // section index, or SHN_UNDEF / SHN_ABS / SHN_COMMON (SHN_XINDEX resolved)
};

enum class SymbolTableKind { Static, Dynamic };  // .symtab (SHT_SYMTAB), .dynsym (SHT_DYNSYM)

// Whether the file has a symbol table of that kind with at least one entry after the null one.
bool has_symbol_table(const ElfBinary& binary, SymbolTableKind kind);

// Every entry but the null entry at index 0, in file order. Empty when there is no such table.
// In an ET_REL file a symbol defined in an allocated section gets that section's address
// (mapper/relocatable_layout.h) added to its st_value, an offset into the section.
std::vector<ElfSymbol> read_symbols(const ElfBinary& binary, SymbolTableKind kind);

// The names of .dynsym's entries by index, as dynamic relocations refer to them (index 0 is
// the null entry).
std::vector<std::string> read_dynamic_symbol_names(const ElfBinary& binary);

}  // namespace profcollect
