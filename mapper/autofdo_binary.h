// A binary as llvm-profgen 19 sees it when it makes a line-number sample profile
// (ProfiledBinary): its instructions (mapper/instruction_map.h), its DWARF inline chains and
// functions (mapper/dwarf_symbolizer.h), and the facts that join them:
//
// - Function entries: a DWARF function range is an entry -- a call to its start is a call to
//   the function -- when some symbol of a swept section lies in it and the function has a single
//   range or the symbol's canonical name is the function's name (ProfiledBinary::setIsFuncEntry).
// - Discriminator encoding: flow-sensitive when a non-empty allocated, non-executable PROGBITS
//   section holds the symbol `__llvm_fs_discriminator__`.
//
// Symbols come from the binary's .symtab, or, for a stripped binary, from its debug file's.
// The answers match llvm-profgen given the unstripped binary. Instructions and inline chains are
// decoded lazily and cached inside, so one AutofdoBinary serves one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "mapper/discriminator.h"
#include "mapper/dwarf_symbolizer.h"
#include "mapper/elf_binary.h"
#include "mapper/instruction_map.h"

namespace profcollect {

struct AutofdoBinaryOptions {
  // Searched in order for "<dir>/.build-id/xx/rest.debug" and .gnu_debuglink files.
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
  // Threads that index the DWARF's functions (DwarfSymbolizer): 1 where a collector must keep
  // the other cores, 2 where a conversion has the machine.
  unsigned threads = 1;
  // Answers of the debug info kept (DwarfSymbolizer's kept_answers): a daemon renders the same
  // addresses again at each flush; a conversion that asks each address once keeps none.
  bool keep_answers = true;
};

class AutofdoBinary {
 public:
  // Throws DebugInfoError (no DWARF anywhere, missing .dwo files, no symbol table anywhere,
  // unreadable DWARF) and std::invalid_argument for an architecture without a decoder.
  static std::unique_ptr<AutofdoBinary> open(std::shared_ptr<const ElfBinary> binary,
                                             const AutofdoBinaryOptions& options = {});

  const ElfBinary& elf() const { return *binary_; }
  uint64_t preferred_base() const { return preferred_base_; }
  const InstructionMap& instructions() const { return instructions_; }
  const DwarfSymbolizer& dwarf() const { return *symbolizer_; }
  DiscriminatorEncoding discriminator_encoding() const { return encoding_; }
  // Where the symbols and the DWARF were read from (for reports).
  const std::string& symbol_file() const { return symbol_file_; }

  // The function range holding the address, and all ranges of its function.
  const FunctionRange* function_range(uint64_t address) const;
  const std::vector<AddressRange>& ranges_of(const FunctionRange& range) const;
  // The canonical name of the function a call to `target` enters, or "" when `target` is not
  // a function entry (llvm-profgen's getCalleeNameForAddress).
  std::string_view callee_name(uint64_t target) const;

  // Frees the decoded instructions and the DWARF units' address maps and line tables, keeping
  // the inline stacks found up to DwarfSymbolizer::kMaxKeptAnswers (so that the next profile
  // reads DWARF only for addresses not met before), and lets the kernel reclaim the pages of a
  // separate debug file. Invalidates the Instructions returned before, and the InlineStacks when
  // they go too (always with Answers::Forget).
  void drop_caches(DwarfSymbolizer::Answers answers = DwarfSymbolizer::Answers::Keep);

 private:
  AutofdoBinary(std::shared_ptr<const ElfBinary> binary,
                std::unique_ptr<DwarfSymbolizer> symbolizer, InstructionMap instructions)
      : binary_(std::move(binary)),
        symbolizer_(std::move(symbolizer)),
        instructions_(std::move(instructions)) {}

  std::shared_ptr<const ElfBinary> binary_;
  std::unique_ptr<DwarfSymbolizer> symbolizer_;
  InstructionMap instructions_;
  uint64_t preferred_base_ = 0;
  DiscriminatorEncoding encoding_ = DiscriminatorEncoding::Classic;
  std::unordered_set<uint64_t> entry_starts_;  // function range starts that are entries
  std::string symbol_file_;
};

}  // namespace profcollect
