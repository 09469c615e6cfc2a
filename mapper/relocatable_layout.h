// The addresses an ET_REL file's sections get in profcollect, for kernel modules (.ko). In a
// relocatable file every section starts at address 0 and a symbol's st_value is an offset into
// its section, so an address alone names no byte. ElfBinary gives the allocated sections the
// addresses a linker placing them in one image would: in section-header order, each at the next
// multiple of its sh_addralign, from kRelocatableBase; symbol values become section address plus
// st_value (mapper/elf_symbols.h), and DWARF is relocated against the same addresses
// (mapper/dwarf_file.h, through libdwfl). So a module's function table, its DWARF and the
// translation of its samples (mapper/image_translator.h) meet in one address space, and the
// section-relative address of any of them is the address minus its section's.
//
// The rule reads only section flags, sizes and alignments, which a separate debug file made by
// `objcopy --only-keep-debug` keeps: the .ko and its debug file get the same addresses.
#pragma once

#include <cstdint>
#include <vector>

namespace profcollect {

struct ElfSection;

// Above address 0, where BOLT's naming rules ignore symbols, and below any kernel address.
inline constexpr uint64_t kRelocatableBase = 0x10000;

// Sets `addr` of every allocated section of non-zero size (index 0 excluded) as said above.
void place_relocatable_sections(std::vector<ElfSection>& sections);

}  // namespace profcollect
