// InstructionMap on symbol tables that do not fit their sections: a sweep never decodes beyond
// the bytes of its section, whatever the next symbol's address says.
#include <elf.h>
#include <gtest/gtest.h>

#include <vector>

#include "mapper/instruction_map.h"

namespace profcollect {
namespace {

// push rbp | mov rbp, rsp | pop rbp | ret, at 0x1000.
const uint8_t kCode[] = {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3};

std::vector<uint64_t> every_instruction(const InstructionMap& map) {
  std::vector<uint64_t> starts;
  map.for_each(0, UINT64_MAX, [&](const Instruction& i) { starts.push_back(i.address); });
  return starts;
}

TEST(InstructionMapBounds, ASweepEndsAtItsSectionWhenTheNextSymbolLiesFarBeyond) {
  std::vector<CodeSection> sections;
  // The second symbol claims the section but lies 1 GiB past its end (a damaged symbol table):
  // the sweep from the first must stop at the section's last byte, not read on to it.
  sections.push_back(CodeSection{0x1000, kCode, {0x1000, 0x1000 + (uint64_t{1} << 30)}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  EXPECT_EQ(every_instruction(map), (std::vector<uint64_t>{0x1000, 0x1001, 0x1004, 0x1005}));
  EXPECT_EQ(map.at(0x1005)->kind, InstructionKind::Return);
  EXPECT_FALSE(map.is_code(0x1006));
  EXPECT_FALSE(map.is_code(0x1000 + (uint64_t{1} << 30)));
}

TEST(InstructionMapBounds, ASectionReachingPastTheTopOfTheAddressSpaceHasNoCode) {
  std::vector<CodeSection> sections;
  sections.push_back(CodeSection{UINT64_MAX - 2, kCode, {UINT64_MAX - 2}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  EXPECT_TRUE(every_instruction(map).empty());
  EXPECT_FALSE(map.is_code(UINT64_MAX - 2));
}

}  // namespace
}  // namespace profcollect
