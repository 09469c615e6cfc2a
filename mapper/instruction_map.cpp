#include "mapper/instruction_map.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace profcollect {

namespace {

// A symbol's span: [begin, end) swept from begin; decoded on first use.
struct Span {
  uint64_t begin = 0, end = 0;
  const CodeSection* section = nullptr;
  bool decoded = false;
  std::vector<Instruction> instructions;
};

InstructionKind classify_x86(csh handle, const cs_insn& insn) {
  if (cs_insn_group(handle, &insn, CS_GRP_CALL)) return InstructionKind::Call;
  if (cs_insn_group(handle, &insn, CS_GRP_RET) || cs_insn_group(handle, &insn, CS_GRP_IRET)) {
    return InstructionKind::Return;
  }
  // LLVM's isUnconditionalBranch: a branch that is a barrier and not indirect, i.e. jmp rel.
  if (insn.id == X86_INS_JMP && insn.detail != nullptr && insn.detail->x86.op_count == 1 &&
      insn.detail->x86.operands[0].type == X86_OP_IMM) {
    return InstructionKind::UnconditionalJump;
  }
  return InstructionKind::Other;
}

InstructionKind classify_arm64(const cs_insn& insn) {
  switch (insn.id) {
    case ARM64_INS_BL:
    case ARM64_INS_BLR:
      return InstructionKind::Call;
    case ARM64_INS_RET:
    case ARM64_INS_ERET:
      return InstructionKind::Return;
    case ARM64_INS_B:
      if (insn.detail != nullptr &&
          (insn.detail->arm64.cc == ARM64_CC_INVALID || insn.detail->arm64.cc == ARM64_CC_AL)) {
        return InstructionKind::UnconditionalJump;
      }
      return InstructionKind::Other;
    default:
      return InstructionKind::Other;
  }
}

}  // namespace

struct InstructionMap::Impl {
  uint16_t machine = 0;
  csh handle = 0;
  cs_insn* insn = nullptr;
  std::vector<CodeSection> sections;
  std::vector<Span> spans;  // sorted by begin, not overlapping

  ~Impl() {
    if (insn != nullptr) cs_free(insn, 1);
    if (handle != 0) cs_close(&handle);
  }

  // Instructions Capstone 4 (the Debian 12 library) cannot decode, or decodes a byte short,
  // that LLVM's disassembler, and so llvm-profgen, decodes: found by comparing the two over a
  // distribution kernel's text. Their length as LLVM decodes them, else 0.
  static uint8_t x86_length_capstone_lacks(const uint8_t* code, size_t size) {
    if (size >= 3 && code[0] == 0x0f && code[1] == 0x01) {
      switch (code[2]) {
        case 0xe8:  // serialize
        case 0xee:  // rdpkru
        case 0xef:  // wrpkru
        case 0xfa:  // monitorx
        case 0xfb:  // mwaitx
          return 3;
        default:
          break;
      }
    }
    // rmpadjust (f3 0f 01 fe), pvalidate (f2 0f 01 ff)
    if (size >= 4 && code[1] == 0x0f && code[2] == 0x01 &&
        ((code[0] == 0xf3 && code[3] == 0xfe) || (code[0] == 0xf2 && code[3] == 0xff))) {
      return 4;
    }
    // WAITPKG on a register (0f ae /6, mod 11): tpause (66), umwait (f2), umonitor (f3), after an
    // optional address-size prefix (67) and REX (40-4f).
    {
      size_t at = 0;
      if (at < size && code[at] == 0x67) ++at;
      if (at < size && (code[at] == 0x66 || code[at] == 0xf2 || code[at] == 0xf3)) {
        ++at;
        if (at < size && (code[at] & 0xf0) == 0x40) ++at;
        if (at + 3 <= size && code[at] == 0x0f && code[at + 1] == 0xae &&
            (code[at + 2] & 0xf8) == 0xf0) {
          return static_cast<uint8_t>(at + 3);
        }
      }
    }
    // ud1 with a register operand (0f b9 /r, mod 11): the kernel's BUG(); Capstone takes 2 bytes.
    if (size >= 3 && code[0] == 0x0f && code[1] == 0xb9 && (code[2] >> 6) == 3) return 3;
    return 0;
  }

