// InstructionMap and BranchStackCounter on a few hand-assembled x86-64 instructions.
#include "mapper/instruction_map.h"
#include "output/branch_stack_counter.h"

#include <elf.h>
#include <gtest/gtest.h>

namespace profcollect {
namespace {

// 0x1000 push rbp | 0x1001 nop | 0x1002 call +0 | 0x1007 je +2 | 0x1009 jmp +0 | 0x100b jmp rax
// | 0x100d ret | 0x100e nop
const uint8_t kCode[] = {0x55, 0x90, 0xe8, 0,    0,    0,    0,   0x74,
                         0x02, 0xeb, 0x00, 0xff, 0xe0, 0xc3, 0x90};

InstructionMap make_map(std::vector<uint64_t> symbols) {
  std::vector<CodeSection> sections;
  sections.push_back(
      CodeSection{0x1000, std::span<const uint8_t>(kCode, sizeof kCode), std::move(symbols)});
  return InstructionMap(EM_X86_64, std::move(sections));
}

TEST(InstructionMap, SweepsFromEachSymbolAndKnowsBranchKinds) {
  const InstructionMap map = make_map({0x1001});
  EXPECT_FALSE(map.is_code(0x1000)) << "bytes before the section's first symbol are not code";
  ASSERT_TRUE(map.is_code(0x1001));
  EXPECT_EQ(map.at(0x1002)->size, 5);
  EXPECT_EQ(map.at(0x1002)->kind, InstructionKind::Call);
  EXPECT_FALSE(map.is_code(0x1003));
  EXPECT_EQ(map.at(0x1007)->kind, InstructionKind::Other);
  EXPECT_EQ(map.at(0x1009)->kind, InstructionKind::UnconditionalJump);
  EXPECT_EQ(map.at(0x100b)->kind, InstructionKind::Other)
      << "indirect jumps are not 'unconditional'";
  EXPECT_EQ(map.at(0x100d)->kind, InstructionKind::Return);
  std::vector<uint64_t> starts;
  map.for_each(0x1002, 0x100b, [&](const Instruction& i) { starts.push_back(i.address); });
  EXPECT_EQ(starts, (std::vector<uint64_t>{0x1002, 0x1007, 0x1009, 0x100b}));
}

TEST(InstructionMap, ALockPrefixIsAnInstructionOfItsOwnAsLlvmDecodesIt) {
  // llvm-objdump-19 on a distribution kernel: "f0  lock" then "ff 8b 48 03 00 00  decl
  // 0x348(%rbx)", then "c3  retq". llvm-profgen counts IP samples by LLVM's instruction sizes.
  const uint8_t code[] = {0xf0, 0xff, 0x8b, 0x48, 0x03, 0x00, 0x00, 0xc3};
  std::vector<CodeSection> sections;
  sections.push_back(CodeSection{0x2000, std::span<const uint8_t>(code, sizeof code), {0x2000}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  ASSERT_TRUE(map.is_code(0x2000));
  EXPECT_EQ(map.at(0x2000)->size, 1);
  ASSERT_TRUE(map.is_code(0x2001));
  EXPECT_EQ(map.at(0x2001)->size, 6);
  EXPECT_EQ(map.at(0x2007)->kind, InstructionKind::Return);
}

TEST(InstructionMap, InstructionsCapstoneLacksHaveLlvmsLengths) {
  // From llvm-objdump-19 of a distribution kernel: serialize, rdpkru, wrpkru, monitorx, mwaitx
  // (0f 01 xx), rmpadjust (f3 0f 01 fe), pvalidate (f2 0f 01 ff), ud1l %esp, %ecx (0f b9 cc),
  // then a nop: each an instruction of its own, at the address LLVM starts it.
  const uint8_t code[] = {0x0f, 0x01, 0xe8, 0x0f, 0x01, 0xee, 0x0f, 0x01, 0xef,
                          0x0f, 0x01, 0xfa, 0x0f, 0x01, 0xfb, 0xf3, 0x0f, 0x01,
                          0xfe, 0xf2, 0x0f, 0x01, 0xff, 0x0f, 0xb9, 0xcc, 0x90};
  std::vector<CodeSection> sections;
  sections.push_back(CodeSection{0x3000, std::span<const uint8_t>(code, sizeof code), {0x3000}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  std::vector<uint64_t> starts;
  map.for_each(0x3000, 0x3000 + sizeof code - 1,
               [&](const Instruction& i) { starts.push_back(i.address); });
  EXPECT_EQ(starts, (std::vector<uint64_t>{0x3000, 0x3003, 0x3006, 0x3009, 0x300c, 0x300f, 0x3013,
                                           0x3017, 0x301a}));
}

TEST(InstructionMap, WaitpkgInstructionsHaveLlvmsLengths) {
  // llvm-mc-19 -show-encoding: tpause %ecx | umwait %ecx | umonitor %rax | tpause %r9d |
  // umonitor %eax | nop (the kernel's delay_halt_tpause holds the first).
  const uint8_t code[] = {0x66, 0x0f, 0xae, 0xf1, 0xf2, 0x0f, 0xae, 0xf1, 0xf3, 0x0f, 0xae, 0xf0,
                          0x66, 0x41, 0x0f, 0xae, 0xf1, 0x67, 0xf3, 0x0f, 0xae, 0xf0, 0x90};
  std::vector<CodeSection> sections;
  sections.push_back(CodeSection{0x5000, std::span<const uint8_t>(code, sizeof code), {0x5000}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  std::vector<uint64_t> starts;
  map.for_each(0x5000, 0x5000 + sizeof code - 1,
               [&](const Instruction& i) { starts.push_back(i.address); });
  EXPECT_EQ(starts, (std::vector<uint64_t>{0x5000, 0x5004, 0x5008, 0x500c, 0x5011, 0x5016}));
}

TEST(InstructionMap, AvxFiveTwelveInstructionsHaveLlvmsLengths) {
  // Encodings by llvm-objdump-19 (a kernel's blake2s) and llvm-mc-19 -show-encoding:
  // vpermi2d %ymm7,%ymm6,%ymm8 | vprord $8,%xmm3,%xmm3 | vprord $8,64(%rax,%rbx,4),%zmm1 |
  // vpermi2d 4096(%rip),%zmm2,%zmm3 | vpermi2d (%rsp),%zmm2,%zmm3 | nop
  const uint8_t code[] = {0x62, 0x72, 0x4d, 0x28, 0x76, 0xc7,                          //
                          0x62, 0xf1, 0x65, 0x08, 0x72, 0xc3, 0x08,                    //
                          0x62, 0xf1, 0x75, 0x48, 0x72, 0x44, 0x98, 0x01, 0x08,        //
                          0x62, 0xf2, 0x6d, 0x48, 0x76, 0x1d, 0x00, 0x10, 0x00, 0x00,  //
                          0x62, 0xf2, 0x6d, 0x48, 0x76, 0x1c, 0x24,                    //
                          0x90};
  std::vector<CodeSection> sections;
  sections.push_back(CodeSection{0x4000, std::span<const uint8_t>(code, sizeof code), {0x4000}});
  const InstructionMap map(EM_X86_64, std::move(sections));
  std::vector<uint64_t> starts;
  map.for_each(0x4000, 0x4000 + sizeof code - 1,
               [&](const Instruction& i) { starts.push_back(i.address); });
  EXPECT_EQ(starts, (std::vector<uint64_t>{0x4000, 0x4006, 0x400d, 0x4016, 0x4020, 0x4027}));
}

TEST(InstructionMap, ASymbolInsideAnInstructionStartsANewSweep) {
  const InstructionMap map = make_map({0x1001, 0x1004});
  EXPECT_TRUE(map.is_code(0x1002)) << "the call still starts before the next symbol";
  EXPECT_TRUE(map.is_code(0x1004));
  EXPECT_FALSE(map.is_code(0x1007)) << "the sweep from 0x1004 decodes other instructions";
}

TEST(InstructionMap, UnconditionalBranchesInsideARange) {
  const InstructionMap map = make_map({0x1000});
  EXPECT_FALSE(map.crosses_unconditional_branch(0x1000, 0x1002))
      << "the range's last instruction may branch";
  EXPECT_TRUE(map.crosses_unconditional_branch(0x1000, 0x1007));  // the call
  EXPECT_FALSE(map.crosses_unconditional_branch(0x1007, 0x1009));
  EXPECT_FALSE(map.crosses_unconditional_branch(0x100b, 0x100d)) << "jmp rax does not count";
  EXPECT_FALSE(map.crosses_unconditional_branch(0x1009, 0x1009));
}

TEST(BranchStackCounter, RangesBetweenConsecutiveEntriesAndEveryTakenBranch) {
  const InstructionMap map = make_map({0x1000});
  BranchStackCounter counter(map);
  // Newest first: je 0x1007 -> 0x100b; from outside -> 0x1000 (the range 0x1000..0x1007 holds the
  // call: invalid); entry external at both ends (dropped before pairing).
  const BranchEnds stack[] = {{0x1007, 0x100b}, {0x5000, 0x6000}, {0x7000, 0x1009}};
  counter.add(stack, 2);
  const RangeProfile& p = counter.profile();
  EXPECT_EQ(p.branches.at({0x1007, 0x100b}), 2u);
  EXPECT_EQ(p.branches.at({kExternalAddress, 0x1009}), 2u) << "outside sources keep their target";
  EXPECT_EQ(p.branches.size(), 2u);
  // 0x1009..0x1007 is backwards: no range.
  EXPECT_TRUE(p.ranges.empty());
  EXPECT_EQ(counter.stats().external_entries, 1u);
  EXPECT_EQ(counter.stats().invalid_ranges, 1u);

  const BranchEnds forward[] = {{0x1007, 0x100b}, {0x100d, 0x1000}};
  counter.add(forward);
  EXPECT_EQ(counter.profile().ranges.size(), 0u) << "0x1000..0x1007 crosses the call";
  const BranchEnds fine[] = {{0x100d, 0x1000}, {0x1007, 0x100b}};
  counter.add(fine);
  EXPECT_EQ(counter.profile().ranges.at({0x100b, 0x100d}), 1u);
}

}  // namespace
}  // namespace profcollect
