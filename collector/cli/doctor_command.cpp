#include "collector/cli/doctor_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "collector/doctor/machine_checks.h"
#include "collector/doctor/machine_facts.h"

namespace profcollect {
namespace {

void print_text(const MachineFacts& facts, const std::vector<MachineCheck>& checks) {
  std::printf("profcollect doctor: kernel %s on %s\n", facts.kernel_release.c_str(),
              facts.machine.c_str());
  for (const MachineCheck& c : checks) {
    std::printf("%-8s %-20s %s\n", std::string(check_status_name(c.status)).c_str(), c.id.c_str(),
                c.detail.c_str());
    if (!c.fix.empty()) std::printf("%-8s %-20s fix: %s\n", "", "", c.fix.c_str());
  }
}

void print_json(const MachineFacts& facts, const std::vector<MachineCheck>& checks) {
  nlohmann::ordered_json j;
  j["kernel_release"] = facts.kernel_release;
  j["machine"] = facts.machine;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const MachineCheck& c : checks) {
    nlohmann::ordered_json o;
    o["id"] = c.id;
    o["status"] = check_status_name(c.status);
    o["detail"] = c.detail;
    if (!c.fix.empty()) o["fix"] = c.fix;
    list.push_back(std::move(o));
  }
  j["checks"] = std::move(list);
  std::printf("%s\n", j.dump(2).c_str());
}

}  // namespace

int run_doctor(const DoctorOptions& options) {
  const RealSystemFiles files;
  const MachineProbes probes{.files = files,
                             .perf_open = probe_perf_event_open,
                             .bpf_probe = probe_bpf_perf_event_program,
                             .tool_version = first_line_of_version};
  const MachineFacts facts = gather_machine_facts(probes);
  const std::vector<MachineCheck> checks = check_machine(facts);
  if (options.json) {
    print_json(facts, checks);
  } else {
    print_text(facts, checks);
  }
  return 0;
}

}  // namespace profcollect
