#include "mapper/bolt_block_map.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace profcollect {

namespace {

enum class Flow : uint8_t { Other, Call, Return, Jump, IndirectJump, ConditionalJump, Trap };

// What an instruction contributes to a jump-table dispatch sequence (x86-64).
enum class TablePart : uint8_t {
  None,
  LeaRip,        // lea VALUE(%rip), REG
  LoadRel32,     // movslq (BASE,%idx,4), REG
  AddReg,        // add BASE, REG (either may hold the table's address)
  LoadAbs64,     // mov VALUE(,%idx,8), REG
  JumpAbs64,     // jmp *VALUE(,%idx,8)
  JumpRegister,  // jmp *REG
};

struct Decoded {
  uint64_t offset = 0;
  Flow flow = Flow::Other;
  uint64_t target = UINT64_MAX;       // absolute address of a direct jump's target
  uint64_t call_target = UINT64_MAX;  // absolute address of a direct call's target
  TablePart part = TablePart::None;
  uint16_t reg = 0, base = 0;  // capstone x86_reg values
  uint64_t value = 0;          // the table's address, for LeaRip, LoadAbs64, JumpAbs64
  bool epilogue = false;       // a pop or a leave (x86-64): what BOLT takes for a function's exit
  bool nop = false;
};

// A jump table found in the code: its address, entry size and the jump that uses it.
struct JumpTable {
  size_t jump = 0;  // index of the indirect jump in Decoded order
  uint64_t address = 0;
  bool relative = false;  // 4-byte entries relative to the table, else 8-byte addresses
};

bool ends_block(Flow flow) {
  return flow == Flow::Return || flow == Flow::Jump || flow == Flow::IndirectJump ||
         flow == Flow::ConditionalJump || flow == Flow::Trap;
}

Flow classify(csh handle, const cs_insn& insn, uint64_t& target, uint64_t& call_target) {
  const bool direct = insn.detail != nullptr && insn.detail->x86.op_count == 1 &&
                      insn.detail->x86.operands[0].type == X86_OP_IMM;
  if (cs_insn_group(handle, &insn, CS_GRP_CALL)) {
    if (direct) call_target = static_cast<uint64_t>(insn.detail->x86.operands[0].imm);
    return Flow::Call;
  }
  if (cs_insn_group(handle, &insn, CS_GRP_RET) || cs_insn_group(handle, &insn, CS_GRP_IRET))
    return Flow::Return;
  if (insn.id == X86_INS_UD2) return Flow::Trap;
  if (cs_insn_group(handle, &insn, CS_GRP_JUMP)) {
    if (direct) target = static_cast<uint64_t>(insn.detail->x86.operands[0].imm);
    if (insn.id == X86_INS_JMP) return direct ? Flow::Jump : Flow::IndirectJump;
    return Flow::ConditionalJump;
  }
  return Flow::Other;
}

// The instruction's part in a jump-table dispatch, if any (x86-64).
void classify_table_part(const cs_insn& insn, Decoded& d) {
  if (insn.detail == nullptr) return;
  const cs_x86& x = insn.detail->x86;
  auto table_operand = [](const cs_x86_op& op, int scale) {
    return op.type == X86_OP_MEM && op.mem.base == X86_REG_INVALID &&
           op.mem.index != X86_REG_INVALID && op.mem.scale == scale &&
           op.mem.segment == X86_REG_INVALID;
  };
  if (d.flow == Flow::IndirectJump && x.op_count == 1) {
    if (x.operands[0].type == X86_OP_REG) {
      d.part = TablePart::JumpRegister;
      d.reg = static_cast<uint16_t>(x.operands[0].reg);
    } else if (table_operand(x.operands[0], 8)) {
      d.part = TablePart::JumpAbs64;
      d.value = static_cast<uint64_t>(x.operands[0].mem.disp);
    }
    return;
  }
  if (x.op_count != 2 || x.operands[0].type != X86_OP_REG) return;
  const cs_x86_op& src = x.operands[1];
  d.reg = static_cast<uint16_t>(x.operands[0].reg);
  if (insn.id == X86_INS_LEA && src.type == X86_OP_MEM && src.mem.base == X86_REG_RIP &&
      src.mem.index == X86_REG_INVALID) {
    d.part = TablePart::LeaRip;
    d.value = insn.address + insn.size + static_cast<uint64_t>(src.mem.disp);
  } else if (insn.id == X86_INS_MOVSXD && src.type == X86_OP_MEM &&
             src.mem.base != X86_REG_INVALID && src.mem.index != X86_REG_INVALID &&
             src.mem.scale == 4 && src.mem.disp == 0) {
    d.part = TablePart::LoadRel32;
    d.base = static_cast<uint16_t>(src.mem.base);
  } else if (insn.id == X86_INS_ADD && src.type == X86_OP_REG) {
    d.part = TablePart::AddReg;
    d.base = static_cast<uint16_t>(src.reg);
  } else if (insn.id == X86_INS_MOV && table_operand(src, 8)) {
    d.part = TablePart::LoadAbs64;
    d.value = static_cast<uint64_t>(src.mem.disp);
  }
}

// What the instructions before an indirect jump say of it, read as BOLT 19 reads them: back to
// the previous branch only.
struct IndirectJump {
  std::optional<JumpTable> table;
  // The dispatch of a table whose address BOLT cannot find there (loaded further back, e.g.
  // outside an interpreter's loop): BOLT then builds no CFG of the function, and neither do we.
  bool unreadable_table = false;
};

IndirectJump read_indirect_jump(const std::vector<Decoded>& decoded, size_t jump) {
  const Decoded& j = decoded[jump];
  if (j.part == TablePart::JumpAbs64) return {JumpTable{jump, j.value, false}};
  if (j.part != TablePart::JumpRegister) return {};
  size_t first = jump;
  while (first > 0 && !ends_block(decoded[first - 1].flow)) --first;
  // mov TABLE(,%idx,8), %r; jmp *%r -- or add %b, %r; jmp *%r after movslq and lea.
  size_t i = jump;
  const uint16_t value_reg = j.reg;
  uint16_t base_reg = 0;
  while (i-- > first) {
    const Decoded& d = decoded[i];
    if (d.reg != j.reg || d.part == TablePart::None) continue;
    if (d.part == TablePart::LoadAbs64) return {JumpTable{jump, d.value, false}};
    if (d.part != TablePart::AddReg) return {};
    base_reg = d.base;
    break;
  }
  if (base_reg == 0) return {};
  // Either register of the add may be the loaded entry; the other holds the table.
  while (i-- > first) {
    const Decoded& d = decoded[i];
    if (d.part != TablePart::LoadRel32 || (d.reg != value_reg && d.reg != base_reg)) continue;
    const uint16_t table_reg = d.reg == value_reg ? base_reg : value_reg;
    if (d.base != table_reg) return {};
    while (i-- > first) {
      const Decoded& l = decoded[i];
      if (l.reg == table_reg && l.part == TablePart::LeaRip)
        return {JumpTable{jump, l.value, true}};
    }
    return {std::nullopt, true};
  }
  return {};
}

// AArch64: BL/BLR call; RET/ERET return; B is a jump (B.cond, CBZ/CBNZ, TBZ/TBNZ conditional),
// its target the last operand; BR an indirect jump; BRK/HLT trap.
Flow classify_arm64(const cs_insn& insn, uint64_t& target) {
  const cs_arm64* a = insn.detail != nullptr ? &insn.detail->arm64 : nullptr;
  auto direct_target = [&] {
    if (a != nullptr && a->op_count > 0 && a->operands[a->op_count - 1].type == ARM64_OP_IMM)
      target = static_cast<uint64_t>(a->operands[a->op_count - 1].imm);
  };
  switch (insn.id) {
    case ARM64_INS_BL:
    case ARM64_INS_BLR:
      return Flow::Call;
    case ARM64_INS_RET:
    case ARM64_INS_ERET:
      return Flow::Return;
    case ARM64_INS_B:
      direct_target();
      return a != nullptr && (a->cc == ARM64_CC_INVALID || a->cc == ARM64_CC_AL)
                 ? Flow::Jump
                 : Flow::ConditionalJump;
    case ARM64_INS_CBZ:
    case ARM64_INS_CBNZ:
    case ARM64_INS_TBZ:
    case ARM64_INS_TBNZ:
      direct_target();
      return Flow::ConditionalJump;
    case ARM64_INS_BR:
      return Flow::IndirectJump;
    case ARM64_INS_BRK:
    case ARM64_INS_HLT:
      return Flow::Trap;
    default:
      return Flow::Other;
  }
}

}  // namespace

