// The event of a kernel profile, per kind of CPU, judged field by field against what the
// kernel's AutoFDO recipe asks perf for (`perf record -e BR_INST_RETIRED.NEAR_TAKEN:k -a -N -b
// -c 500009`; AMD: RETIRED_TAKEN_BRANCH_INSTRUCTIONS:k) and, without branch stacks, the
// fallbacks (cycles:k, cpu-clock:k), always kernel-only.
#include "collector/kernel/kernel_event_choice.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace profcollect {
namespace {

SelectionContext context_for(const std::string& vendor, BranchHardware hw, bool brs,
                             int cycles_errno, int raw_errno = 0) {
  SelectionContext c;
  c.permissions = PerfPermissions::from(2, uint64_t{1} << kCapPerfmon, 0);
  c.cpu.vendor = vendor;
  c.cpu.branch_stack = hw;
  c.cpu.brs = brs;
  c.cpu.probed = {"fake"};
  c.probe = [=](const perf_event_attr& a) {
    if (a.type == PERF_TYPE_RAW) return raw_errno;
    if (a.type == PERF_TYPE_HARDWARE) return cycles_errno;
    return 0;
  };
  return c;
}

TEST(KernelEventChoice, IntelLbrTakesTheRecipesTakenBranchEvent) {
  const EventSelection s =
      select_kernel_event({}, context_for("GenuineIntel", BranchHardware::IntelLbr, false, 0));
  EXPECT_EQ(s.name, "r20c4:k");
  const perf_event_attr a = make_sampling_attr(s, TargetKind::SystemWide);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(a.config, 0x20c4u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 500009u);
  EXPECT_EQ(a.exclude_user, 1u);
  EXPECT_EQ(a.exclude_kernel, 0u);
  EXPECT_NE(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY});
  EXPECT_NE(s.engine_note.find("500009"), std::string::npos) << s.engine_note;
}

TEST(KernelEventChoice, AmdBrsAndLbrV2TakeRetiredTakenBranches) {
  for (const auto& [hw, brs] :
       {std::pair{BranchHardware::None, true}, std::pair{BranchHardware::AmdLbrV2, false}}) {
    const EventSelection s = select_kernel_event({}, context_for("AuthenticAMD", hw, brs, 0));
    EXPECT_EQ(s.name, "rc4:k");
    const perf_event_attr a = make_sampling_attr(s, TargetKind::SystemWide);
    EXPECT_EQ(a.config, 0xc4u);
    EXPECT_EQ(a.sample_period, 500009u);
    EXPECT_EQ(a.exclude_user, 1u);
    EXPECT_NE(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  }
}

TEST(KernelEventChoice, RefusedBranchEventFallsBackToCyclesAndSaysWhy) {
  const EventSelection s = select_kernel_event(
      {}, context_for("GenuineIntel", BranchHardware::IntelLbr, false, 0, EOPNOTSUPP));
  EXPECT_EQ(s.name, "cycles:k");
  EXPECT_NE(s.engine_note.find("refused"), std::string::npos) << s.engine_note;
  const perf_event_attr a = make_sampling_attr(s, TargetKind::SystemWide);
  EXPECT_EQ(a.exclude_user, 1u);
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
}

TEST(KernelEventChoice, NoPmuFallsBackToCpuClockKernelOnly) {
  const EventSelection s =
      select_kernel_event({}, context_for("AuthenticAMD", BranchHardware::None, false, ENOENT));
  EXPECT_EQ(s.engine, SamplingEngine::CpuClock);
  EXPECT_EQ(s.name, "cpu-clock:k");
  EXPECT_NE(s.engine_note.find("no branch stack"), std::string::npos) << s.engine_note;
  const perf_event_attr a = make_sampling_attr(s, TargetKind::SystemWide);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(a.exclude_user, 1u);
  EXPECT_EQ(a.exclude_kernel, 0u);
}

TEST(KernelEventChoice, WithoutTheRightToKernelSamplesItIsRefused) {
  SelectionContext c = context_for("GenuineIntel", BranchHardware::None, false, 0);
  c.permissions = PerfPermissions::from(2, 0, 1000);
  EXPECT_THROW(select_kernel_event({}, c), EventSelectionError);
}

}  // namespace
}  // namespace profcollect
