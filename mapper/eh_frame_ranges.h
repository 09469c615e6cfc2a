// The code ranges the .eh_frame FDEs of a binary describe. BOLT takes a function's size from
// its FDE when the symbol says less (zero-size assembly symbols), and makes a function
// "__BOLT_FDE_FUNCat<hex address>" of an FDE that no symbol covers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct CodeRange {
  uint64_t start = 0;
  uint64_t size = 0;
};

// Every FDE of `eh_frame` (the section's bytes, loaded at `section_addr`), sorted by start.
// Malformed entries end the walk; what was read before them is kept.
std::vector<CodeRange> parse_eh_frame(std::span<const uint8_t> eh_frame, uint64_t section_addr,
                                      bool is_64bit, bool little_endian);

// parse_eh_frame on the binary's .eh_frame, or nothing if it has none (or it is NOBITS).
std::vector<CodeRange> read_fde_ranges(const ElfBinary& binary);

}  // namespace profcollect
