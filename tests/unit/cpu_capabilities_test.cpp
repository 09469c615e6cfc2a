// CpuCapabilities read from fake sysfs and /proc/cpuinfo contents, one kind of CPU per test: the
// file names and values are those the kernel's PMU drivers publish (arch/x86/events,
// drivers/perf/arm_pmuv3.c) and the flags arch/x86's cpuinfo prints.
#include "collector/live/cpu_capabilities.h"
#include "tests/support/in_memory_system_files.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace profcollect {
namespace {

class FakeSystemFiles : public test::InMemorySystemFiles {
 public:
  void pmu(const std::string& name, const std::string& branches = "") {
    files[std::string(kEventSourceDevices) + "/" + name + "/type"] = "4\n";
    if (!branches.empty())
      files[std::string(kEventSourceDevices) + "/" + name + "/caps/branches"] = branches + "\n";
  }
  void software_pmus() {
    for (const char* n : {"software", "tracepoint", "breakpoint"})
      files[std::string(kEventSourceDevices) + "/" + n + "/type"] = "1\n";
  }
};

std::string x86_cpuinfo(const std::string& vendor, const std::string& extra_flags) {
  return "processor\t: 0\nvendor_id\t: " + vendor +
         "\ncpu family\t: 6\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep " +
         extra_flags + " lahf_lm\nbugs\t\t: spectre_v1\n\nprocessor\t: 1\nvendor_id\t: " + vendor +
         "\n";
}

TEST(CpuCapabilities, IntelWithLbr) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("GenuineIntel", "pdcm pebs bts");
  f.software_pmus();
  f.pmu("cpu", "32");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.vendor, "GenuineIntel");
  EXPECT_EQ(c.pmu, "cpu");
  EXPECT_EQ(c.branch_stack, BranchHardware::IntelLbr);
  EXPECT_EQ(c.branch_entries, 32u);
  EXPECT_FALSE(c.brs);
}

TEST(CpuCapabilities, IntelWithArchitecturalLbrOnAHybridCpu) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("GenuineIntel", "pdcm arch_lbr");
  f.software_pmus();
  f.pmu("cpu_atom", "32");
  f.pmu("cpu_core", "32");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.pmu, "cpu_core");
  EXPECT_EQ(c.branch_stack, BranchHardware::IntelArchLbr);
}

TEST(CpuCapabilities, IntelWithoutLbrInAVirtualMachineWithAPmu) {
  // A hypervisor that virtualizes counters but not LBR publishes no caps/branches.
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("GenuineIntel", "hypervisor");
  f.pmu("cpu");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.branch_stack, BranchHardware::None);
  EXPECT_NE(c.describe_probe().find("/caps/branches: absent"), std::string::npos);
}

TEST(CpuCapabilities, AmdZen3Brs) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("AuthenticAMD", "perfctr_core brs");
  f.software_pmus();
  f.pmu("cpu", "16");
  f.files[std::string(kEventSourceDevices) + "/cpu/events/branch-brs"] = "event=0xc4\n";
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_TRUE(c.brs);
  // BRS records only on its own event: it is not a branch stack for cycles.
  EXPECT_EQ(c.branch_stack, BranchHardware::None);
}

TEST(CpuCapabilities, AmdBrsFoundByTheSysfsAliasAlone) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("AuthenticAMD", "perfctr_core");
  f.pmu("cpu");
  f.files[std::string(kEventSourceDevices) + "/cpu/events/branch-brs"] = "event=0xc4\n";
  EXPECT_TRUE(probe_cpu_capabilities(f).brs);
}

TEST(CpuCapabilities, AmdZen4LbrExtV2) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("AuthenticAMD", "perfctr_core amd_lbr_v2");
  f.pmu("cpu", "16");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.branch_stack, BranchHardware::AmdLbrV2);
  EXPECT_FALSE(c.brs);
  EXPECT_EQ(c.branch_entries, 16u);
}

TEST(CpuCapabilities, ArmWithBrbe) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] =
      "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n";
  f.software_pmus();
  f.pmu("armv8_pmuv3_0", "64");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.vendor, "Arm");
  EXPECT_EQ(c.pmu, "armv8_pmuv3_0");
  EXPECT_EQ(c.branch_stack, BranchHardware::ArmBrbe);
  EXPECT_EQ(c.branch_entries, 64u);
}

TEST(CpuCapabilities, ArmWithoutBrbe) {
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = "processor\t: 0\nCPU implementer\t: 0x41\n";
  f.pmu("armv8_cortex_a72");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.pmu, "armv8_cortex_a72");
  EXPECT_EQ(c.branch_stack, BranchHardware::None);
}

TEST(CpuCapabilities, NoPmuAtAllSaysWhatWasLookedAt) {
  // A virtual machine: flags without branch recording, and only software PMUs in sysfs.
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("AuthenticAMD", "hypervisor");
  f.software_pmus();
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_TRUE(c.pmu.empty());
  EXPECT_EQ(c.branch_stack, BranchHardware::None);
  EXPECT_FALSE(c.brs);
  const std::string d = c.describe_probe();
  EXPECT_NE(d.find("vendor AuthenticAMD"), std::string::npos) << d;
  EXPECT_NE(d.find("no flag arch_lbr/brs/amd_lbr_v2"), std::string::npos) << d;
  EXPECT_NE(d.find("no core PMU"), std::string::npos) << d;
  EXPECT_NE(d.find("breakpoint software tracepoint"), std::string::npos) << d;
}

TEST(CpuCapabilities, BranchFlagsWithoutAPmuClaimNothing) {
  // The flags describe the CPU; without a PMU in sysfs the kernel cannot use them.
  FakeSystemFiles f;
  f.files["/proc/cpuinfo"] = x86_cpuinfo("AuthenticAMD", "brs amd_lbr_v2");
  const CpuCapabilities c = probe_cpu_capabilities(f);
  EXPECT_EQ(c.branch_stack, BranchHardware::None);
  EXPECT_FALSE(c.brs);
  EXPECT_NE(c.describe_probe().find("flags brs amd_lbr_v2"), std::string::npos);
}

}  // namespace
}  // namespace profcollect
