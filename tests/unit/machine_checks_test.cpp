// doctor's rules on made-up facts: each check's status, and that every finding that is not ok
// says how to fix it. The thresholds are the kernel's (perf_event_paranoid levels in
// kernel/events/core.c, kallsyms_show_value in kernel/kallsyms.c) and binutils' 2.43 strip bug.
#include "collector/doctor/machine_checks.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <set>

#include "collector/doctor/machine_facts.h"
#include "tests/support/in_memory_system_files.h"

namespace profcollect {
namespace {

uint64_t caps(std::initializer_list<unsigned> bits) {
  uint64_t m = 0;
  for (unsigned b : bits) m |= uint64_t{1} << b;
  return m;
}

// A machine where everything works: root on an Intel host with LBR, a matching debug vmlinux.
MachineFacts healthy() {
  MachineFacts f;
  f.kernel_release = "6.1.0-28-amd64";
  f.machine = "x86_64";
  f.cpu.vendor = "GenuineIntel";
  f.cpu.pmu = "cpu";
  f.cpu.branch_stack = BranchHardware::IntelLbr;
  f.cpu.branch_entries = 32;
  f.branch_open_errno = 0;
  f.permissions = PerfPermissions::from(2, ~uint64_t{0} >> 23, 0);
  f.kptr_restrict = 0;
  f.kallsyms_addresses_visible = true;
  f.bpf_perf_event_probe = 1;
  f.btf_present = true;
  f.lock_budget.unlimited = true;
  f.lock_budget.online_cpus = 8;
  f.strip_version = "GNU strip (GNU Binutils for Debian) 2.40";
  f.modules = std::vector<ModuleDebugFact>{
      {"fuse", "/lib/modules/x/fuse.ko", "/usr/lib/debug/lib/modules/x/fuse.ko"}};
  f.vmlinux.running_build_id = "aa11";
  f.vmlinux.path = "/usr/lib/debug/boot/vmlinux-6.1.0-28-amd64";
  f.vmlinux.build_id = "aa11";
  f.vmlinux.has_debug_info = true;
  return f;
}

const MachineCheck& find(const std::vector<MachineCheck>& checks, const std::string& id) {
  for (const MachineCheck& c : checks)
    if (c.id == id) return c;
  throw std::runtime_error("no check " + id);
}

TEST(MachineChecksTest, EveryCheckIsOkOnAHealthyHostAndNoneAsksForAFix) {
  const std::vector<MachineCheck> checks = check_machine(healthy());
  const std::set<std::string> expected = {"pmu",
                                          "branch_stack",
                                          "spe",
                                          "perf_event_paranoid",
                                          "kptr_restrict",
                                          "capabilities",
                                          "bpf",
                                          "btf",
                                          "mlock_budget",
                                          "vmlinux",
                                          "module_debug_info",
                                          "toolchain"};
  std::set<std::string> ids;
  for (const MachineCheck& c : checks) {
    ids.insert(c.id);
    if (c.id == "spe") {
      EXPECT_EQ(c.status, CheckStatus::Info) << c.detail;  // not an Arm machine
    } else {
      EXPECT_EQ(c.status, CheckStatus::Ok) << c.id << ": " << c.detail;
    }
    EXPECT_TRUE(c.fix.empty()) << c.id << ": " << c.fix;
  }
  EXPECT_EQ(ids, expected);
}

TEST(MachineChecksTest, EveryFindingThatIsNotOkSaysHowToFixIt) {
  MachineFacts f = healthy();
  f.cycles_open_errno = ENOENT;
  f.cpu.branch_stack = BranchHardware::None;
  f.permissions = PerfPermissions::from(3, 0, 1000);
  f.kptr_restrict = 2;
  f.kallsyms_addresses_visible = false;
  f.bpf_perf_event_probe = -EPERM;
  f.lock_budget = LockBudget{};
  f.lock_budget.online_cpus = 2;
  f.lock_budget.rlimit_memlock_bytes = 0;
  f.strip_version = "GNU strip (GNU Binutils) 2.43.1";
  f.modules->front().debug_file.clear();
  f.vmlinux = VmlinuxFact{};
  f.vmlinux.looked_at = {"/boot/vmlinux-x"};
  for (const MachineCheck& c : check_machine(f)) {
    if (c.status == CheckStatus::Limited || c.status == CheckStatus::Missing) {
      EXPECT_FALSE(c.fix.empty()) << c.id << " says no fix: " << c.detail;
    }
  }
}

TEST(MachineChecksTest, AVirtualMachineWithoutPmuIsLimitedToCpuClockAndNamesTheErrno) {
  MachineFacts f = healthy();
  f.cycles_open_errno = ENOENT;
  const MachineCheck c = find(check_machine(f), "pmu");
  EXPECT_EQ(c.status, CheckStatus::Limited);
  EXPECT_NE(c.detail.find("ENOENT"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("cpu-clock"), std::string::npos) << c.detail;
}

TEST(MachineChecksTest, BranchHardwareTheKernelRefusesIsMissingWithTheReason) {
  MachineFacts f = healthy();
  f.branch_open_errno = EOPNOTSUPP;
  const MachineCheck c = find(check_machine(f), "branch_stack");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_NE(c.detail.find("Intel LBR"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("EOPNOTSUPP"), std::string::npos) << c.detail;
  f.branch_open_errno = EACCES;
  EXPECT_NE(find(check_machine(f), "branch_stack").fix.find("CAP_PERFMON"), std::string::npos);
}

TEST(MachineChecksTest, AmdBrsIsNamedAsSuch) {
  MachineFacts f = healthy();
  f.cpu.vendor = "AuthenticAMD";
  f.cpu.branch_stack = BranchHardware::None;
  f.cpu.brs = true;
  f.cpu.branch_entries = 16;
  const MachineCheck c = find(check_machine(f), "branch_stack");
  EXPECT_EQ(c.status, CheckStatus::Ok);
  EXPECT_NE(c.detail.find("AMD BRS"), std::string::npos) << c.detail;
}

TEST(MachineChecksTest, SpeIsLookedForOnArmOnly) {
  MachineFacts f = healthy();
  EXPECT_EQ(find(check_machine(f), "spe").status, CheckStatus::Info);
  f.machine = "aarch64";
  EXPECT_EQ(find(check_machine(f), "spe").status, CheckStatus::Missing);
  f.spe_pmus = {"arm_spe_0"};
  const MachineCheck c = find(check_machine(f), "spe");
  EXPECT_EQ(c.status, CheckStatus::Ok);
  EXPECT_NE(c.detail.find("arm_spe_0"), std::string::npos);
}

// kernel/events/core.c: paranoid 2 allows user samples of own processes only, 1 adds kernel
// samples, 0 CPU-wide events; CAP_PERFMON overrides all; Debian's 3 forbids everything.
TEST(MachineChecksTest, ParanoidLevelsAndCapPerfmonAsTheKernelRulesThem) {
  MachineFacts f = healthy();
  struct Case {
    int paranoid;
    uint64_t caps;
    CheckStatus status;
    const char* says;
  };
  const Case cases[] = {
      {2, 0, CheckStatus::Limited, "every process (-a) no, kernel samples no"},
      {1, 0, CheckStatus::Limited, "every process (-a) no, kernel samples yes"},
      {0, 0, CheckStatus::Ok, "every process (-a) yes, kernel samples yes"},
      {3, 0, CheckStatus::Missing, "own processes no"},
      {3, caps({kCapPerfmon}), CheckStatus::Ok, "own processes yes, every process (-a) yes"},
  };
  for (const Case& c : cases) {
    f.permissions = PerfPermissions::from(c.paranoid, c.caps, 1000);
    const MachineCheck check = find(check_machine(f), "perf_event_paranoid");
    EXPECT_EQ(check.status, c.status) << c.paranoid << ": " << check.detail;
    EXPECT_NE(check.detail.find(c.says), std::string::npos) << check.detail;
  }
}

TEST(MachineChecksTest, HiddenKallsymsAddressesAskForCapSyslogOrALowerKptrRestrict) {
  MachineFacts f = healthy();
  f.kallsyms_addresses_visible = false;
  f.kptr_restrict = 1;
  MachineCheck c = find(check_machine(f), "kptr_restrict");
  EXPECT_EQ(c.status, CheckStatus::Limited);
  EXPECT_NE(c.fix.find("CAP_SYSLOG"), std::string::npos) << c.fix;
  f.kptr_restrict = 2;
  c = find(check_machine(f), "kptr_restrict");
  EXPECT_NE(c.fix.find("kptr_restrict=1"), std::string::npos) << c.fix;
}

TEST(MachineChecksTest, CapabilitiesListWhatIsHeldAndWhatIsLacking) {
  MachineFacts f = healthy();
  f.permissions = PerfPermissions::from(2, caps({kCapPerfmon, kCapSysPtrace}), 998);
  const MachineCheck c = find(check_machine(f), "capabilities");
  EXPECT_NE(c.detail.find("uid 998 has CAP_PERFMON"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("lacks CAP_DAC_READ_SEARCH"), std::string::npos) << c.detail;
  EXPECT_EQ(c.status, CheckStatus::Info);  // CAP_PERFMON: collection works
  f.permissions = PerfPermissions::from(2, 0, 1000);
  EXPECT_EQ(find(check_machine(f), "capabilities").status, CheckStatus::Limited);
}

TEST(MachineChecksTest, BpfRefusedForLackOfPrivilegeAsksForCapBpf) {
  MachineFacts f = healthy();
  f.bpf_perf_event_probe = -EPERM;
  f.unprivileged_bpf_disabled = 2;
  const MachineCheck c = find(check_machine(f), "bpf");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_NE(c.detail.find("EPERM"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("unprivileged_bpf_disabled = 2"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("CAP_BPF"), std::string::npos) << c.fix;
  f.bpf_perf_event_probe = 0;
  EXPECT_EQ(find(check_machine(f), "bpf").status, CheckStatus::Missing);
}

TEST(MachineChecksTest, NoBtfIsOnlyInformation) {
  MachineFacts f = healthy();
  f.btf_present = false;
  EXPECT_EQ(find(check_machine(f), "btf").status, CheckStatus::Info);
}

TEST(MachineChecksTest, TheLockBudgetGivesPagesPerBufferAndFlagsLessThanPerfs) {
  MachineFacts f = healthy();
  f.lock_budget = LockBudget{};
  f.lock_budget.mlock_kb_per_cpu = 516;
  f.lock_budget.online_cpus = 2;
  MachineCheck c = find(check_machine(f), "mlock_budget");
  EXPECT_EQ(c.status, CheckStatus::Ok) << c.detail;
  EXPECT_NE(c.detail.find("128 data pages (512 KiB)"), std::string::npos) << c.detail;
  f.lock_budget.mlock_kb_per_cpu = 36;  // 9 pages per CPU: 8 data pages and the control page
  c = find(check_machine(f), "mlock_budget");
  EXPECT_EQ(c.status, CheckStatus::Limited) << c.detail;
  EXPECT_NE(c.detail.find("8 data pages"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("perf_event_mlock_kb"), std::string::npos);
}

TEST(MachineChecksTest, VmlinuxAbsentForeignOrWithoutDebugInfo) {
  MachineFacts f = healthy();
  f.vmlinux.build_id = "bb22";
  MachineCheck c = find(check_machine(f), "vmlinux");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_NE(c.detail.find("bb22"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("aa11"), std::string::npos) << c.detail;
  f.vmlinux.build_id = "aa11";
  f.vmlinux.has_debug_info = false;
  EXPECT_EQ(find(check_machine(f), "vmlinux").status, CheckStatus::Limited);
  f.vmlinux = VmlinuxFact{};
  f.vmlinux.looked_at = {"/usr/lib/debug/boot/vmlinux-6.1.0-28-amd64",
                         "/boot/vmlinux-6.1.0-28-amd64"};
  c = find(check_machine(f), "vmlinux");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_NE(c.detail.find("/boot/vmlinux-6.1.0-28-amd64"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("linux-image-6.1.0-28-amd64-dbg"), std::string::npos) << c.fix;
}

TEST(MachineChecksTest, ModulesWithoutDebugInfoAreNamed) {
  MachineFacts f = healthy();
  f.modules->push_back({"kvm_intel", "/lib/modules/x/kvm-intel.ko", ""});
  MachineCheck c = find(check_machine(f), "module_debug_info");
  EXPECT_EQ(c.status, CheckStatus::Limited);
  EXPECT_NE(c.detail.find("2 modules loaded, 2 .ko found, 1 with debug info"), std::string::npos)
      << c.detail;
  EXPECT_NE(c.detail.find("kvm_intel"), std::string::npos) << c.detail;
  f.modules.reset();
  EXPECT_EQ(find(check_machine(f), "module_debug_info").status, CheckStatus::Info);
}

TEST(MachineChecksTest, Binutils243StripIsTheKnownHazard) {
  EXPECT_EQ(binutils_version("GNU strip (GNU Binutils for Debian) 2.40"), "2.40");
  EXPECT_EQ(binutils_version("GNU strip version 2.43-3.fc41"), "2.43-3.fc41");
  EXPECT_EQ(binutils_version("llvm-strip, compatible with GNU strip"), "");
  MachineFacts f = healthy();
  for (const char* bad : {"GNU strip (GNU Binutils) 2.43", "GNU strip (GNU Binutils) 2.43.1",
                          "GNU strip version 2.43-3.fc41"}) {
    f.strip_version = bad;
    const MachineCheck c = find(check_machine(f), "toolchain");
    EXPECT_EQ(c.status, CheckStatus::Limited) << bad;
    EXPECT_NE(c.fix.find("llvm-strip"), std::string::npos) << c.fix;
  }
  for (const char* good : {"GNU strip (GNU Binutils) 2.42", "GNU strip (GNU Binutils) 2.44",
                           "GNU strip (GNU Binutils) 2.430"}) {
    f.strip_version = good;
    EXPECT_EQ(find(check_machine(f), "toolchain").status, CheckStatus::Ok) << good;
  }
  f.strip_version = "";
  EXPECT_EQ(find(check_machine(f), "toolchain").status, CheckStatus::Info);
}

using FakeFiles = test::InMemorySystemFiles;

TEST(MachineFactsTest, ModulesAreFoundThroughModulesDepByTheKernelsName) {
  FakeFiles files;
  EXPECT_FALSE(module_debug_facts(files, "/lib/modules/r").has_value());
  files.files["/proc/modules"] =
      "kvm_intel 409600 0 - Live 0x0000000000000000\nfuse 139264 3 - Live 0x0000000000000000\n"
      "mystery 4096 0 - Live 0x0000000000000000\n";
  files.files["/lib/modules/r/modules.dep"] =
      "kernel/arch/x86/kvm/kvm-intel.ko: kernel/arch/x86/kvm/kvm.ko\nkernel/fs/fuse/fuse.ko:\n";
  const auto modules = module_debug_facts(files, "/lib/modules/r");
  ASSERT_TRUE(modules.has_value());
  ASSERT_EQ(modules->size(), 3u);
  EXPECT_EQ((*modules)[0].name, "kvm_intel");
  EXPECT_EQ((*modules)[0].file, "/lib/modules/r/kernel/arch/x86/kvm/kvm-intel.ko");
  EXPECT_EQ((*modules)[1].file, "/lib/modules/r/kernel/fs/fuse/fuse.ko");
  EXPECT_EQ((*modules)[2].file, "");
  for (const ModuleDebugFact& m : *modules)
    EXPECT_EQ(m.debug_file, "") << m.name;  // the files do not exist
}

// The probes faked as a machine where everything is present would answer them: an Intel host
// with LBR, a PMU that opens, BPF that loads, BTF, paranoid -1, kptr_restrict 0, binutils 2.40.
// What gather_machine_facts reads through them becomes those facts and ok checks (the rest --
// this process's capabilities, kallsyms, the lock budget, the vmlinux -- is read from the real
// machine and not judged here).
TEST(MachineFactsTest, ProbesFakedAsAMachineWithEverythingGiveItsFactsAndOkChecks) {
  FakeFiles files;
  files.files["/proc/cpuinfo"] =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr pdcm pebs "
      "bts\n";
  const std::string devices = kEventSourceDevices;
  for (const char* pmu : {"cpu", "software", "tracepoint"})
    files.files[devices + "/" + pmu + "/type"] = "4\n";
  files.files[devices + "/cpu/caps/branches"] = "32\n";
  files.files["/proc/sys/kernel/perf_event_paranoid"] = "-1\n";
  files.files["/proc/sys/kernel/kptr_restrict"] = "0\n";
  files.files["/proc/sys/kernel/unprivileged_bpf_disabled"] = "2\n";
  files.files["/sys/kernel/btf/vmlinux"] = "";
  files.files["/proc/modules"] = "";
  std::vector<perf_event_attr> opened;
  std::vector<std::string> versions_asked;
  const MachineProbes probes{
      .files = files,
      .perf_open =
          [&](const perf_event_attr& a) {
            opened.push_back(a);
            return 0;
          },
      .bpf_probe = [] { return 1; },
      .tool_version = [&](const std::string& tool) -> std::optional<std::string> {
        versions_asked.push_back(tool);
        return std::string("GNU strip (GNU Binutils for Debian) 2.40");
      }};
  const MachineFacts f = gather_machine_facts(probes);
  EXPECT_EQ(f.cpu.vendor, "GenuineIntel");
  EXPECT_EQ(f.cpu.branch_stack, BranchHardware::IntelLbr);
  EXPECT_EQ(f.cpu.branch_entries, 32u);
  EXPECT_EQ(f.cycles_open_errno, 0);
  ASSERT_TRUE(f.branch_open_errno.has_value());
  EXPECT_EQ(*f.branch_open_errno, 0);
  ASSERT_EQ(opened.size(), 2u) << "a trial open of cycles, then of a branch-stack event";
  EXPECT_EQ(opened[0].type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(opened[0].config, PERF_COUNT_HW_CPU_CYCLES);
  EXPECT_NE(opened[1].sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(f.permissions.paranoid, -1);
  EXPECT_EQ(f.kptr_restrict, 0);
  EXPECT_EQ(f.bpf_perf_event_probe, 1);
  EXPECT_TRUE(f.btf_present);
  EXPECT_TRUE(f.spe_pmus.empty());
  EXPECT_EQ(versions_asked, std::vector<std::string>{"strip"});
  ASSERT_TRUE(f.modules.has_value());
  EXPECT_TRUE(f.modules->empty());

  const std::vector<MachineCheck> checks = check_machine(f);
  for (const char* id : {"pmu", "branch_stack", "perf_event_paranoid", "bpf", "btf", "toolchain",
                         "module_debug_info"}) {
    const MachineCheck& c = find(checks, id);
    EXPECT_EQ(c.status, CheckStatus::Ok) << id << ": " << c.detail;
    EXPECT_TRUE(c.fix.empty()) << id << ": " << c.fix;
  }
  EXPECT_EQ(find(checks, "spe").status, CheckStatus::Info) << "not an Arm machine";
}

}  // namespace
}  // namespace profcollect
