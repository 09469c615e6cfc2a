#include "collector/live/cpu_capabilities.h"

#include "collector/live/spe_pmu.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace profcollect {

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string::npos) return {};
  s.erase(0, first);
  s.erase(s.find_last_not_of(" \t\n") + 1);
  return s;
}

// The value of the first "key<tabs>: value" line of /proc/cpuinfo.
std::optional<std::string> cpuinfo_field(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return std::nullopt;
}

std::set<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

// Arm core PMUs are named after the architecture or the core: armv8_pmuv3_0, armv8_cortex_a72,
// armv9_neoverse_n2.
bool is_arm_core_pmu(const std::string& name) {
  return name.rfind("armv8_", 0) == 0 || name.rfind("armv9_", 0) == 0;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

std::optional<std::string> RealSystemFiles::read(const std::string& path) const {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> RealSystemFiles::list(const std::string& directory) const {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

const char* branch_hardware_name(BranchHardware kind) {
  switch (kind) {
    case BranchHardware::None:
      return "none";
    case BranchHardware::IntelLbr:
      return "Intel LBR";
    case BranchHardware::IntelArchLbr:
      return "Intel Architectural LBR";
    case BranchHardware::AmdBrs:
      return "AMD BRS";
    case BranchHardware::AmdLbrV2:
      return "AMD LbrExtV2";
    case BranchHardware::ArmBrbe:
      return "Arm BRBE";
  }
  return "?";
}

std::string CpuCapabilities::describe_probe() const { return join(probed, "; "); }

CpuCapabilities probe_cpu_capabilities(const SystemFiles& files) {
  CpuCapabilities c;
  const std::string devices = kEventSourceDevices;

  // /proc/cpuinfo: x86 names its vendor and flags; Arm names an implementer and no BRBE flag.
  const std::optional<std::string> cpuinfo = files.read("/proc/cpuinfo");
  std::set<std::string> flags;
  if (!cpuinfo) {
    c.probed.push_back("/proc/cpuinfo unreadable");
  } else {
    if (auto v = cpuinfo_field(*cpuinfo, "vendor_id"))
      c.vendor = *v;
    else if (cpuinfo_field(*cpuinfo, "CPU implementer"))
      c.vendor = "Arm";
    if (auto f = cpuinfo_field(*cpuinfo, "flags")) flags = words(*f);
    std::vector<std::string> seen, missing;
    for (const char* flag : {"arch_lbr", "brs", "amd_lbr_v2"})
      (flags.count(flag) ? seen : missing).push_back(flag);
    std::string s = "/proc/cpuinfo: vendor " + (c.vendor.empty() ? "unknown" : c.vendor);
    if (c.vendor != "Arm") {
      if (!seen.empty()) s += ", flags " + join(seen, " ");
      if (!missing.empty()) s += ", no flag " + join(missing, "/");
    }
    c.probed.push_back(s);
  }

  // The core PMU in sysfs. A virtual machine usually has none (only software, tracepoint, ...).
  const std::vector<std::string> pmus = files.list(devices);
  c.spe_pmus = find_spe_pmus(files, &c.probed);
  for (const char* name : {"cpu_core", "cpu"})
    if (std::find(pmus.begin(), pmus.end(), name) != pmus.end()) {
      c.pmu = name;
      break;
    }
  if (c.pmu.empty())
    for (const auto& name : pmus)
      if (is_arm_core_pmu(name)) {
        c.pmu = name;
        break;
      }
  if (c.pmu.empty()) {
    c.probed.push_back(devices + ": no core PMU (cpu, cpu_core, armv8_*/armv9_*)" +
                       (pmus.empty() ? std::string() : ", only " + join(pmus, " ")));
    return c;
  }
  const std::string pmu_dir = devices + "/" + c.pmu;
  if (auto b = files.read(pmu_dir + "/caps/branches")) {
    c.branch_entries = static_cast<unsigned>(std::strtoul(trim(*b).c_str(), nullptr, 10));
    c.probed.push_back(pmu_dir + "/caps/branches: " + std::to_string(c.branch_entries));
  } else {
    c.probed.push_back(pmu_dir + "/caps/branches: absent");
  }
  const bool brs_alias = files.read(pmu_dir + "/events/branch-brs").has_value();
  if (brs_alias) c.probed.push_back(pmu_dir + "/events/branch-brs: present");

  if (c.vendor == "GenuineIntel") {
    if (flags.count("arch_lbr"))
      c.branch_stack = BranchHardware::IntelArchLbr;
    else if (c.branch_entries > 0)
      c.branch_stack = BranchHardware::IntelLbr;
  } else if (c.vendor == "AuthenticAMD" || c.vendor == "HygonGenuine") {
    // Zen4 has both flags' hardware generations behind amd_lbr_v2; BRS is Zen3's.
    if (flags.count("amd_lbr_v2")) c.branch_stack = BranchHardware::AmdLbrV2;
    if (flags.count("brs") || brs_alias) c.brs = true;
  } else if (is_arm_core_pmu(c.pmu) && c.branch_entries > 0) {
    c.branch_stack = BranchHardware::ArmBrbe;
  }
  return c;
}

}  // namespace profcollect
