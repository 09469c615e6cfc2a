// SymbolTable::find_run: the branch counters keep the run it gives and answer find() for every
// address in it without asking again, so every address of the run must get find()'s function.
// Checked on the test program's own symbol table (thousands of functions, local duplicates,
// PLT entries) and on a hand-made table where functions overlap (a symbol's size reaching past
// the next one's start, as BOLT's max_size extends a function to the next).
#include <gtest/gtest.h>

#include <random>

#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"
#include "tests/unit/self_executable.h"

namespace profcollect {
namespace {

void expect_runs_agree_with_find(const SymbolTable& table, uint64_t from, uint64_t to,
                                 unsigned seed) {
  std::mt19937_64 rng(seed);
  size_t found = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t a = from + rng() % (to - from);
    const SymbolTable::FoundRun run = table.find_run(a);
    ASSERT_EQ(run.function, table.find(a)) << std::hex << a;
    ASSERT_LE(run.begin, a);
    ASSERT_LT(a, run.end);
    found += run.function != nullptr;
    for (uint64_t b : {run.begin, run.end - 1, run.begin + rng() % (run.end - run.begin)})
      ASSERT_EQ(table.find(b), run.function) << std::hex << "run of 0x" << a << ": 0x" << b;
  }
  EXPECT_GT(found, 1000u);
}

TEST(SymbolTableFindRun, EveryAddressOfARunFindsItsFunctionInTheTestProgram) {
  const auto elf = ElfBinary::open(self_path());
  const SymbolTable table = SymbolTable::load(*elf);
  ASSERT_FALSE(table.functions().empty());
  const uint64_t first = table.functions().front().addr;
  const uint64_t last = table.functions().back().addr + table.functions().back().size;
  expect_runs_agree_with_find(table, first - 0x100, last + 0x100, 1);
}

TEST(SymbolTableFindRun, OverlappingFunctionsEndARunAtTheNextStart) {
  std::vector<FunctionSymbol> functions(3);
  functions[0].addr = 0x1000, functions[0].size = 0x300, functions[0].name = "long";  // to 0x1300
  functions[1].addr = 0x1100, functions[1].size = 0x40, functions[1].name = "inner";
  functions[2].addr = 0x2000, functions[2].size = 0, functions[2].max_size = 0x80;
  functions[2].name = "sized_by_max";
  const SymbolTable table = SymbolTable::from_functions(functions, SymbolSource::Symtab, "test");
  const SymbolTable::FoundRun run = table.find_run(0x1010);
  EXPECT_EQ(run.begin, 0x1000u);
  EXPECT_EQ(run.end, 0x1100u);  // "inner" starts there: find() gives it, not "long"
  EXPECT_EQ(table.find_run(0x1200).function, nullptr);  // past "inner", "long" is not found
  expect_runs_agree_with_find(table, 0xf00, 0x2200, 2);
}

}  // namespace
}  // namespace profcollect
