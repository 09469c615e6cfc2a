#include "mapper/plt_symbols.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <optional>

#include "mapper/elf_symbols.h"

namespace profcollect {

namespace {

// GOT slot address -> name of the symbol its dynamic relocation refers to. Relocations without
// a symbol (RELATIVE, IRELATIVE) are left out: BOLT names no x86-64 PLT entry after them.
std::map<uint64_t, std::string> read_slot_symbols(const ElfBinary& binary) {
  std::map<uint64_t, std::string> slots;
  const std::vector<std::string> names = read_dynamic_symbol_names(binary);
  for (const ElfSection& section : binary.sections()) {
    if ((section.type != SHT_RELA && section.type != SHT_REL) || !section.allocated()) continue;
    Elf_Data* data = elf_getdata(elf_getscn(binary.elf(), section.index), nullptr);
    if (data == nullptr || section.entsize == 0) continue;
    const size_t count = section.size / section.entsize;
    for (size_t i = 0; i < count; ++i) {
      uint64_t offset = 0, info = 0;
      if (section.type == SHT_RELA) {
        GElf_Rela rela;
        if (gelf_getrela(data, static_cast<int>(i), &rela) == nullptr) break;
        offset = rela.r_offset;
        info = rela.r_info;
      } else {
        GElf_Rel rel;
        if (gelf_getrel(data, static_cast<int>(i), &rel) == nullptr) break;
        offset = rel.r_offset;
        info = rel.r_info;
      }
      const uint64_t sym = binary.is_64bit() ? GELF_R_SYM(info) : ELF32_R_SYM(info);
      if (sym == 0 || sym >= names.size() || names[sym].empty()) continue;
      slots.emplace(offset, names[sym]);
    }
  }
  return slots;
}

// --- x86-64 -------------------------------------------------------------------------------
// Only the instructions linkers put in PLT entries are decoded: endbr64, push, jmp (direct and
// through a RIP-relative slot, with or without the bnd prefix) and the nop forms used as padding.

struct X86Instruction {
  size_t length = 0;
  std::optional<uint64_t> indirect_slot;  // jmp *slot(%rip): the slot's address
  bool endbr = false;
};

X86Instruction plain(size_t length) {
  X86Instruction insn;
  insn.length = length;
  return insn;
}

std::optional<X86Instruction> decode_x86(std::span<const uint8_t> code, uint64_t address) {
  auto rel32 = [&](size_t at) {
    return static_cast<int32_t>(uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 |
                                uint32_t{code[at + 2]} << 16 | uint32_t{code[at + 3]} << 24);
  };
  size_t i = 0;
  if (code.size() >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
      code[3] == 0xfa) {
    return X86Instruction{4, std::nullopt, true};
  }
  while (i < code.size() && (code[i] == 0xf2 || code[i] == 0x66 || code[i] == 0x2e)) ++i;
  if (i >= code.size()) return std::nullopt;
  const uint8_t op = code[i];
  const size_t left = code.size() - i;
  if (op == 0xff && left >= 6 && code[i + 1] == 0x25) {  // jmp *rel32(%rip)
    const size_t length = i + 6;
    return X86Instruction{length, address + length + rel32(i + 2), false};
  }
  if (op == 0xff && left >= 6 && code[i + 1] == 0x35) return plain(i + 6);  // push mem
  if (op == 0x68 && left >= 5) return plain(i + 5);                         // push imm
  if (op == 0xe9 && left >= 5) return plain(i + 5);                         // jmp rel32
  if (op == 0x90 || op == 0xcc) return plain(i + 1);                        // nop, int3
  if (op == 0x0f && left >= 3 && code[i + 1] == 0x0b) return plain(i + 2);  // ud2
  if (op == 0x0f && left >= 3 && code[i + 1] == 0x1f) {                     // nopl/nopw
    const uint8_t modrm = code[i + 2];
    const uint8_t mod = modrm >> 6, rm = modrm & 7;
    size_t length = i + 3 + (rm == 4 && mod != 3 ? 1 : 0);
    if (mod == 1) length += 1;
    if (mod == 2) length += 4;
    if (mod == 0 && rm == 5) length += 4;
    if (length > code.size()) return std::nullopt;
    return plain(length);
  }
  return std::nullopt;
}

void read_x86_section(std::span<const uint8_t> code, PltSection& section,
                      const std::map<uint64_t, std::string>& slots,
                      std::vector<PltEntry>& entries) {
  uint64_t entry_size = section.entry_size;
  // IBT variants of the 8-byte sections have 16-byte entries that start with endbr64.
  if (entry_size == 8) {
    auto first = decode_x86(code, section.addr);
    if (first && first->endbr) entry_size = 16;
  }
  section.entry_size = entry_size;
  for (uint64_t entry = 0; entry + entry_size <= code.size(); entry += entry_size) {
    uint64_t at = entry;
    std::optional<X86Instruction> insn;
    while (at < entry + entry_size) {
      insn = decode_x86(code.subspan(at, entry + entry_size - at), section.addr + at);
      if (!insn || insn->indirect_slot) break;
      at += insn->length;
    }
    if (!insn || !insn->indirect_slot) continue;
    auto slot = slots.find(*insn->indirect_slot);
    if (slot == slots.end()) continue;
    entries.push_back(PltEntry{section.addr + entry, entry_size, slot->second});
  }
}

// --- AArch64 ------------------------------------------------------------------------------
// An entry is "adrp xN, page; ldr xM, [xN, #off]; add ...; br xM", possibly after "bti c" (and
// PLT0 starts with stp); the slot is page + off. Entries end at br; nops after it are padding.

void read_aarch64_section(std::span<const uint8_t> code, const PltSection& section,
                          const std::map<uint64_t, std::string>& slots,
                          std::vector<PltEntry>& entries) {
  auto word = [&](size_t at) {
    return uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 | uint32_t{code[at + 2]} << 16 |
           uint32_t{code[at + 3]} << 24;
  };
  constexpr uint32_t kNop = 0xd503201f;
  size_t at = 0;
  while (at + 4 <= code.size()) {
    const size_t entry = at;
    uint64_t page[32] = {};
    bool page_known[32] = {};
    std::optional<uint64_t> loaded[32];
    std::optional<uint64_t> slot;
    bool ended = false;
    while (at + 4 <= code.size()) {
      const uint32_t insn = word(at);
      const uint64_t pc = section.addr + at;
      at += 4;
      if ((insn & 0x9f000000u) == 0x90000000u) {  // adrp
        const uint32_t rd = insn & 0x1f;
        const uint64_t imm = ((insn >> 5) & 0x7ffffu) << 2 | ((insn >> 29) & 3u);
        const int64_t offset = static_cast<int64_t>(imm << 43) >> 31;  // sign-extend, * 4096
        page[rd] = (pc & ~uint64_t{0xfff}) + static_cast<uint64_t>(offset);
        page_known[rd] = true;
      } else if ((insn & 0xffc00000u) == 0xf9400000u) {  // ldr xt, [xn, #imm12 * 8]
        const uint32_t rt = insn & 0x1f, rn = (insn >> 5) & 0x1f;
        if (page_known[rn]) loaded[rt] = page[rn] + uint64_t{(insn >> 10) & 0xfff} * 8;
      } else if ((insn & 0xfffffc1fu) == 0xd61f0000u) {  // br xn
        slot = loaded[(insn >> 5) & 0x1f];
        ended = true;
        break;
      }
    }
    if (!ended) break;
    if (slot) {
      auto found = slots.find(*slot);
      if (found != slots.end()) {
        entries.push_back(PltEntry{section.addr + entry, at - entry, found->second});
      }
    }
    while (at + 4 <= code.size() && word(at) == kNop) at += 4;
  }
}

uint64_t nominal_entry_size(uint16_t machine, const std::string& name) {
  if (machine == EM_X86_64) return name == ".plt" ? 16 : 8;
  return 0;
}

}  // namespace

void decode_plt_section(uint16_t machine, std::span<const uint8_t> code, PltSection& section,
                        const std::map<uint64_t, std::string>& slots,
                        std::vector<PltEntry>& entries) {
  if (machine == EM_X86_64) {
    read_x86_section(code, section, slots, entries);
  } else if (machine == EM_AARCH64) {
    read_aarch64_section(code, section, slots, entries);
  }
}

bool is_plt_section_name(uint16_t machine, const std::string& name) {
  if (machine == EM_X86_64) return name == ".plt" || name == ".plt.sec" || name == ".plt.got";
  if (machine == EM_AARCH64) return name == ".plt";
  return false;
}

PltLayout read_plt(const ElfBinary& binary) {
  PltLayout layout;
  const uint16_t machine = binary.machine();
  if (machine != EM_X86_64 && machine != EM_AARCH64) return layout;
  std::optional<std::map<uint64_t, std::string>> slots;
  for (const ElfSection& section : binary.sections()) {
    if (!section.allocated() || !is_plt_section_name(machine, section.name)) continue;
    PltSection plt{section.name, section.addr, section.size,
                   nominal_entry_size(machine, section.name)};
    std::span<const uint8_t> code = binary.section_bytes(section);
    if (!code.empty()) {
      if (!slots) slots = read_slot_symbols(binary);
      decode_plt_section(machine, code, plt, *slots, layout.entries);
    }
    layout.sections.push_back(std::move(plt));
  }
  return layout;
}

}  // namespace profcollect
