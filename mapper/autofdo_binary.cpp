#include "mapper/autofdo_binary.h"

#include <elf.h>

#include <algorithm>
#include <map>

#include "mapper/canonical_name.h"
#include "mapper/debug_info_error.h"
#include "mapper/dwarf_file.h"
#include "mapper/elf_symbols.h"

namespace profcollect {

namespace {

constexpr std::string_view kFsDiscriminatorSymbol = "__llvm_fs_discriminator__";

// The binary's section a symbol of `symbol_file` is defined in, or nullptr (undefined,
// absolute, common). A debug file made by objcopy --only-keep-debug keeps the section headers,
// so the index usually names the same section; the name decides when it does not.
const ElfSection* binary_section_of(const ElfBinary& binary, const ElfBinary& symbol_file,
                                    const ElfSymbol& symbol) {
  if (symbol.shndx == SHN_UNDEF || symbol.shndx >= SHN_LORESERVE) return nullptr;
  const auto& own = symbol_file.sections();
  if (symbol.shndx >= own.size()) return nullptr;
  if (&binary == &symbol_file) return &own[symbol.shndx];
  const auto& target = binary.sections();
  if (symbol.shndx < target.size() && target[symbol.shndx].name == own[symbol.shndx].name) {
    return &target[symbol.shndx];
  }
  return binary.section_by_name(own[symbol.shndx].name);
}

// llvm-profgen sweeps every executable section with contents but the PLT.
bool is_swept(const ElfSection& section) {
  return section.executable() && section.size > 0 && section.has_file_data() &&
         section.name != ".plt";
}

// LLVM's ELFObjectFile::isSectionData, for the __llvm_fs_discriminator__ check.
bool is_data(const ElfSection& section) {
  return section.type == SHT_PROGBITS && section.allocated() && !section.executable() &&
         section.size > 0;
}

}  // namespace

std::unique_ptr<AutofdoBinary> AutofdoBinary::open(std::shared_ptr<const ElfBinary> binary,
                                                   const AutofdoBinaryOptions& options) {
  const uint64_t base = binary->preferred_base();
  auto symbolizer = std::make_unique<DwarfSymbolizer>(
      DwarfFile::open(binary, options.debug_dirs), base, options.threads,
      options.keep_answers ? DwarfSymbolizer::kMaxKeptAnswers : 0);

  // The symbols that start llvm-profgen's sweeps: the binary's, or its debug file's.
  const ElfBinary* symbol_file = binary.get();
  std::vector<ElfSymbol> symbols = read_symbols(*binary, SymbolTableKind::Static);
  const ElfBinary& dwarf_file = symbolizer->file().file();
  if (symbols.empty() && &dwarf_file != binary.get()) {
    symbols = read_symbols(dwarf_file, SymbolTableKind::Static);
    symbol_file = &dwarf_file;
  }
  if (symbols.empty()) {
    std::string message = binary->path() + ": stripped: no symbol table (.symtab)";
    if (&dwarf_file != binary.get()) message += " in it nor in its debug file " + dwarf_file.path();
    message +=
        ". AutoFDO decodes instructions from symbol to symbol as llvm-profgen does: use the "
        "unstripped binary, or keep the symbols in the debug file (objcopy --only-keep-debug)";
    throw DebugInfoError(DebugInfoError::Kind::NoSymbolTable, message);
  }

  std::map<uint32_t, std::vector<uint64_t>> starts_by_section;  // binary section index -> addrs
  std::vector<std::pair<uint64_t, std::string_view>> swept_symbols;
  bool fs_discriminators = false;
  for (const ElfSymbol& symbol : symbols) {
    const ElfSection* section = binary_section_of(*binary, *symbol_file, symbol);
    if (section == nullptr) continue;
    if (symbol.name == kFsDiscriminatorSymbol && is_data(*section)) fs_discriminators = true;
    if (!is_swept(*section)) continue;
    starts_by_section[section->index].push_back(symbol.value);
    // A section symbol is known by its section's name.
    std::string_view name = symbol.name;
    if (name.empty() && symbol.type == STT_SECTION) name = section->name;
    swept_symbols.emplace_back(symbol.value, name);
  }

  std::vector<CodeSection> code;
  for (auto& [index, addresses] : starts_by_section) {
    const ElfSection& section = binary->sections()[index];
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    code.push_back(CodeSection{section.addr, binary->section_bytes(section), std::move(addresses)});
  }
  InstructionMap instructions(binary->machine(), std::move(code));

  std::unique_ptr<AutofdoBinary> result(
      new AutofdoBinary(binary, std::move(symbolizer), std::move(instructions)));
  result->preferred_base_ = base;
  result->encoding_ =
      fs_discriminators ? DiscriminatorEncoding::FlowSensitive : DiscriminatorEncoding::Classic;
  result->symbol_file_ = symbol_file->path();
  const DwarfFunctionIndex& functions = result->symbolizer_->functions();
  for (const auto& [address, name] : swept_symbols) {
    const FunctionRange* range = functions.find(address);
    if (range == nullptr) continue;
    const DwarfFunction& function = functions.function(range->function);
    if (function.ranges.size() == 1 || function.name == canonical_function_name(name)) {
      result->entry_starts_.insert(range->begin);
    }
  }
  return result;
}

const FunctionRange* AutofdoBinary::function_range(uint64_t address) const {
  return symbolizer_->functions().find(address);
}

const std::vector<AddressRange>& AutofdoBinary::ranges_of(const FunctionRange& range) const {
  return symbolizer_->functions().function(range.function).ranges;
}

std::string_view AutofdoBinary::callee_name(uint64_t target) const {
  const FunctionRange* range = symbolizer_->functions().starting_at(target);
  if (range == nullptr || !entry_starts_.contains(range->begin)) return {};
  return canonical_function_name(symbolizer_->functions().function(range->function).name);
}

void AutofdoBinary::drop_caches(DwarfSymbolizer::Answers answers) {
  instructions_.drop_decoded();
  symbolizer_->drop_caches(answers);
  // The debug file's pages read for them go too (the binary's are its owner's to release).
  if (&symbolizer_->file().file() != binary_.get()) symbolizer_->file().file().release_file_pages();
}

}  // namespace profcollect
