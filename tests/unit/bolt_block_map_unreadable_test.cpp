// BoltBlockMap on a function whose section libelf will not give bytes for: the function is not
// simple (no blocks), and nothing is decoded. The binary is the hand-made fuzz regression input
// (tests/fuzz/make_regressions.py: an SHT_RELA section with SHF_EXECINSTR whose size is not a
// multiple of its entries, holding the FUNC symbol "bad").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "mapper/bolt_block_map.h"
#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"

namespace profcollect {
namespace {

const std::string kBinary = std::string(PROFCOLLECT_SOURCE_DIR) +
                            "/tests/fuzz/regressions/elf_binary_fuzz/unreadable_executable_section";

TEST(BoltBlockMapUnreadable, AFunctionInASectionWithoutBytesIsNotSimple) {
  auto elf = ElfBinary::open(kBinary);
  const ElfSection* badx = elf->section_by_name(".badx");
  ASSERT_NE(badx, nullptr);
  ASSERT_TRUE(badx->executable());
  EXPECT_TRUE(elf->section_bytes(*badx).empty()) << "libelf refuses this section's data";

  SymbolSearchOptions options;
  options.debug_dirs = {};
  const SymbolTable table = SymbolTable::load(*elf, options);
  const auto& functions = table.functions();
  auto bad = std::find_if(functions.begin(), functions.end(),
                          [](const FunctionSymbol& f) { return f.name == "bad"; });
  auto main = std::find_if(functions.begin(), functions.end(),
                           [](const FunctionSymbol& f) { return f.name == "main"; });
  ASSERT_NE(bad, functions.end());
  ASSERT_NE(main, functions.end());

  BoltBlockMap blocks(*elf);
  EXPECT_FALSE(blocks.blocks(*bad).simple);
  EXPECT_TRUE(blocks.blocks(*bad).blocks.empty());
  // The readable function beside it still decodes: push, mov, nop, nop, pop, ret is one block.
  const BoltFunctionBlocks& ok = blocks.blocks(*main);
  EXPECT_TRUE(ok.simple);
  ASSERT_EQ(ok.blocks.size(), 1u);
  EXPECT_EQ(ok.return_offsets, (std::vector<uint64_t>{7}));
}

}  // namespace
}  // namespace profcollect
