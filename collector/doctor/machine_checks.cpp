#include "collector/doctor/machine_checks.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <sstream>

#include "collector/host/errno_name.h"
#include "collector/live/event_selection.h"

namespace profcollect {
namespace {

bool has_cap(const MachineFacts& f, unsigned cap) {
  return (f.permissions.effective_caps >> cap) & 1;
}

bool is_arm(const MachineFacts& f) {
  return f.machine == "aarch64" || f.machine.rfind("arm", 0) == 0;
}

MachineCheck pmu_check(const MachineFacts& f) {
  if (f.cycles_open_errno == 0)
    return {"pmu", CheckStatus::Ok, "hardware PMU: the cycles event opens (" + f.cpu.pmu + ")", ""};
  return {
      "pmu", CheckStatus::Limited,
      "no hardware PMU: cycles does not open (" + errno_name(f.cycles_open_errno) +
          "); samples come from the cpu-clock timer, so no branch stacks and coarser IP samples",
      "on a virtual machine, give it the host's PMU (KVM/QEMU: -cpu host with pmu=on, libvirt "
      "<pmu state='on'/>; VMware: 'virtualize CPU performance counters'; cloud: a bare-metal or "
      "PMU-enabled instance type)"};
}

MachineCheck branch_check(const MachineFacts& f) {
  const std::string probed = f.cpu.describe_probe();
  if (f.cpu.branch_stack == BranchHardware::None && !f.cpu.brs)
    return {"branch_stack", CheckStatus::Missing,
            "no branch-recording hardware (" + probed +
                "): BOLT profiles come from IP samples (no_lbr), AutoFDO from IP samples",
            "branch stacks need Intel LBR, AMD BRS (Zen 3) or LbrExtV2 (Zen 4), or Arm BRBE; on a "
            "virtual machine the hypervisor must pass them through (KVM: a -cpu model with the "
            "host's LBR and pmu=on)"};
  const std::string name =
      branch_hardware_name(f.cpu.brs ? BranchHardware::AmdBrs : f.cpu.branch_stack);
  const std::string entries =
      f.cpu.branch_entries ? ", " + std::to_string(f.cpu.branch_entries) + " entries" : "";
  if (f.branch_open_errno && *f.branch_open_errno != 0)
    return {"branch_stack", CheckStatus::Missing,
            name + entries + " claimed by the CPU, but a branch-stack event does not open (" +
                errno_name(*f.branch_open_errno) + ")",
            *f.branch_open_errno == EACCES || *f.branch_open_errno == EPERM
                ? "branch stacks need the permissions of a CPU-wide event: CAP_PERFMON or "
                  "kernel.perf_event_paranoid <= 1"
                : "the kernel's PMU driver refuses branch stacks: check dmesg for the PMU and LBR "
                  "lines; on a virtual machine the hypervisor may hide them"};
  return {"branch_stack", CheckStatus::Ok,
          name + entries + ": branch profiles for BOLT and AutoFDO", ""};
}

MachineCheck spe_check(const MachineFacts& f) {
  if (!f.spe_pmus.empty()) {
    std::string list;
    for (const std::string& p : f.spe_pmus) list += (list.empty() ? "" : ", ") + p;
    return {"spe", CheckStatus::Ok, "Arm SPE: " + list, ""};
  }
  if (!is_arm(f))
    return {"spe", CheckStatus::Info, "Arm SPE: not an Arm machine (" + f.machine + ")", ""};
  return {
      "spe", CheckStatus::Missing, "Arm SPE: no arm_spe_N PMU in /sys/bus/event_source/devices",
      "load the arm_spe_pmu module (CONFIG_ARM_SPE_PMU); some kernels also need kpti=off on the "
      "command line; on a virtual machine SPE is not passed through"};
}

MachineCheck paranoid_check(const MachineFacts& f) {
  const PerfPermissions& p = f.permissions;
  std::ostringstream d;
  d << "kernel.perf_event_paranoid = " << p.paranoid
    << (p.perfmon() ? ", with CAP_PERFMON" : ", without CAP_PERFMON") << ": own processes "
    << (p.may_open_any() ? "yes" : "no") << ", every process (-a) "
    << (p.may_sample_cpus() ? "yes" : "no") << ", kernel samples "
    << (p.may_sample_kernel() ? "yes" : "no");
  if (p.may_sample_cpus() && p.may_sample_kernel())
    return {"perf_event_paranoid", CheckStatus::Ok, d.str(), ""};
  return {"perf_event_paranoid", p.may_open_any() ? CheckStatus::Limited : CheckStatus::Missing,
          d.str(),
          "grant CAP_PERFMON (the profcollect service does, as an ambient capability), or run "
          "`sysctl kernel.perf_event_paranoid=" +
              std::string(p.may_sample_kernel() ? "0" : "1") + "` (-1 for everything)"};
}

MachineCheck kptr_check(const MachineFacts& f) {
  std::string value = f.kptr_restrict ? std::to_string(*f.kptr_restrict) : "unreadable";
  std::string detail = "kernel.kptr_restrict = " + value + ", /proc/kallsyms shows " +
                       (f.kallsyms_addresses_visible ? "real addresses" : "zero addresses") +
                       " to this process";
  if (f.kallsyms_addresses_visible) return {"kptr_restrict", CheckStatus::Ok, detail, ""};
  std::string fix;
  // The kernel's rule (kallsyms_show_value): 0 shows addresses when perf_event_paranoid <= 1 or
  // with CAP_SYSLOG, 1 only with CAP_SYSLOG, 2 never.
  if (f.kptr_restrict && *f.kptr_restrict >= 2)
    fix = "run `sysctl kernel.kptr_restrict=1` and grant CAP_SYSLOG (or kptr_restrict=0)";
  else
    fix = "grant CAP_SYSLOG, or set kernel.perf_event_paranoid <= 1 with kptr_restrict=0";
  return {"kptr_restrict", CheckStatus::Limited,
          detail + ": kernel samples cannot be named or placed in the kernel image", fix};
}

MachineCheck capabilities_check(const MachineFacts& f) {
  struct Cap {
    unsigned bit;
    const char* name;
    const char* use;
  };
  static constexpr Cap kCaps[] = {
      {kCapPerfmon, "CAP_PERFMON", "CPU-wide and kernel sampling"},
      {kCapSysPtrace, "CAP_SYS_PTRACE", "other users' processes"},
      {kCapDacReadSearch, "CAP_DAC_READ_SEARCH", "reading their binaries"},
      {kCapCheckpointRestore, "CAP_CHECKPOINT_RESTORE", "/proc/PID/map_files"},
      {kCapSyslog, "CAP_SYSLOG", "kernel addresses in /proc/kallsyms"},
      {kCapBpf, "CAP_BPF", "the BPF engine"},
      {kCapIpcLock, "CAP_IPC_LOCK", "ring buffers beyond the lock limit"},
      {kCapSysAdmin, "CAP_SYS_ADMIN", "everything above, on kernels before 5.8"},
  };
  std::string have, lack;
  for (const Cap& c : kCaps) {
    if (has_cap(f, c.bit)) {
      have += std::string(have.empty() ? "" : ", ") + c.name;
    } else {
      lack += std::string(lack.empty() ? "" : ", ") + c.name + " (" + c.use + ")";
    }
  }
  std::string detail =
      "uid " + std::to_string(f.permissions.uid) + " has " + (have.empty() ? "none" : have);
  if (lack.empty()) return {"capabilities", CheckStatus::Ok, detail, ""};
  detail += "; lacks " + lack;
  const bool needed =
      !has_cap(f, kCapSysAdmin) && !has_cap(f, kCapPerfmon) && !f.permissions.may_sample_cpus();
  return {"capabilities", needed ? CheckStatus::Limited : CheckStatus::Info, detail,
          needed ? "run as root, or give the user CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH "
                   "CAP_CHECKPOINT_RESTORE CAP_SYSLOG (the service unit's AmbientCapabilities=)"
                 : ""};
}

MachineCheck bpf_check(const MachineFacts& f) {
  if (f.bpf_perf_event_probe == kBpfNotBuilt)
    return {"bpf", CheckStatus::Missing, "this build of profcollect has no BPF engine",
            "the perf engine collects; a build with BPF support has the other engine"};
  if (f.bpf_perf_event_probe == 1)
    return {"bpf", CheckStatus::Ok, "BPF perf_event programs load", ""};
  if (f.bpf_perf_event_probe == 0)
    return {
        "bpf", CheckStatus::Missing, "the kernel has no BPF perf_event programs",
        "a kernel with CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS; the perf engine works without"};
  const int err = -f.bpf_perf_event_probe;
  std::string detail = "a BPF perf_event program does not load (" + errno_name(err) + ")";
  if (f.unprivileged_bpf_disabled)
    detail +=
        ", kernel.unprivileged_bpf_disabled = " + std::to_string(*f.unprivileged_bpf_disabled);
  return {"bpf", CheckStatus::Missing, detail,
          err == EPERM || err == EACCES ? "grant CAP_BPF and CAP_PERFMON (or run as root)"
                                        : "check the kernel's BPF configuration and lockdown mode"};
}

MachineCheck btf_check(const MachineFacts& f) {
  if (f.btf_present) return {"btf", CheckStatus::Ok, "kernel BTF: /sys/kernel/btf/vmlinux", ""};
  return {"btf", CheckStatus::Info,
          "no kernel BTF (/sys/kernel/btf/vmlinux): profcollect's BPF programs use only UAPI types "
          "and do not need it",
          ""};
}

MachineCheck lock_budget_check(const MachineFacts& f) {
  const LockBudget& b = f.lock_budget;
  uint32_t pages = 0;
  std::string error;
  try {
    pages = choose_mmap_pages(b, b.online_cpus, std::nullopt);
  } catch (const BufferSizeError& e) {
    error = e.what();
  }
  const std::string detail =
      "ring-buffer lock budget: " + (b.unlimited ? std::string("unlimited") : b.describe());
  if (!error.empty())
    return {"mlock_budget", CheckStatus::Missing, detail + ": " + error, "see above"};
  const std::string per = std::to_string(pages) + " data pages (" +
                          std::to_string(pages * b.page_size / 1024) + " KiB) per CPU buffer";
  if (pages >= kDefaultMaxMmapPages)
    return {"mlock_budget", CheckStatus::Ok, detail + ": " + per, ""};
  return {"mlock_budget", CheckStatus::Limited,
          detail + ": " + per + ", less than perf record's " +
              std::to_string(kDefaultMaxMmapPages) + "; high sample rates may lose samples",
          "raise kernel.perf_event_mlock_kb or RLIMIT_MEMLOCK (LimitMEMLOCK= in a unit), or grant "
          "CAP_IPC_LOCK"};
}

MachineCheck vmlinux_check(const MachineFacts& f) {
  const VmlinuxFact& v = f.vmlinux;
  std::string looked;
  for (const std::string& p : v.looked_at) looked += (looked.empty() ? "" : "; ") + p;
  const std::string fix_install =
      "install the kernel's debug image (Debian: linux-image-" + f.kernel_release +
      "-dbg, Fedora: kernel-debuginfo) or pass --vmlinux; without one, kernel profiles are "
      "written unsymbolized, to finish with llvm-profgen --kernel --unsymbolized-profile";
  if (v.path.empty())
    return {"vmlinux", CheckStatus::Missing,
            "no vmlinux for " + f.kernel_release + (looked.empty() ? "" : ": " + looked),
            fix_install};
  if (!v.error.empty())
    return {"vmlinux", CheckStatus::Missing, v.path + ": " + v.error, fix_install};
  if (!v.running_build_id.empty() && v.build_id != v.running_build_id)
    return {"vmlinux", CheckStatus::Missing,
            v.path + " has build-id " + (v.build_id.empty() ? "none" : v.build_id) +
                ", the running kernel " + v.running_build_id + ": it is another kernel's image",
            fix_install};
  if (!v.has_debug_info)
    return {"vmlinux", CheckStatus::Limited,
            v.path + " matches the running kernel but has no debug info", fix_install};
  return {"vmlinux", CheckStatus::Ok,
          v.path + " with debug info" +
              (v.running_build_id.empty()
                   ? " (the running kernel's build-id is unreadable: not checked)"
                   : ", build-id " + v.build_id + " matches the running kernel"),
          ""};
}

MachineCheck modules_check(const MachineFacts& f) {
  if (!f.modules)
    return {"module_debug_info", CheckStatus::Info,
            "the kernel has no loadable modules (no /proc/modules)", ""};
  size_t with = 0, found = 0;
  std::string without;
  for (const ModuleDebugFact& m : *f.modules) {
    if (!m.file.empty()) ++found;
    if (!m.debug_file.empty()) {
      ++with;
    } else if (without.size() < 200) {
      without += (without.empty() ? "" : ", ") + m.name;
    }
  }
  const std::string counts = std::to_string(f.modules->size()) + " modules loaded, " +
                             std::to_string(found) + " .ko found, " + std::to_string(with) +
                             " with debug info";
  if (with == f.modules->size()) return {"module_debug_info", CheckStatus::Ok, counts, ""};
  return {"module_debug_info", CheckStatus::Limited,
          counts + "; without: " + without + (without.size() >= 200 ? ", ..." : "") +
              ": their samples are counted but get no profile",
          "install the kernel's debug package (Debian: linux-image-" + f.kernel_release +
              "-dbg puts them under /usr/lib/debug/lib/modules) or pass --modules DIR"};
}

// binutils 2.43's strip fails on the .rel.llvm.call-graph-profile section clang puts in
// profile-built objects, so a kernel built with an AutoFDO profile fails at
// `make modules_install INSTALL_MOD_STRIP=1`.
MachineCheck toolchain_check(const MachineFacts& f) {
  if (!f.strip_version || f.strip_version->empty())
    return {"toolchain", CheckStatus::Info, "no strip on PATH", ""};
  const std::string version = binutils_version(*f.strip_version);
  if (version.empty()) return {"toolchain", CheckStatus::Info, "strip: " + *f.strip_version, ""};
  const bool broken =
      version.rfind("2.43", 0) == 0 &&
      (version.size() == 4 || !std::isdigit(static_cast<unsigned char>(version[4])));
  if (broken)
    return {"toolchain", CheckStatus::Limited,
            "binutils " + version +
                ": its strip fails on .rel.llvm.call-graph-profile in modules "
                "built with an AutoFDO profile, so INSTALL_MOD_STRIP=1 breaks modules_install",
            "strip with llvm-strip (make ... STRIP=llvm-strip, or LLVM=1) or use another binutils "
            "release"};
  return {"toolchain", CheckStatus::Ok,
          "binutils " + version + " (strip works on AutoFDO-built modules)", ""};
}

}  // namespace

std::string_view check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::Ok:
      return "ok";
    case CheckStatus::Limited:
      return "limited";
    case CheckStatus::Missing:
      return "missing";
    case CheckStatus::Info:
      return "info";
  }
  return "info";
}

std::string binutils_version(const std::string& line) {
  if (line.find("GNU strip") == std::string::npos && line.find("Binutils") == std::string::npos)
    return "";
  const size_t end = line.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = line.find_last_of(" \t", end);
  std::string v = line.substr(start == std::string::npos ? 0 : start + 1,
                              end - (start == std::string::npos ? 0 : start + 1) + 1);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return "";
  return v;
}

std::vector<MachineCheck> check_machine(const MachineFacts& f) {
  return {pmu_check(f),         branch_check(f),       spe_check(f),     paranoid_check(f),
          kptr_check(f),        capabilities_check(f), bpf_check(f),     btf_check(f),
          lock_budget_check(f), vmlinux_check(f),      modules_check(f), toolchain_check(f)};
}

}  // namespace profcollect
