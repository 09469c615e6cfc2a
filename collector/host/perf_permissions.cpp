#include "collector/host/perf_permissions.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "collector/host/proc_files.h"

namespace profcollect {

PerfPermissions PerfPermissions::from(int paranoid, uint64_t caps, uid_t uid) {
  PerfPermissions p;
  p.paranoid = paranoid;
  auto has = [caps](unsigned cap) { return ((caps >> cap) & 1) != 0; };
  p.cap_perfmon = has(kCapPerfmon);
  p.cap_sys_admin = has(kCapSysAdmin);
  p.cap_sys_ptrace = has(kCapSysPtrace);
  p.cap_ipc_lock = has(kCapIpcLock);
  p.effective_caps = caps;
  p.uid = uid;
  return p;
}

PerfPermissions PerfPermissions::of_this_process() {
  int paranoid = 2;
  std::string line;
  if (read_first_line("/proc/sys/kernel/perf_event_paranoid", line) && !line.empty())
    paranoid = std::atoi(line.c_str());

  uint64_t caps = 0;
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);) {
    if (l.rfind("CapEff:", 0) == 0) {
      caps = std::strtoull(l.c_str() + 7, nullptr, 16);
      break;
    }
  }
  return from(paranoid, caps, ::getuid());
}

}  // namespace profcollect
