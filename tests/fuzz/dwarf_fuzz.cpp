// Fuzz target: a binary's DWARF as AutoFDO reads it (mapper/autofdo_binary.h) -- the DWARF file
// (the binary, or its .gnu_debuglink file), unit headers and subprograms through libdw, split
// DWARF skeletons and their .dwo units, the line programs (mapper/dwarf_line_table.h), inline
// chains (mapper/dwarf_symbolizer.h) and the instruction sweep -- then symbolizes the addresses
// the binary's functions, symbols and instructions lie at.
//
// The input's first part is the binary; each further part (tests/fuzz/fuzz_support.h) is
// "NAME\n" then the bytes of a file put beside it under NAME: a .dwo a skeleton unit names, or
// the debug file of .gnu_debuglink. The only acceptable failures are DebugInfoError, ElfError,
// and std::invalid_argument for a machine without an instruction decoder.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "mapper/autofdo_binary.h"
#include "mapper/debug_info_error.h"
#include "mapper/elf_binary.h"
#include "mapper/elf_symbols.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

// Bounds the work per input (see elf_binary_fuzz.cpp).
constexpr size_t kMaxQueries = 512;

void query(const AutofdoBinary& binary, uint64_t address) {
  for (const InlineFrame& frame : binary.dwarf().symbolize(address)) fuzz::touch(frame.name);
  if (const FunctionRange* range = binary.function_range(address)) {
    if (address < range->begin || address >= range->end) __builtin_trap();
    binary.ranges_of(*range);
    fuzz::touch(binary.callee_name(range->begin));
  }
  if (const Instruction* i = binary.instructions().at(address))
    binary.instructions().crosses_unconditional_branch(address, address + i->size + 32);
}

void check_binary(const std::string& path) {
  auto elf = ElfBinary::open(path);
  AutofdoBinaryOptions options;
  options.debug_dirs = {};  // only files of this input: nothing of the machine's
  const auto binary = AutofdoBinary::open(elf, options);
  fuzz::touch(binary->symbol_file());
  size_t queries = 0;
  for (const auto& [begin, range] : binary->dwarf().functions().ranges()) {
    if (queries++ == kMaxQueries) break;
    query(*binary, begin);
    query(*binary, begin + (range.end - begin) / 2);
    query(*binary, range.end - 1);
  }
  for (const DwarfFunction& f : binary->dwarf().functions().functions()) fuzz::touch(f.name);
  for (const ElfSymbol& s : read_symbols(*elf, SymbolTableKind::Static)) {
    if (queries++ == 2 * kMaxQueries) break;
    query(*binary, s.value);
  }
  fuzz::touch(binary->dwarf().line_table_error());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& dir = fuzz::ScratchDirectory::get();
  fuzz::write_input_files(dir, "binary", fuzz::split_parts(data, size));
  try {
    check_binary(dir.file("binary"));
  } catch (const DebugInfoError&) {
  } catch (const ElfError&) {
  } catch (const std::invalid_argument&) {
  }
  dir.clear();
  return 0;
}