  // The length of an EVEX-encoded (AVX-512) instruction, from its encoding alone: the 62 escape,
  // three payload bytes, the opcode, ModRM with its SIB and displacement, and an immediate for
  // opcode map 3 and the map-1 opcodes that take one. Used where Capstone 4 knows no mnemonic
  // (vprord, vpermi2d and others LLVM decodes). 0 when the bytes run out or are no EVEX.
  static uint8_t x86_evex_length(const uint8_t* code, size_t size) {
    if (size < 6 || code[0] != 0x62 || (code[1] & 0x0c) != 0 || (code[2] & 0x04) == 0) return 0;
    const uint8_t map = code[1] & 0x03, opcode = code[4], modrm = code[5];
    size_t length = 6;
    const uint8_t mod = modrm >> 6, rm = modrm & 7;
    if (mod != 3) {
      if (rm == 4) {
        if (size < 7) return 0;
        if (mod == 0 && (code[6] & 7) == 5) length += 4;  // SIB without base: disp32
        length += 1;
      }
      if (mod == 1) length += 1;
      if (mod == 2 || (mod == 0 && rm == 5)) length += 4;
    }
    const bool immediate =
        map == 3 || (map == 1 && ((opcode >= 0x70 && opcode <= 0x73) || opcode == 0xc2 ||
                                  (opcode >= 0xc4 && opcode <= 0xc6)));
    if (immediate) length += 1;
    return length <= size && length <= 15 ? static_cast<uint8_t>(length) : 0;
  }

  Span* span_at(uint64_t address) {
    auto it = std::upper_bound(spans.begin(), spans.end(), address,
                               [](uint64_t a, const Span& s) { return a < s.begin; });
    if (it == spans.begin()) return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
  }

  void decode(Span& span) {
    span.decoded = true;
    const CodeSection& section = *span.section;
    const uint64_t section_end = section.address + section.bytes.size();
    uint64_t address = span.begin;
    // As llvm-profgen: decoding may read past the span (an instruction may straddle the next
    // symbol) but a new instruction starts only before the span's end.
    while (address < span.end) {
      const uint8_t* code = section.bytes.data() + (address - section.address);
      size_t size = section_end - address;
      uint64_t at = address;
      // LLVM's x86 disassembler decodes a LOCK prefix as an instruction of its own ("lock",
      // one byte, then the locked instruction), and llvm-profgen counts instruction sizes and
      // starts as LLVM decodes them; Capstone takes both as one.
      if (machine == EM_X86_64 && *code == 0xf0 && size > 1) {
        span.instructions.push_back(Instruction{address, 1, InstructionKind::Other});
        address += 1;
        continue;
      }
      if (machine == EM_X86_64) {
        if (const uint8_t length = x86_length_capstone_lacks(code, size)) {
          span.instructions.push_back(Instruction{address, length, InstructionKind::Other});
          address += length;
          continue;
        }
      }
      if (cs_disasm_iter(handle, &code, &size, &at, insn)) {
        InstructionKind kind =
            machine == EM_AARCH64 ? classify_arm64(*insn) : classify_x86(handle, *insn);
        span.instructions.push_back(Instruction{address, static_cast<uint8_t>(insn->size), kind});
        address += insn->size;
      } else if (const uint8_t evex = machine == EM_X86_64 ? x86_evex_length(code, size) : 0) {
        span.instructions.push_back(Instruction{address, evex, InstructionKind::Other});
        address += evex;
      } else {
        address += machine == EM_AARCH64 ? 4 : 1;  // not code; resynchronize on the next byte
      }
    }
  }

  Span* decoded_span_at(uint64_t address) {
    Span* span = span_at(address);
    if (span != nullptr && !span->decoded) decode(*span);
    return span;
  }
};

