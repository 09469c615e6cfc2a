#include "mapper/elf_symbols.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

namespace profcollect {

namespace {

const ElfSection* find_table(const ElfBinary& binary, SymbolTableKind kind) {
  const uint32_t type = kind == SymbolTableKind::Static ? SHT_SYMTAB : SHT_DYNSYM;
  for (const ElfSection& section : binary.sections()) {
    if (section.type == type) return &section;
  }
  return nullptr;
}

// The SHT_SYMTAB_SHNDX section that extends `table` (for files with more than 0xff00 sections).
Elf_Data* find_extended_indices(const ElfBinary& binary, const ElfSection& table) {
  for (const ElfSection& section : binary.sections()) {
    if (section.type == SHT_SYMTAB_SHNDX && section.link == table.index) {
      return elf_getdata(elf_getscn(binary.elf(), section.index), nullptr);
    }
  }
  return nullptr;
}

template <typename Visit>
void for_each_symbol(const ElfBinary& binary, const ElfSection& table, Visit visit) {
  Elf_Scn* scn = elf_getscn(binary.elf(), table.index);
  Elf_Data* data = scn ? elf_getdata(scn, nullptr) : nullptr;
  if (data == nullptr || table.entsize == 0) return;
  Elf_Data* xindex = find_extended_indices(binary, table);
  const size_t count = table.size / table.entsize;
  for (size_t i = 1; i < count; ++i) {
    GElf_Sym sym;
    Elf32_Word extended = 0;
    if (gelf_getsymshndx(data, xindex, static_cast<int>(i), &sym, &extended) == nullptr) break;
    const char* name = elf_strptr(binary.elf(), table.link, sym.st_name);
    ElfSymbol out;
    out.name = name ? name : "";
    out.value = sym.st_value;
    out.size = sym.st_size;
    out.type = GELF_ST_TYPE(sym.st_info);
    out.binding = GELF_ST_BIND(sym.st_info);
    out.shndx = sym.st_shndx == SHN_XINDEX ? extended : sym.st_shndx;
    visit(i, std::move(out));
  }
}

}  // namespace

bool has_symbol_table(const ElfBinary& binary, SymbolTableKind kind) {
  const ElfSection* table = find_table(binary, kind);
  return table != nullptr && table->has_file_data() && table->entsize != 0 &&
         table->size / table->entsize > 1;
}

std::vector<ElfSymbol> read_symbols(const ElfBinary& binary, SymbolTableKind kind) {
  std::vector<ElfSymbol> symbols;
  const ElfSection* table = find_table(binary, kind);
  if (table == nullptr || !table->has_file_data()) return symbols;
  const bool relocatable = binary.elf_type() == ET_REL;
  const std::vector<ElfSection>& sections = binary.sections();
  for_each_symbol(binary, *table, [&](size_t, ElfSymbol&& sym) {
    if (relocatable && sym.shndx != SHN_UNDEF && sym.shndx < SHN_LORESERVE &&
        sym.shndx < sections.size() && sections[sym.shndx].allocated()) {
      sym.value += sections[sym.shndx].addr;
    }
    symbols.push_back(std::move(sym));
  });
  return symbols;
}

std::vector<std::string> read_dynamic_symbol_names(const ElfBinary& binary) {
  std::vector<std::string> names(1);  // index 0: the null symbol
  const ElfSection* table = find_table(binary, SymbolTableKind::Dynamic);
  if (table == nullptr || !table->has_file_data()) return names;
  for_each_symbol(binary, *table, [&](size_t index, ElfSymbol&& sym) {
    names.resize(index + 1);
    names[index] = std::move(sym.name);
  });
  return names;
}

}  // namespace profcollect
