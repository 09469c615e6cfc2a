// The PLT entries of a binary, named as BOLT names them: "callee@PLT", where the callee is the
// symbol of the dynamic relocation on the GOT slot the entry jumps through.
//
// BOLT 19 reads the sections .plt (16-byte entries), .plt.sec and .plt.got (8-byte entries, 16
// when the section starts with endbr64) on x86-64, and .plt on AArch64 (entries end at their
// indirect branch). An entry whose slot has no symbol (PLT0, IRELATIVE slots of ifuncs, the
// lazy .plt half of an IBT PLT) gets no function; a PLT section with no function at its start
// gets a pseudo function "__BOLT_PSEUDO_<section>".
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct PltEntry {
  uint64_t addr = 0;
  uint64_t size = 0;
  std::string callee;  // the relocation's symbol name, without "@PLT"
};

struct PltSection {
  std::string name;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t entry_size = 0;  // 0 where entries end at their branch (AArch64)
};

struct PltLayout {
  std::vector<PltSection> sections;  // in section header order
  std::vector<PltEntry> entries;     // in section order, then address order
};

// True when BOLT treats a section of this name as a PLT section on this machine.
bool is_plt_section_name(uint16_t machine, const std::string& name);

// Decodes one PLT section's code (exposed for tests): appends its named entries to `entries`
// and sets section.entry_size to the size found. `slots` maps GOT slot addresses to the
// symbols of their dynamic relocations.
void decode_plt_section(uint16_t machine, std::span<const uint8_t> code, PltSection& section,
                        const std::map<uint64_t, std::string>& slots,
                        std::vector<PltEntry>& entries);

// Reads the PLT sections' code and the dynamic relocations of `binary`. Unknown instruction
// encodings end the entry they appear in (no function), rather than failing the whole binary.
PltLayout read_plt(const ElfBinary& binary);

}  // namespace profcollect