InstructionMap::InstructionMap(uint16_t machine, std::vector<CodeSection> sections)
    : impl_(std::make_unique<Impl>()) {
  impl_->machine = machine;
  cs_arch arch;
  cs_mode mode;
  switch (machine) {
    case EM_X86_64:
      arch = CS_ARCH_X86;
      mode = CS_MODE_64;
      break;
    case EM_386:
      arch = CS_ARCH_X86;
      mode = CS_MODE_32;
      break;
    case EM_AARCH64:
      arch = CS_ARCH_ARM64;
      mode = CS_MODE_ARM;
      break;
    default:
      throw std::invalid_argument("no instruction decoder for ELF machine " +
                                  std::to_string(machine));
  }
  if (cs_open(arch, mode, &impl_->handle) != CS_ERR_OK) {
    throw std::runtime_error("cannot start the Capstone disassembler");
  }
  cs_option(impl_->handle, CS_OPT_DETAIL, CS_OPT_ON);
  impl_->insn = cs_malloc(impl_->handle);
  impl_->sections = std::move(sections);
  for (const CodeSection& section : impl_->sections) {
    // A section that would reach past the top of the address space has no sound addresses.
    if (section.bytes.size() > UINT64_MAX - section.address) continue;
    const uint64_t section_end = section.address + section.bytes.size();
    for (size_t i = 0; i < section.symbol_addresses.size(); ++i) {
      const uint64_t begin = section.symbol_addresses[i];
      // A sweep ends at the next symbol, but never past the section's bytes: a symbol whose
      // value lies beyond its section (a damaged or hand-made symbol table) must not make the
      // sweep before it decode memory the section does not have.
      const uint64_t end = i + 1 < section.symbol_addresses.size()
                               ? std::min(section.symbol_addresses[i + 1], section_end)
                               : section_end;
      if (begin < section.address || begin >= end) continue;
      impl_->spans.push_back(Span{begin, end, &section, false, {}});
    }
  }
  std::sort(impl_->spans.begin(), impl_->spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
}

InstructionMap::~InstructionMap() = default;
InstructionMap::InstructionMap(InstructionMap&&) noexcept = default;
InstructionMap& InstructionMap::operator=(InstructionMap&&) noexcept = default;

const Instruction* InstructionMap::at(uint64_t address) const {
  Span* span = impl_->decoded_span_at(address);
  if (span == nullptr) return nullptr;
  auto it = std::lower_bound(span->instructions.begin(), span->instructions.end(), address,
                             [](const Instruction& i, uint64_t a) { return i.address < a; });
  return it != span->instructions.end() && it->address == address ? &*it : nullptr;
}

void InstructionMap::for_each(uint64_t first, uint64_t last,
                              const std::function<void(const Instruction&)>& visit) const {
  if (first > last) return;
  auto& spans = impl_->spans;
  auto it = std::upper_bound(spans.begin(), spans.end(), first,
                             [](uint64_t a, const Span& s) { return a < s.begin; });
  if (it != spans.begin() && first < std::prev(it)->end) --it;
  for (; it != spans.end() && it->begin <= last; ++it) {
    if (!it->decoded) impl_->decode(*it);
    auto i = std::lower_bound(it->instructions.begin(), it->instructions.end(), first,
                              [](const Instruction& ins, uint64_t a) { return ins.address < a; });
    for (; i != it->instructions.end() && i->address <= last; ++i) visit(*i);
  }
}

bool InstructionMap::crosses_unconditional_branch(uint64_t begin, uint64_t end) const {
  if (begin >= end) return false;
  bool found = false;
  for_each(begin, end - 1,
           [&](const Instruction& i) { found = found || i.is_unconditional_branch(); });
  return found;
}

size_t InstructionMap::decoded_spans() const {
  return static_cast<size_t>(std::count_if(impl_->spans.begin(), impl_->spans.end(),
                                           [](const Span& s) { return s.decoded; }));
}

void InstructionMap::drop_decoded() {
  for (Span& span : impl_->spans) {
    span.decoded = false;
    span.instructions =
        std::vector<Instruction>();  // not clear() or `= {}`: they keep the capacity
  }
}

}  // namespace profcollect
