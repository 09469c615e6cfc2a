// Which symbols become functions, under which names, and how far each reaches: BOLT 19's
// reading of a symbol table (RewriteInstance::discoverFileObjects, disassemblePLT,
// adjustFunctionBoundaries), restated so perf2bolt's fdata names can be reproduced exactly.
//
// 1. Symbols considered: all but FILE, undefined ones and those of non-SHF_ALLOC sections
//    (absolute ones stay). Sorted by address; at one address FUNC first, section symbols last,
//    otherwise symbol-table order. AArch64 mapping symbols ($x, $d) are set aside.
// 2. In that order, skipping address 0, "__hot_start"/"__hot_end" and section symbols of PLT
//    sections, each symbol gets a name: empty -> "ANONYMOUS.<k>"; ".L..." -> "PG.L..."; global
//    -> as is; local -> "name/N" with N counting that name (a section symbol's name is its
//    section's). Local FUNCs after a FILE symbol also count "name/<file>" (an alias).
// 3. The named symbol becomes a function when it lies in an executable section, not at its end,
//    and not inside the previous function (a non-FUNC symbol also not when the previous function
//    has size 0 and the symbol may live inside it). A symbol at an existing function's address
//    adds an alias. Sizes grow to the FDE's range when an FDE starts at the symbol.
// 4. PLT entries, then a pseudo function at each PLT section start left without one, then one
//    function per FDE no function covers.
// 5. Each function's max size: up to the next function, the next symbol that may not sit inside
//    it, or its section's end. A zero size becomes the max size.
#pragma once

#include <cstdint>
#include <vector>

#include "mapper/eh_frame_ranges.h"
#include "mapper/elf_binary.h"
#include "mapper/elf_symbols.h"
#include "mapper/plt_symbols.h"
#include "mapper/symbol_table.h"

namespace profcollect {

struct DiscoveryInput {
  uint16_t machine = 0;
  const std::vector<ElfSymbol>* symbols = nullptr;    // in symbol-table order
  const std::vector<ElfSection>* sections = nullptr;  // of the file the symbols come from
  const std::vector<CodeRange>* fdes = nullptr;       // sorted by start; may be null
  const PltLayout* plt = nullptr;                     // may be null
};

// The functions, sorted by address, one per address.
std::vector<FunctionSymbol> discover_functions(const DiscoveryInput& input);

}  // namespace profcollect
