// The addresses an ET_REL file's sections are given (mapper/relocatable_layout.h): allocated
// sections with contents in header order, each aligned, from kRelocatableBase; the rest keep 0.
#include "mapper/relocatable_layout.h"

#include <gtest/gtest.h>

#include "mapper/elf_binary.h"

namespace profcollect {
namespace {

ElfSection section(uint32_t index, uint64_t size, uint64_t align, bool allocated) {
  ElfSection s;
  s.index = index;
  s.size = size;
  s.align = align;
  s.flags = allocated ? 0x2 : 0;
  return s;
}

TEST(RelocatableLayout, AllocatedSectionsFollowEachOtherAligned) {
  std::vector<ElfSection> sections = {section(0, 0, 0, false),     section(1, 0x24, 4, true),
                                      section(2, 0x385, 16, true), section(3, 0x498, 8, false),
                                      section(4, 0, 16, true),     section(5, 0x20, 8, true),
                                      section(6, 0x108, 0, true)};
  place_relocatable_sections(sections);
  EXPECT_EQ(sections[0].addr, 0u);
  EXPECT_EQ(sections[1].addr, kRelocatableBase);
  EXPECT_EQ(sections[2].addr, kRelocatableBase + 0x30);   // 0x24 rounded up to 16
  EXPECT_EQ(sections[3].addr, 0u);                        // not allocated (relocations)
  EXPECT_EQ(sections[4].addr, 0u);                        // empty
  EXPECT_EQ(sections[5].addr, kRelocatableBase + 0x3b8);  // 0x30 + 0x385 rounded up to 8
  EXPECT_EQ(sections[6].addr, kRelocatableBase + 0x3d8);  // alignment 0: none
}

TEST(RelocatableLayout, DamagedSizesAndAlignmentsNeitherWrapNorOverlap) {
  std::vector<ElfSection> sections = {section(0, 0, 0, false), section(1, 0x10, 3, true),
                                      section(2, UINT64_MAX - 0x100, 1, true),
                                      section(3, 0x10, 1, true)};
  place_relocatable_sections(sections);
  EXPECT_EQ(sections[1].addr, kRelocatableBase);  // alignment 3 (not a power of two): 1
  EXPECT_EQ(sections[2].addr, 0u);                // would run past the address space: unplaced
  EXPECT_EQ(sections[3].addr, 0u);
}

}  // namespace
}  // namespace profcollect
