// Fuzz target: an ELF file as the mapper reads it for BOLT profiles and address mapping --
// ElfBinary::open (program and section headers, build-id note, .gnu_debuglink), the exec
// segment map, SymbolTable::load (.symtab/.dynsym, naming and function extents, PLT entries
// from the dynamic relocations, .eh_frame FDEs, a separate debug file found by .gnu_debuglink),
// BoltBlockMap::blocks for each function and an InstructionMap swept from every symbol.
//
// The input's first part is the binary; each further part (tests/fuzz/fuzz_support.h) is
// "NAME\n" then the bytes of a file put beside it under NAME, for the debug-file search. The
// only acceptable failures are ElfError, and std::invalid_argument for a machine the
// disassemblers do not model.
#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>

#include "mapper/bolt_block_map.h"
#include "mapper/eh_frame_ranges.h"
#include "mapper/elf_binary.h"
#include "mapper/elf_symbols.h"
#include "mapper/exec_segment_map.h"
#include "mapper/instruction_map.h"
#include "mapper/plt_symbols.h"
#include "mapper/symbol_table.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

// Bounds the work per input: a few hundred functions show every path; thousands of overlapping
// ones only make an input slow.
constexpr size_t kMaxFunctions = 256;

void check_segments(const ElfBinary& elf) {
  const ExecSegmentMap map(elf.load_segments());
  for (const LoadSegment& seg : elf.load_segments()) {
    for (uint64_t offset :
         {seg.offset, seg.offset + seg.filesz - 1, seg.offset & ~uint64_t{0xfff}}) {
      if (auto vaddr = map.file_offset_to_vaddr(offset)) map.vaddr_to_file_offset(*vaddr);
    }
  }
}

void check_blocks(const ElfBinary& elf, const SymbolTable& table) {
  if (elf.machine() != EM_X86_64) return;
  BoltBlockMap blocks(elf);
  size_t n = 0;
  for (const FunctionSymbol& f : table.functions()) {
    if (n++ == kMaxFunctions) break;
    const BoltFunctionBlocks& b = blocks.blocks(f);
    for (size_t i = 0; i < b.blocks.size(); ++i) {
      if (b.blocks[i].last_offset < b.blocks[i].offset) __builtin_trap();
      if (i > 0 && b.blocks[i].offset <= b.blocks[i - 1].last_offset) __builtin_trap();
      b.block_containing(b.blocks[i].offset);
    }
    for (uint64_t r : b.return_offsets) b.is_return(r);
  }
}

// llvm-profgen's sweep (mapper/instruction_map.h) from every symbol of each executable section.
void check_instructions(const ElfBinary& elf) {
  std::vector<ElfSymbol> symbols = read_symbols(elf, SymbolTableKind::Static);
  if (symbols.empty()) symbols = read_symbols(elf, SymbolTableKind::Dynamic);
  std::map<uint32_t, std::vector<uint64_t>> starts;
  for (const ElfSymbol& s : symbols) {
    if (s.shndx >= elf.sections().size()) continue;
    const ElfSection& section = elf.sections()[s.shndx];
    if (section.executable() && section.has_file_data() && section.size > 0)
      starts[s.shndx].push_back(s.value);
  }
  std::vector<CodeSection> code;
  std::vector<uint64_t> queries;
  for (auto& [index, addresses] : starts) {
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    if (addresses.size() > kMaxFunctions) addresses.resize(kMaxFunctions);
    queries.insert(queries.end(), addresses.begin(), addresses.end());
    const ElfSection& section = elf.sections()[index];
    code.push_back(CodeSection{section.addr, elf.section_bytes(section), addresses});
  }
  const InstructionMap map(elf.machine(), std::move(code));
  for (uint64_t a : queries) {
    if (const Instruction* i = map.at(a)) map.crosses_unconditional_branch(a, a + i->size + 64);
    size_t visited = 0;
    map.for_each(a, a + 256, [&](const Instruction&) { ++visited; });
  }
}

void check_binary(const std::string& path) {
  auto elf = ElfBinary::open(path);
  for (const ElfSection& s : elf->sections()) {
    fuzz::touch(s.name);
    fuzz::touch(elf->section_bytes(s));
  }
  fuzz::touch(elf->debuglink());
  fuzz::touch(elf->build_id().to_hex());
  elf->preferred_base();
  check_segments(*elf);

  for (const CodeRange& r : read_fde_ranges(*elf)) elf->section_containing(r.start);
  for (const PltEntry& e : read_plt(*elf).entries) fuzz::touch(e.callee);

  SymbolSearchOptions options;
  options.debug_dirs = {};  // only files of this input: nothing of the machine's
  const SymbolTable table = SymbolTable::load(*elf, options);
  for (const FunctionSymbol& f : table.functions()) {
    fuzz::touch(f.name);
    fuzz::touch(f.raw_name);
    for (const std::string& alias : f.aliases) fuzz::touch(alias);
    table.find(f.addr);
  }
  check_blocks(*elf, table);
  check_instructions(*elf);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& dir = fuzz::ScratchDirectory::get();
  fuzz::write_input_files(dir, "binary", fuzz::split_parts(data, size));
  try {
    check_binary(dir.file("binary"));
  } catch (const ElfError&) {
  } catch (const std::invalid_argument&) {
  }
  dir.clear();
  return 0;
}
