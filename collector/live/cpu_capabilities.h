// What branch-recording hardware this CPU offers, read from sysfs and /proc/cpuinfo.
//
//   Intel LBR        vendor GenuineIntel, PMU `cpu` (hybrid: `cpu_core`) with caps/branches;
//                    Architectural LBR adds the cpuinfo flag arch_lbr
//   AMD Zen3 BRS     cpuinfo flag brs, or the sysfs alias cpu/events/branch-brs
//   AMD Zen4 LbrExtV2 cpuinfo flag amd_lbr_v2
//   Arm BRBE         an Arm PMU (armv8_pmuv3_N, armv9_..., ...) with caps/branches
//
// The files are read through SystemFiles so each kind of CPU is tested with fake contents
// (tests/unit/cpu_capabilities_test.cpp). A capability found here is only a claim: selection
// confirms it with a trial perf_event_open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace profcollect {

// Read-only access to the files the probe looks at.
class SystemFiles {
 public:
  virtual ~SystemFiles() = default;
  // The whole file, or nothing when it cannot be read.
  virtual std::optional<std::string> read(const std::string& path) const = 0;
  // Names of the entries of a directory (empty when it does not exist).
  virtual std::vector<std::string> list(const std::string& directory) const = 0;
};

// The real files of this machine.
class RealSystemFiles : public SystemFiles {
 public:
  std::optional<std::string> read(const std::string& path) const override;
  std::vector<std::string> list(const std::string& directory) const override;
};

// An Arm SPE PMU (spe_pmu.h).
struct SpePmu {
  std::string name;           // "arm_spe_0"
  uint32_t type = 0;          // perf_event_attr.type
  uint64_t min_interval = 0;  // caps/min_interval; 0 when not published
};

enum class BranchHardware { None, IntelLbr, IntelArchLbr, AmdBrs, AmdLbrV2, ArmBrbe };

struct CpuCapabilities {
  std::string vendor;  // vendor_id of /proc/cpuinfo ("GenuineIntel"), or "Arm"
  std::string pmu;     // the core PMU's sysfs name ("cpu", "cpu_core"), or empty
  BranchHardware branch_stack = BranchHardware::None;  // sampled on cycles, any event
  bool brs = false;                                    // AMD BRS: raw 0xc4 only, fixed period
  unsigned branch_entries = 0;                         // caps/branches, 0 when not published
  // Arm SPE PMUs (arm_spe_N, spe_pmu.h), whatever the core PMU: a sampler, not a branch stack.
  std::vector<SpePmu> spe_pmus;
  std::vector<std::string> probed;  // what was looked at and what it said, for messages

  // "looked at: ...; ..." from `probed`.
  std::string describe_probe() const;
};

inline constexpr const char* kEventSourceDevices = "/sys/bus/event_source/devices";

CpuCapabilities probe_cpu_capabilities(const SystemFiles& files);

// "Intel LBR", "AMD BRS", ...
const char* branch_hardware_name(BranchHardware kind);

}  // namespace profcollect
