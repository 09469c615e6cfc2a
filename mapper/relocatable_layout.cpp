#include "mapper/relocatable_layout.h"

#include "mapper/elf_binary.h"

namespace profcollect {

void place_relocatable_sections(std::vector<ElfSection>& sections) {
  uint64_t next = kRelocatableBase;
  for (ElfSection& section : sections) {
    if (section.index == 0 || !section.allocated() || section.size == 0) continue;
    // sh_addralign is 0 or a power of two; anything else (a damaged file) counts as 1.
    const uint64_t align =
        section.align != 0 && (section.align & (section.align - 1)) == 0 ? section.align : 1;
    // Sizes come from the file: a sum past the address space leaves the rest unplaced (at 0).
    const uint64_t at = (next + align - 1) & ~(align - 1);
    if (at < next || section.size > UINT64_MAX - at) break;
    section.addr = at;
    next = at + section.size;
  }
}

}  // namespace profcollect