int BoltFunctionBlocks::block_containing(uint64_t offset) const {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), offset,
                             [](uint64_t o, const BoltBlock& b) { return o < b.offset; });
  if (it == blocks.begin()) return -1;
  return static_cast<int>(it - blocks.begin()) - 1;
}

bool BoltFunctionBlocks::is_return(uint64_t offset) const {
  return std::binary_search(return_offsets.begin(), return_offsets.end(), offset);
}

struct BoltBlockMap::Impl {
  const ElfBinary* binary = nullptr;
  bool arm64 = false;
  csh handle = 0;
  cs_insn* insn = nullptr;
  std::map<uint64_t, BoltFunctionBlocks> cache;            // by function address
  std::vector<Decoded> decoded;                            // scratch, reused
  std::vector<std::pair<size_t, uint64_t>> table_targets;  // scratch: (jump, target offset)
  std::vector<size_t> first_instruction;                   // scratch: per block, in decoded

  ~Impl() {
    if (insn != nullptr) cs_free(insn, 1);
    if (handle != 0) cs_close(&handle);
  }

  BoltFunctionBlocks build(const FunctionSymbol& function) {
    BoltFunctionBlocks result;
    const uint64_t size = function.size != 0 ? function.size : function.max_size;
    const ElfSection* section = binary->section_containing(function.addr);
    if (function.is_plt || size == 0 || section == nullptr || !section->executable() ||
        !section->has_file_data()) {
      return result;
    }
    // The bytes libelf gives, which may be fewer than the header claims, or none at all (a
    // section it refuses): the function must lie within them, else it is not simple.
    const std::span<const uint8_t> bytes = binary->section_bytes(*section);
    const uint64_t start = function.addr - section->addr;  // section_containing: addr >= sh_addr
    if (start > bytes.size() || size > bytes.size() - start ||
        bytes.size() > UINT64_MAX - section->addr) {
      return result;
    }
    decoded.clear();
    uint64_t address = function.addr;
    const uint64_t end = function.addr + size;
    while (address < end) {
      const uint8_t* code = bytes.data() + (address - section->addr);
      size_t left = end - address;
      uint64_t at = address;
      if (!cs_disasm_iter(handle, &code, &left, &at, insn)) return result;  // not simple
      Decoded d{address - function.addr};
      d.nop = insn->id ==
              (arm64 ? static_cast<unsigned>(ARM64_INS_NOP) : static_cast<unsigned>(X86_INS_NOP));
      if (arm64) {
        d.flow = classify_arm64(*insn, d.target);
      } else {
        d.flow = classify(handle, *insn, d.target, d.call_target);
        classify_table_part(*insn, d);
        d.epilogue = insn->id == X86_INS_POP || insn->id == X86_INS_POPF ||
                     insn->id == X86_INS_POPFQ || insn->id == X86_INS_LEAVE;
      }
      // Returns are known even in a function that turns out not simple: BOLT ignores branches
      // from a return wherever it can decode one.
      if (d.flow == Flow::Return) result.return_offsets.push_back(d.offset);
      decoded.push_back(d);
      address += insn->size;
    }
    auto instruction_at = [&](uint64_t offset) {
      auto it = std::lower_bound(decoded.begin(), decoded.end(), offset,
                                 [](const Decoded& x, uint64_t o) { return x.offset < o; });
      return it != decoded.end() && it->offset == offset;
    };

    // Block starts: entry, direct targets inside the function, jump-table targets, and what
    // follows a block end.
    std::vector<uint64_t> starts{0};
    for (const Decoded& d : decoded) {
      if (d.target == UINT64_MAX || d.target < function.addr || d.target >= end) continue;
      const uint64_t offset = d.target - function.addr;
      if (!instruction_at(offset)) return result;  // into an instruction
      starts.push_back(offset);
    }
    table_targets.clear();  // (jump index, target offset)
    if (!arm64 && !read_jump_tables(function.addr, end, instruction_at)) return result;
    for (const auto& [jump, offset] : table_targets) starts.push_back(offset);
    for (size_t i = 0; i + 1 < decoded.size(); ++i) {
      if (!ends_block(decoded[i].flow)) continue;
      // BOLT keeps "jcc a; jmp b" in one block.
      if (decoded[i].flow == Flow::ConditionalJump && decoded[i + 1].flow == Flow::Jump) continue;
      starts.push_back(decoded[i + 1].offset);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());

    // Walk the blocks: each runs from its start to the instruction before the next start.
    size_t next_start = 1;
    first_instruction.clear();
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (result.blocks.empty() ||
          (next_start < starts.size() && decoded[i].offset == starts[next_start])) {
        if (!result.blocks.empty()) ++next_start;
        result.blocks.push_back(BoltBlock{decoded[i].offset, decoded[i].offset});
        result.blocks.back().only_nops = true;
        first_instruction.push_back(i);
      }
      BoltBlock& block = result.blocks.back();
      block.last_offset = decoded[i].offset;
      ++block.instructions;
      block.only_nops = block.only_nops && decoded[i].nop;
      block.ends_in_call = decoded[i].flow == Flow::Call;
      if (decoded[i].flow == Flow::Call && decoded[i].call_target != UINT64_MAX) {
        result.calls.push_back(BoltCall{static_cast<uint32_t>(result.blocks.size() - 1),
                                        decoded[i].offset, decoded[i].call_target});
      }
      const uint64_t next_offset = i + 1 < decoded.size() ? decoded[i + 1].offset : size;
      switch (decoded[i].flow) {
        case Flow::Return:
        case Flow::IndirectJump:
        case Flow::Trap:
          block.falls_through = false;
          break;
        case Flow::Jump: {
          // The jump may follow a conditional jump in the same block: then either may reach
          // the next block.
          const bool after_conditional = i > 0 && decoded[i - 1].flow == Flow::ConditionalJump &&
                                         block.offset != decoded[i].offset;
          const uint64_t next_address = function.addr + next_offset;
          block.falls_through = decoded[i].target == next_address ||
                                (after_conditional && decoded[i - 1].target == next_address);
          break;
        }
        default:
          block.falls_through = true;
      }
    }
    add_edges(result, function.addr, end);
    result.simple = true;
    result.unknown_jump_outside_epilogue = !arm64 && has_unknown_jump_outside_epilogue(result);
    return result;
  }

  // Whether an indirect jump without a table lies in a block that neither pops a register nor
  // leaves the frame, in a function of more than one block (see the header).
  bool has_unknown_jump_outside_epilogue(const BoltFunctionBlocks& f) const {
    if (f.blocks.size() <= 1) return false;
    for (size_t b = 0; b < f.blocks.size(); ++b) {
      if (!f.blocks[b].unknown_successors) continue;
      const size_t last =
          b + 1 < f.blocks.size() ? first_instruction[b + 1] - 1 : decoded.size() - 1;
      bool epilogue = false;
      for (size_t i = first_instruction[b]; i <= last; ++i) epilogue |= decoded[i].epilogue;
      if (!epilogue) return true;
    }
    return false;
  }

  // Reads the tables of the function's indirect jumps into table_targets: entries while they are
  // instruction starts of the function, up to the next table the function uses. False when a
  // table cannot be found where BOLT looks for it (the function is then not simple).
  template <typename InstructionAt>
  bool read_jump_tables(uint64_t begin, uint64_t end, const InstructionAt& instruction_at) {
    constexpr size_t kMaxEntries = 4096;
    std::vector<JumpTable> tables;
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (decoded[i].flow != Flow::IndirectJump) continue;
      const IndirectJump jump = read_indirect_jump(decoded, i);
      if (jump.unreadable_table) return false;
      if (jump.table) tables.push_back(*jump.table);
    }
    for (const JumpTable& table : tables) {
      const ElfSection* section = binary->section_containing(table.address);
      if (section == nullptr || !section->has_file_data()) continue;
      const std::span<const uint8_t> bytes = binary->section_bytes(*section);
      const uint64_t width = table.relative ? 4 : 8;
      for (size_t n = 0; n < kMaxEntries; ++n) {
        const uint64_t at = table.address + n * width;
        if (n > 0 && std::any_of(tables.begin(), tables.end(),
                                 [&](const JumpTable& t) { return t.address == at; }))
          break;
        if (at < section->addr || at - section->addr > bytes.size() ||
            bytes.size() - (at - section->addr) < width)
          break;
        uint64_t target;
        if (table.relative) {
          int32_t entry;
          std::memcpy(&entry, bytes.data() + (at - section->addr), sizeof entry);
          target = table.address + static_cast<uint64_t>(static_cast<int64_t>(entry));
        } else {
          std::memcpy(&target, bytes.data() + (at - section->addr), sizeof target);
        }
        if (target < begin || target >= end || !instruction_at(target - begin)) break;
        table_targets.emplace_back(table.jump, target - begin);
      }
    }
    return true;
  }

  // The control-flow edges of each block, after the blocks are known.
  void add_edges(BoltFunctionBlocks& f, uint64_t begin, uint64_t end) const {
    auto block_at = [&](uint64_t offset) {
      auto it = std::lower_bound(f.blocks.begin(), f.blocks.end(), offset,
                                 [](const BoltBlock& b, uint64_t o) { return b.offset < o; });
      return static_cast<uint32_t>(it - f.blocks.begin());
    };
    for (uint32_t b = 0; b < f.blocks.size(); ++b) {
      BoltBlock& block = f.blocks[b];
      const size_t edges_before = f.edges.size();
      auto add = [&](uint32_t to, uint64_t branch_offset) {
        for (size_t e = edges_before; e < f.edges.size(); ++e)
          if (f.edges[e].to == to) return;
        f.edges.push_back(BoltEdge{b, to, branch_offset});
      };
      auto add_taken = [&](const Decoded& jump) {
        if (jump.target >= begin && jump.target < end)
          add(block_at(jump.target - begin), jump.offset);
        else
          block.leaves = true;  // a tail call, or a jump whose target is unknown
      };
      const size_t last =
          b + 1 < f.blocks.size() ? first_instruction[b + 1] - 1 : decoded.size() - 1;
      const Decoded& d = decoded[last];
      const bool has_next = b + 1 < f.blocks.size();
      switch (d.flow) {
        case Flow::Return:
          block.leaves = true;
          break;
        case Flow::Trap:
          break;
        case Flow::Jump:
          if (last > first_instruction[b] && decoded[last - 1].flow == Flow::ConditionalJump)
            add_taken(decoded[last - 1]);
          add_taken(d);
          break;
        case Flow::ConditionalJump:
          add_taken(d);
          if (has_next)
            add(b + 1, BoltEdge::kFallThrough);
          else
            block.leaves = true;
          break;
        case Flow::IndirectJump: {
          bool known = false;
          for (const auto& [jump, offset] : table_targets) {
            if (jump != last) continue;
            add(block_at(offset), d.offset);
            known = true;
          }
          block.unknown_successors = !known;
          block.leaves = !known;
          break;
        }
        default:
          if (has_next)
            add(b + 1, BoltEdge::kFallThrough);
          else
            block.leaves = true;
      }
    }
  }
};

