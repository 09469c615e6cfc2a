// PLT entry decoding on hand-encoded entries of each layout the linkers emit (x86-64 psABI,
// binutils and lld PLT templates; AArch64 ELF ABI PLT sequence).
#include "mapper/plt_symbols.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace profcollect {
namespace {

// A little assembler for PLT code placed at `base`.
class Code {
 public:
  explicit Code(uint64_t base) : base_(base) {}
  uint64_t here() const { return base_ + bytes.size(); }
  Code& raw(std::initializer_list<uint8_t> b) {
    bytes.insert(bytes.end(), b);
    return *this;
  }
  Code& rel32(uint64_t target, uint64_t next_ip) {
    const uint32_t v = static_cast<uint32_t>(target - next_ip);
    return raw({uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)});
  }
  // x86-64
  Code& endbr64() { return raw({0xf3, 0x0f, 0x1e, 0xfa}); }
  Code& jmp_slot(uint64_t slot, bool bnd = false) {
    if (bnd) raw({0xf2});
    raw({0xff, 0x25});
    return rel32(slot, here() + 4);
  }
  Code& push_slot(uint64_t slot) {
    raw({0xff, 0x35});
    return rel32(slot, here() + 4);
  }
  Code& push_imm(uint32_t v) {
    return raw({0x68, uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)});
  }
  Code& jmp(uint64_t target, bool bnd = false) {
    if (bnd) raw({0xf2});
    raw({0xe9});
    return rel32(target, here() + 4);
  }
  // AArch64
  Code& word(uint32_t w) {
    return raw({uint8_t(w), uint8_t(w >> 8), uint8_t(w >> 16), uint8_t(w >> 24)});
  }
  Code& adrp(unsigned rd, uint64_t target) {
    const int64_t pages = (int64_t(target >> 12) - int64_t(here() >> 12));
    const uint32_t imm = uint32_t(pages) & 0x1fffff;
    return word(0x90000000u | (imm & 3) << 29 | (imm >> 2) << 5 | rd);
  }
  Code& ldr(unsigned rt, unsigned rn, uint32_t offset) {
    return word(0xf9400000u | (offset / 8) << 10 | rn << 5 | rt);
  }
  Code& add_imm(unsigned rd, unsigned rn, uint32_t imm) {
    return word(0x91000000u | imm << 10 | rn << 5 | rd);
  }
  Code& br(unsigned rn) { return word(0xd61f0000u | rn << 5); }
  Code& nop() { return word(0xd503201fu); }

  std::vector<uint8_t> bytes;

 private:
  uint64_t base_;
};

std::vector<PltEntry> decode(uint16_t machine, const std::string& name, uint64_t addr,
                             const Code& code, const std::map<uint64_t, std::string>& slots,
                             uint64_t nominal_entry, uint64_t* entry_size = nullptr) {
  PltSection section{name, addr, code.bytes.size(), nominal_entry};
  std::vector<PltEntry> entries;
  decode_plt_section(machine, code.bytes, section, slots, entries);
  if (entry_size != nullptr) *entry_size = section.entry_size;
  return entries;
}

const std::map<uint64_t, std::string> kSlots = {{0x4000, "printf"}, {0x4008, "cos"}};

TEST(PltSymbols, X86LazyPlt) {
  Code c(0x1020);
  c.push_slot(0x3ff0).jmp_slot(0x3ff8).raw({0x0f, 0x1f, 0x40, 0x00});  // PLT0
  c.jmp_slot(0x4000).push_imm(0).jmp(0x1020);
  c.jmp_slot(0x4008).push_imm(1).jmp(0x1020);
  const auto entries = decode(EM_X86_64, ".plt", 0x1020, c, kSlots, 16);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].addr, 0x1030u);
  EXPECT_EQ(entries[0].callee, "printf");
  EXPECT_EQ(entries[0].size, 16u);
  EXPECT_EQ(entries[1].addr, 0x1040u);
  EXPECT_EQ(entries[1].callee, "cos");
}

TEST(PltSymbols, X86IbtLazyHalfHasNoEntries) {
  // With IBT the .plt entries only push and jump to PLT0; .plt.sec jumps through the slots.
  Code c(0x1020);
  c.push_slot(0x3ff0).jmp_slot(0x3ff8, true).raw({0x0f, 0x1f, 0x00});
  c.endbr64().push_imm(0).jmp(0x1020, true).raw({0x90});
  EXPECT_TRUE(decode(EM_X86_64, ".plt", 0x1020, c, kSlots, 16).empty());
}

