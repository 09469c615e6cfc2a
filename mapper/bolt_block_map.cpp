#include "mapper/bolt_block_map.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace profcollect {

namespace {

enum class Flow : uint8_t { Other, Call, Return, Jump, IndirectJump, ConditionalJump, Trap };

struct Decoded {
  uint64_t offset = 0;
  Flow flow = Flow::Other;
  uint64_t target = UINT64_MAX;  // absolute address of a direct jump's target
};

bool ends_block(Flow flow) {
  return flow == Flow::Return || flow == Flow::Jump || flow == Flow::IndirectJump ||
         flow == Flow::ConditionalJump || flow == Flow::Trap;
}

Flow classify(csh handle, const cs_insn& insn, uint64_t& target) {
  const bool direct = insn.detail != nullptr && insn.detail->x86.op_count == 1 &&
                      insn.detail->x86.operands[0].type == X86_OP_IMM;
  if (cs_insn_group(handle, &insn, CS_GRP_CALL)) return Flow::Call;
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
  std::map<uint64_t, BoltFunctionBlocks> cache;  // by function address
  std::vector<Decoded> decoded;                  // scratch, reused

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
      d.flow = arm64 ? classify_arm64(*insn, d.target) : classify(handle, *insn, d.target);
      // Returns are known even in a function that turns out not simple: BOLT ignores branches
      // from a return wherever it can decode one.
      if (d.flow == Flow::Return) result.return_offsets.push_back(d.offset);
      decoded.push_back(d);
      address += insn->size;
    }

    // Block starts: entry, direct targets inside the function, and what follows a block end.
    std::vector<uint64_t> starts{0};
    for (const Decoded& d : decoded) {
      if (d.target == UINT64_MAX || d.target < function.addr || d.target >= end) continue;
      const uint64_t offset = d.target - function.addr;
      auto it = std::lower_bound(decoded.begin(), decoded.end(), offset,
                                 [](const Decoded& x, uint64_t o) { return x.offset < o; });
      if (it == decoded.end() || it->offset != offset) return result;  // into an instruction
      starts.push_back(offset);
    }
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
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (result.blocks.empty() ||
          (next_start < starts.size() && decoded[i].offset == starts[next_start])) {
        if (!result.blocks.empty()) ++next_start;
        result.blocks.push_back(BoltBlock{decoded[i].offset, decoded[i].offset});
      }
      BoltBlock& block = result.blocks.back();
      block.last_offset = decoded[i].offset;
      block.ends_in_call = decoded[i].flow == Flow::Call;
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
    result.simple = true;
    return result;
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
}

}  // namespace profcollect