BoltBlockMap::BoltBlockMap(const ElfBinary& binary) : impl_(std::make_unique<Impl>()) {
  if (binary.machine() != EM_X86_64 && binary.machine() != EM_AARCH64)
    throw std::invalid_argument("BOLT basic blocks are only modelled for x86-64 and AArch64");
  impl_->binary = &binary;
  impl_->arm64 = binary.machine() == EM_AARCH64;
  if (cs_open(impl_->arm64 ? CS_ARCH_ARM64 : CS_ARCH_X86, impl_->arm64 ? CS_MODE_ARM : CS_MODE_64,
              &impl_->handle) != CS_ERR_OK)
    throw std::runtime_error("cannot start the Capstone disassembler");
  cs_option(impl_->handle, CS_OPT_DETAIL, CS_OPT_ON);
  impl_->insn = cs_malloc(impl_->handle);
}

BoltBlockMap::~BoltBlockMap() = default;
BoltBlockMap::BoltBlockMap(BoltBlockMap&&) noexcept = default;

const BoltFunctionBlocks& BoltBlockMap::blocks(const FunctionSymbol& function) {
  auto it = impl_->cache.find(function.addr);
  if (it == impl_->cache.end())
    it = impl_->cache.emplace(function.addr, impl_->build(function)).first;
  return it->second;
}

void BoltBlockMap::drop_cached() {
  impl_->cache = decltype(impl_->cache)();
  impl_->decoded = decltype(impl_->decoded)();  // not `= {}`, which keeps the capacity
  impl_->table_targets = decltype(impl_->table_targets)();
  impl_->first_instruction = decltype(impl_->first_instruction)();
}

}  // namespace profcollect