TEST(PltSymbols, X86PltSecWithEndbr) {
  Code c(0x1080);
  c.endbr64().jmp_slot(0x4000, true).raw({0x0f, 0x1f, 0x44, 0x00, 0x00});
  c.endbr64().jmp_slot(0x4008, true).raw({0x0f, 0x1f, 0x44, 0x00, 0x00});
  uint64_t entry_size = 0;
  const auto entries = decode(EM_X86_64, ".plt.sec", 0x1080, c, kSlots, 8, &entry_size);
  EXPECT_EQ(entry_size, 16u);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].addr, 0x1080u);
  EXPECT_EQ(entries[1].addr, 0x1090u);
  EXPECT_EQ(entries[1].callee, "cos");
}

TEST(PltSymbols, X86PltGotEightByteEntries) {
  Code c(0x1060);
  c.jmp_slot(0x4008).raw({0x66, 0x90});
  c.jmp_slot(0x4010).raw({0x66, 0x90});  // a slot without a symbol: no entry
  uint64_t entry_size = 0;
  const auto entries = decode(EM_X86_64, ".plt.got", 0x1060, c, kSlots, 8, &entry_size);
  EXPECT_EQ(entry_size, 8u);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].addr, 0x1060u);
  EXPECT_EQ(entries[0].callee, "cos");
  EXPECT_EQ(entries[0].size, 8u);
}

TEST(PltSymbols, X86UnknownBytesEndOnlyTheirEntry) {
  Code c(0x1020);
  c.raw({0x0f, 0x05, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
         0xcc});  // syscall: not a PLT instruction
  c.jmp_slot(0x4008).push_imm(1).jmp(0x1020);
  const auto entries = decode(EM_X86_64, ".plt", 0x1020, c, kSlots, 16);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].addr, 0x1030u);
}

TEST(PltSymbols, AArch64Plt) {
  const uint64_t got = 0x20000;
  const std::map<uint64_t, std::string> slots = {{got + 0x18, "cos"}, {got + 0x20, "sin"}};
  Code c(0x10000);
  c.word(0xa9bf7bf0u).adrp(16, got + 0x10).ldr(17, 16, 0x10).add_imm(16, 16, 0x10).br(17);
  c.nop().nop().nop();  // PLT0: 32 bytes
  c.adrp(16, got + 0x18).ldr(17, 16, 0x18).add_imm(16, 16, 0x18).br(17);
  c.adrp(16, got + 0x20).ldr(17, 16, 0x20).add_imm(16, 16, 0x20).br(17);
  const auto entries = decode(EM_AARCH64, ".plt", 0x10000, c, slots, 0);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].addr, 0x10020u);
  EXPECT_EQ(entries[0].callee, "cos");
  EXPECT_EQ(entries[0].size, 16u);
  EXPECT_EQ(entries[1].addr, 0x10030u);
  EXPECT_EQ(entries[1].callee, "sin");
}

TEST(PltSymbols, AArch64PageCrossingAndBti) {
  // The GOT a page below the PLT (negative adrp immediate), entries starting with "bti c".
  const uint64_t got = 0x0f000;
  const std::map<uint64_t, std::string> slots = {{got + 0xff8, "memcpy"}};
  Code c(0x10000);
  c.word(0xd503245fu).adrp(16, got + 0xff8).ldr(17, 16, 0xff8).add_imm(16, 16, 0xff8).br(17).nop();
  const auto entries = decode(EM_AARCH64, ".plt", 0x10000, c, slots, 0);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].callee, "memcpy");
  EXPECT_EQ(entries[0].size, 20u);
}

TEST(PltSymbols, SectionNamesBoltReads) {
  EXPECT_TRUE(is_plt_section_name(EM_X86_64, ".plt"));
  EXPECT_TRUE(is_plt_section_name(EM_X86_64, ".plt.sec"));
  EXPECT_TRUE(is_plt_section_name(EM_X86_64, ".plt.got"));
  EXPECT_FALSE(is_plt_section_name(EM_X86_64, ".got.plt"));
  EXPECT_TRUE(is_plt_section_name(EM_AARCH64, ".plt"));
  EXPECT_FALSE(is_plt_section_name(EM_AARCH64, ".plt.got"));
}

}  // namespace
}  // namespace profcollect
