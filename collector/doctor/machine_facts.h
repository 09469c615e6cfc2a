// The facts `profcollect doctor` judges (collector/doctor/machine_checks.h), read from this machine:
// sysfs, procfs and sysctls through SystemFiles, trial perf_event_open calls, a BPF program load
// through libbpf's probe, the ELF files of the kernel and its modules, and `strip --version`.
// Nothing here decides anything; a failed read leaves its fact at "unknown" or "absent".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collector/live/cpu_capabilities.h"
#include "collector/live/event_selection.h"
#include "collector/doctor/machine_checks.h"

namespace profcollect {

struct MachineProbes {
  const SystemFiles& files;
  PerfOpenProbe perf_open = probe_perf_event_open;
  // libbpf's probe of BPF_PROG_TYPE_PERF_EVENT (see MachineFacts::bpf_perf_event_probe).
  std::function<int()> bpf_probe;
  // First line of a tool's `--version` output, or nullopt when the tool does not run.
  std::function<std::optional<std::string>(const std::string& tool)> tool_version;
};

MachineFacts gather_machine_facts(const MachineProbes& probes);

// The probes of the real machine.
int probe_bpf_perf_event_program();
std::optional<std::string> first_line_of_version(const std::string& tool);

// Loaded modules (/proc/modules) with their files from modules.dep under `modules_dir`
// (/lib/modules/RELEASE) and where their debug info is: the .ko itself, or a separate file under
// /usr/lib/debug. nullopt when /proc/modules does not exist.
std::optional<std::vector<ModuleDebugFact>> module_debug_facts(const SystemFiles& files,
                                                               const std::string& modules_dir);

}  // namespace profcollect
