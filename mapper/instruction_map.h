// The instructions of a binary as llvm-profgen 19 decodes them (ProfiledBinary::disassemble):
// every executable section except ".plt" is swept linearly from each symbol of that section to
// the next symbol's address (or the section's end); bytes before a section's first symbol are
// not code. An address "is code" only when such a sweep starts an instruction there. Each
// instruction has a size and a kind: calls, returns and direct unconditional jumps are the
// "unconditional branches" a fall-through range may not cross (indirect jumps are not). As in
// LLVM, an x86 LOCK prefix is an instruction of its own.
//
// Decoded with Capstone, lazily: a symbol's span is disassembled the first time an address in it
// is asked about, so only the functions a profile touches cost anything. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

enum class InstructionKind : uint8_t { Other, Call, Return, UnconditionalJump };

struct Instruction {
  uint64_t address = 0;
  uint8_t size = 0;
  InstructionKind kind = InstructionKind::Other;
  bool is_unconditional_branch() const { return kind != InstructionKind::Other; }
};

// One executable section to sweep: its address, bytes and the sorted, distinct addresses of the
// symbols in it.
struct CodeSection {
  uint64_t address = 0;
  std::span<const uint8_t> bytes;
  std::vector<uint64_t> symbol_addresses;
};

class InstructionMap {
 public:
  // machine: EM_X86_64, EM_386 or EM_AARCH64. Throws std::invalid_argument for another one.
  InstructionMap(uint16_t machine, std::vector<CodeSection> sections);
  ~InstructionMap();
  InstructionMap(InstructionMap&&) noexcept;
  InstructionMap& operator=(InstructionMap&&) noexcept;

  // The instruction starting exactly at the address, or nullptr.
  const Instruction* at(uint64_t address) const;
  bool is_code(uint64_t address) const { return at(address) != nullptr; }
  // Every instruction starting in [first, last], in address order.
  void for_each(uint64_t first, uint64_t last,
                const std::function<void(const Instruction&)>& visit) const;
  // Whether a call, return or direct jump starts in [begin, end) (llvm-profgen's
  // rangeCrossUncondBranch; false when begin >= end).
  bool crosses_unconditional_branch(uint64_t begin, uint64_t end) const;

  size_t decoded_spans() const;
  // Frees every decoded span; a span is decoded again the next time it is asked about.
  // Invalidates the Instructions returned before.
  void drop_decoded();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcollect
