// `profcollect doctor`: what this machine lets profcollect do and what stands in the way, each
// finding with its fix. The findings are a pure function of MachineFacts (what was read and
// probed, collector/doctor/machine_facts.h), so every rule is tested with made-up facts
// (tests/unit/machine_checks_test.cpp) and the probing itself against independent tools
// (tests/integration/doctor_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/live/cpu_capabilities.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/perf_permissions.h"

namespace profcollect {

inline constexpr int kBpfNotBuilt = 2;

enum class CheckStatus {
  Ok,       // works as profcollect wants it
  Limited,  // works, with less than the best (cpu-clock instead of cycles, no kernel symbols)
  Missing,  // not available here; what depends on it is off
  Info,     // a fact that neither helps nor hurts
};

std::string_view check_status_name(CheckStatus status);  // "ok", "limited", "missing", "info"

struct MachineCheck {
  std::string id;  // stable, for --json: "pmu", "branch_stack", "perf_event_paranoid", ...
  CheckStatus status = CheckStatus::Info;
  std::string detail;  // what was found
  std::string fix;     // what to do about it; empty when nothing needs doing
};

// A loaded module and where its debug information is.
struct ModuleDebugFact {
  std::string name;
  std::string file;        // its .ko from modules.dep, empty when not found
  std::string debug_file;  // the file with .debug_info (the .ko or a separate one), or empty
};

// The vmlinux a kernel profile would be symbolized with.
struct VmlinuxFact {
  std::string running_build_id;        // from the kernel's notes, empty when unreadable
  std::string path;                    // the first candidate that exists, empty when none
  std::string build_id;                // its build-id
  bool has_debug_info = false;         // .debug_info present
  std::vector<std::string> looked_at;  // what was looked at and why each was passed over
  std::string error;                   // why the candidate could not be read
};

struct MachineFacts {
  std::string kernel_release;  // uname -r
  std::string machine;         // uname -m
  CpuCapabilities cpu;
  int cycles_open_errno = 0;             // trial open of hardware cycles: 0 or the errno
  std::optional<int> branch_open_errno;  // trial open of the branch engine the CPU claims
  std::vector<std::string> spe_pmus;     // arm_spe_N in sysfs
  PerfPermissions permissions;
  std::optional<int> kptr_restrict;
  bool kallsyms_addresses_visible = false;  // /proc/kallsyms read with non-zero addresses
  std::optional<int> unprivileged_bpf_disabled;
  // libbpf's probe of a BPF_PROG_TYPE_PERF_EVENT program: 1 loads, 0 the kernel lacks it,
  // negative: -errno of the attempt (EPERM without CAP_BPF and CAP_PERFMON); kBpfNotBuilt: this
  // build has no BPF engine, so nothing was probed.
  int bpf_perf_event_probe = 0;
  bool btf_present = false;  // /sys/kernel/btf/vmlinux
  LockBudget lock_budget;
  std::optional<std::string> strip_version;  // first line of `strip --version`; empty: no strip
  // Loaded modules; nullopt when the kernel has no module support (no /proc/modules).
  std::optional<std::vector<ModuleDebugFact>> modules;
  VmlinuxFact vmlinux;
};

// Capability numbers beyond those of perf_permissions.h (include/uapi/linux/capability.h).
inline constexpr unsigned kCapDacReadSearch = 2;
inline constexpr unsigned kCapSyslog = 34;
inline constexpr unsigned kCapBpf = 39;
inline constexpr unsigned kCapCheckpointRestore = 40;

// Every check, in the order `doctor` prints them.
std::vector<MachineCheck> check_machine(const MachineFacts& facts);

// binutils' version from `strip --version`'s first line ("GNU strip (GNU Binutils for Debian)
// 2.43.1" gives "2.43.1"), empty when the line is not binutils'.
std::string binutils_version(const std::string& strip_version_line);

}  // namespace profcollect
