// BOLT 19's naming and boundary rules on small synthetic symbol tables. The expectations follow
// from the rules as perf2bolt shows them (see mapper/symbol_table.h; the integration test
// symbol_table_vs_perf2bolt_test checks the same rules against perf2bolt on real binaries).
#include "mapper/function_discovery.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace profcollect {
namespace {

ElfSection section(uint32_t index, const std::string& name, uint64_t addr, uint64_t size,
                   uint64_t flags) {
  ElfSection s;
  s.index = index;
  s.name = name;
  s.addr = addr;
  s.size = size;
  s.flags = flags;
  s.type = SHT_PROGBITS;
  return s;
}

constexpr uint64_t kAlloc = SHF_ALLOC, kExec = SHF_ALLOC | SHF_EXECINSTR;

// 0 null, 1 .rodata (below text, as lld lays it out), 2 .plt, 3 .text, 4 .data, 5 .comment
std::vector<ElfSection> standard_sections() {
  return {section(0, "", 0, 0, 0),
          section(1, ".rodata", 0x600, 0x100, kAlloc),
          section(2, ".plt", 0x1000, 0x30, kExec),
          section(3, ".text", 0x1100, 0x400, kExec),
          section(4, ".data", 0x3000, 0x100, kAlloc | SHF_WRITE),
          section(5, ".comment", 0, 0x40, 0)};
}

ElfSymbol sym(const std::string& name, uint64_t value, uint64_t size, uint8_t type, uint8_t binding,
              uint32_t shndx) {
  ElfSymbol s;
  s.name = name;
  s.value = value;
  s.size = size;
  s.type = type;
  s.binding = binding;
  s.shndx = shndx;
  return s;
}

ElfSymbol file(const std::string& name) { return sym(name, 0, 0, STT_FILE, STB_LOCAL, SHN_ABS); }
ElfSymbol local_func(const std::string& n, uint64_t a, uint64_t size, uint32_t shndx = 3) {
  return sym(n, a, size, STT_FUNC, STB_LOCAL, shndx);
}
ElfSymbol global_func(const std::string& n, uint64_t a, uint64_t size, uint32_t shndx = 3) {
  return sym(n, a, size, STT_FUNC, STB_GLOBAL, shndx);
}

struct Discovered {
  std::vector<FunctionSymbol> functions;
  std::map<std::string, const FunctionSymbol*> by_name;
  const FunctionSymbol* at(uint64_t addr) const {
    for (const FunctionSymbol& f : functions) {
      if (f.addr == addr) return &f;
    }
    return nullptr;
  }
};

Discovered discover(const std::vector<ElfSymbol>& symbols,
                    const std::vector<ElfSection>& sections = standard_sections(),
                    const std::vector<CodeRange>* fdes = nullptr, const PltLayout* plt = nullptr,
                    uint16_t machine = EM_X86_64) {
  DiscoveryInput in;
  in.machine = machine;
  in.symbols = &symbols;
  in.sections = &sections;
  in.fdes = fdes;
  in.plt = plt;
  Discovered d;
  d.functions = discover_functions(in);
  for (const FunctionSymbol& f : d.functions) d.by_name.emplace(f.name, &f);
  return d;
}

TEST(FunctionDiscovery, LocalNamesCountDataObjectsOfTheSameName) {
  // The reference example: a static data object `step` below two static functions `step`.
  Discovered d =
      discover({file("table.c"), sym("step", 0x620, 32, STT_OBJECT, STB_LOCAL, 1), file("b.c"),
                local_func("step", 0x1100, 0x40), file("c.c"), local_func("step", 0x1200, 0x40)});
  ASSERT_NE(d.at(0x1100), nullptr);
  ASSERT_NE(d.at(0x1200), nullptr);
  EXPECT_EQ(d.at(0x1100)->name, "step/2");
  EXPECT_EQ(d.at(0x1200)->name, "step/3");
  EXPECT_TRUE(d.at(0x1100)->is_local);
  EXPECT_EQ(d.at(0x1100)->raw_name, "step");
  EXPECT_EQ(d.by_name.count("step/1"), 0u) << "a data object is never a function";
}

TEST(FunctionDiscovery, CountingIsByAddressNotSymbolTableOrder) {
  Discovered d =
      discover({local_func("step", 0x1200, 0x40), sym("step", 0x3010, 8, STT_OBJECT, STB_LOCAL, 4),
                local_func("step", 0x1100, 0x40)});
  EXPECT_EQ(d.at(0x1100)->name, "step/1");
  EXPECT_EQ(d.at(0x1200)->name, "step/2");
}

TEST(FunctionDiscovery, WhatDoesNotCount) {
  // Address 0, undefined symbols, non-allocated sections, FILE symbols of that name: skipped.
  Discovered d = discover({file("step"), sym("step", 0, 0, STT_NOTYPE, STB_LOCAL, 3),
                           sym("step", 0x10, 4, STT_OBJECT, STB_LOCAL, 5),
                           sym("step", 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF),
                           local_func("step", 0x1100, 0x40)});
  EXPECT_EQ(d.at(0x1100)->name, "step/1");
}

TEST(FunctionDiscovery, NotypeAndTlsLocalsCountToo) {
  Discovered d =
      discover({sym("x", 0x640, 0, STT_NOTYPE, STB_LOCAL, 1),
                sym("x", 0x650, 4, STT_TLS, STB_LOCAL, 1), local_func("x", 0x1100, 0x40)});
  EXPECT_EQ(d.at(0x1100)->name, "x/3");
}

TEST(FunctionDiscovery, GlobalsKeepTheirNames) {
  Discovered d = discover(
      {global_func("main", 0x1100, 0x40), sym("weakling", 0x1180, 0x20, STT_FUNC, STB_WEAK, 3)});
  EXPECT_EQ(d.at(0x1100)->name, "main");
  EXPECT_FALSE(d.at(0x1100)->is_local);
  EXPECT_EQ(d.at(0x1180)->name, "weakling");
}

TEST(FunctionDiscovery, AliasesTakeTheFirstNameInSymbolTableOrder) {
  Discovered d =
      discover({local_func("lfunc", 0x1100, 0x40), global_func("galias", 0x1200, 0x40),
                global_func("gfunc", 0x1200, 0x40), global_func("lfunc_pub", 0x1100, 0x40)});
  ASSERT_EQ(d.functions.size(), 2u);
  EXPECT_EQ(d.at(0x1100)->name, "lfunc/1");
  EXPECT_EQ(d.at(0x1100)->aliases, std::vector<std::string>{"lfunc_pub"});
  EXPECT_EQ(d.at(0x1200)->name, "galias");
  EXPECT_EQ(d.at(0x1200)->aliases, std::vector<std::string>{"gfunc"});
}

TEST(FunctionDiscovery, FuncBeatsOtherTypesAtOneAddress) {
  // A NOTYPE label and an IFUNC listed first at the function's address do not name it.
  Discovered d = discover({sym("label", 0x1100, 0, STT_NOTYPE, STB_GLOBAL, 3),
                           sym("ifn", 0x1100, 8, STT_GNU_IFUNC, STB_GLOBAL, 3),
                           local_func("resolver", 0x1100, 8)});
  ASSERT_NE(d.at(0x1100), nullptr);
  EXPECT_EQ(d.at(0x1100)->name, "resolver/1");
}

TEST(FunctionDiscovery, AlternativeNameWithFileSymbol) {
  Discovered d = discover({file("a.c"), local_func("helper", 0x1100, 0x40)});
  EXPECT_EQ(d.at(0x1100)->name, "helper/1");
  EXPECT_EQ(d.at(0x1100)->aliases, std::vector<std::string>{"helper/a.c/1"});
}

TEST(FunctionDiscovery, PrivateAndAnonymousNames) {
  Discovered d = discover({sym(".Lfoo", 0x1100, 0x40, STT_FUNC, STB_LOCAL, 3),
                           sym("", 0x1200, 0x40, STT_FUNC, STB_LOCAL, 3),
                           sym("", 0x1300, 0x40, STT_FUNC, STB_GLOBAL, 3)});
  EXPECT_EQ(d.at(0x1100)->name, "PG.Lfoo/1");
  EXPECT_EQ(d.at(0x1200)->name, "ANONYMOUS.0");
  EXPECT_EQ(d.at(0x1300)->name, "ANONYMOUS.1");
}

TEST(FunctionDiscovery, SectionSymbolsAreNamedAfterTheirSection) {
  // An unnamed section symbol at the start of .text counts as a local ".text".
  Discovered d =
      discover({sym("", 0x1100, 0, STT_SECTION, STB_LOCAL, 3), local_func(".text", 0x1200, 0x40)});
  EXPECT_EQ(d.at(0x1200)->name, ".text/2");
  // Alone at its address it is a function of that name.
  EXPECT_EQ(d.at(0x1100)->name, ".text/1");
}

TEST(FunctionDiscovery, DataAndSectionEndsAreNotFunctions) {
  Discovered d = discover({sym("table", 0x600, 0x10, STT_OBJECT, STB_GLOBAL, 1),
                           sym("__etext", 0x1500, 0, STT_NOTYPE, STB_GLOBAL, 3),
                           global_func("f", 0x1100, 0x40)});
  EXPECT_EQ(d.functions.size(), 1u);
  EXPECT_EQ(d.functions[0].name, "f");
  // f reaches the end of .text: nothing after it starts a function.
  EXPECT_EQ(d.functions[0].max_size, 0x400u);
}

TEST(FunctionDiscovery, ZeroSizeAssemblyAndNotypeEntries) {
  // asm_zero: a FUNC without size; local_in_zero: its inner label; asm_notype: a global label
  // without type, the next routine.
  Discovered d = discover({sym("local_in_zero", 0x1105, 0, STT_NOTYPE, STB_LOCAL, 3),
                           global_func("asm_zero", 0x1100, 0),
                           sym("asm_notype", 0x1106, 0, STT_NOTYPE, STB_GLOBAL, 3),
                           global_func("next", 0x1120, 0x10)});
  ASSERT_EQ(d.functions.size(), 3u);
  EXPECT_EQ(d.at(0x1100)->name, "asm_zero");
  EXPECT_EQ(d.at(0x1100)->max_size, 6u);  // through its inner label, up to asm_notype
  EXPECT_EQ(d.at(0x1100)->size, 6u);      // a zero size becomes the max size
  EXPECT_EQ(d.at(0x1106)->name, "asm_notype");
  EXPECT_EQ(d.at(0x1106)->max_size, 0x1au);
  EXPECT_EQ(d.at(0x1105), nullptr);
}

TEST(FunctionDiscovery, LabelsInsideAFunctionAreNotFunctions) {
  Discovered d = discover(
      {global_func("f", 0x1100, 0x40), sym("inner", 0x1110, 0, STT_NOTYPE, STB_LOCAL, 3),
       sym("second_entry", 0x1120, 0x20, STT_FUNC, STB_GLOBAL, 3), global_func("g", 0x1180, 0x10)});
  ASSERT_EQ(d.functions.size(), 2u);
  EXPECT_EQ(d.at(0x1100)->max_size, 0x80u);  // padding up to g belongs to f
}

TEST(FunctionDiscovery, AnObjectInTextOutsideFunctionsIsAFunctionToo) {
  // BOLT only asks "executable section, not inside the previous function": the object ends f.
  Discovered d = discover({global_func("f", 0x1100, 0x20),
                           sym("table", 0x1130, 0x10, STT_OBJECT, STB_LOCAL, 3),
                           global_func("g", 0x1180, 0x10)});
  EXPECT_EQ(d.at(0x1100)->max_size, 0x30u);
  ASSERT_NE(d.at(0x1130), nullptr);
  EXPECT_EQ(d.at(0x1130)->name, "table/1");
  EXPECT_EQ(d.at(0x1130)->max_size, 0x50u);
}

TEST(FunctionDiscovery, FdeSizesAndFdeOnlyFunctions) {
  const std::vector<CodeRange> fdes = {{0x1100, 0x30}, {0x1200, 0x18}};
  Discovered d = discover({global_func("asm_fn", 0x1100, 0)}, standard_sections(), &fdes);
  EXPECT_EQ(d.at(0x1100)->size, 0x30u);
  ASSERT_NE(d.at(0x1200), nullptr);
  EXPECT_EQ(d.at(0x1200)->name, "__BOLT_FDE_FUNCat1200");
  EXPECT_EQ(d.at(0x1200)->size, 0x18u);
  EXPECT_EQ(d.at(0x1100)->max_size, 0x100u);
}

TEST(FunctionDiscovery, DuplicateGlobalMakesNoSecondFunction) {
  Discovered d = discover({global_func("dup", 0x1100, 0x40), global_func("dup", 0x1200, 0x40)});
  ASSERT_EQ(d.functions.size(), 1u);
  EXPECT_EQ(d.functions[0].addr, 0x1100u);
}

TEST(FunctionDiscovery, PltEntriesAndPseudoFunction) {
  PltLayout plt;
  plt.sections.push_back(PltSection{".plt", 0x1000, 0x30, 16});
  plt.entries.push_back(PltEntry{0x1010, 16, "cos"});
  plt.entries.push_back(PltEntry{0x1020, 16, "sin"});
  // A section symbol of .plt does not count or name anything.
  Discovered d =
      discover({sym("", 0x1000, 0, STT_SECTION, STB_LOCAL, 2), global_func("main", 0x1100, 0x40)},
               standard_sections(), nullptr, &plt);
  ASSERT_NE(d.at(0x1000), nullptr);
  EXPECT_EQ(d.at(0x1000)->name, "__BOLT_PSEUDO_.plt");
  EXPECT_EQ(d.at(0x1010)->name, "cos@PLT");
  EXPECT_EQ(d.at(0x1010)->raw_name, "cos");
  EXPECT_TRUE(d.at(0x1010)->is_plt);
  EXPECT_EQ(d.at(0x1010)->max_size, 0x10u);
  EXPECT_EQ(d.at(0x1020)->name, "sin@PLT");
  EXPECT_EQ(d.at(0x1020)->max_size, 0x10u);  // to the end of .plt
}

TEST(FunctionDiscovery, AArch64MappingSymbolsAreIgnored) {
  Discovered d =
      discover({sym("$x", 0x1100, 0, STT_NOTYPE, STB_LOCAL, 3), local_func("f", 0x1100, 0x20),
                sym("$d", 0x1120, 0, STT_NOTYPE, STB_LOCAL, 3),
                sym("$x.1", 0x1140, 0, STT_NOTYPE, STB_LOCAL, 3), global_func("g", 0x1180, 0x10)},
               standard_sections(), nullptr, nullptr, EM_AARCH64);
  ASSERT_EQ(d.functions.size(), 2u);
  EXPECT_EQ(d.at(0x1100)->name, "f/1");
  EXPECT_EQ(d.at(0x1100)->max_size, 0x80u);
}

TEST(SymbolTableFind, UsesTheMaxSize) {
  FunctionSymbol f;
  f.addr = 0x1100;
  f.size = 0x20;
  f.max_size = 0x40;
  f.name = "f";
  FunctionSymbol g = f;
  g.addr = 0x1200;
  g.name = "g";
  SymbolTable table = SymbolTable::from_functions({g, f}, SymbolSource::Symtab, "x");
  EXPECT_EQ(table.find(0x10ff), nullptr);
  EXPECT_EQ(table.find(0x1100)->name, "f");
  EXPECT_EQ(table.find(0x1130)->name, "f");  // padding after f
  EXPECT_EQ(table.find(0x1140), nullptr);
  EXPECT_EQ(table.find(0x123f)->name, "g");
  EXPECT_EQ(table.find(0x1240), nullptr);
}

}  // namespace
}  // namespace profcollect
