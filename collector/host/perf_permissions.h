// What this process may do with perf_event_open, from kernel.perf_event_paranoid and its
// effective capabilities. The rules are the kernel's (kernel/events/core.c):
//   kernel samples       paranoid <= 1, or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8)
//   CPU-wide events (-a) paranoid <= 0, or CAP_PERFMON
//   another user's task  ptrace read access: same user, or CAP_SYS_PTRACE
//   ring-buffer memory   beyond perf_event_mlock_kb + RLIMIT_MEMLOCK only with CAP_IPC_LOCK or
//                        paranoid -1
// Some distributions add paranoid 3: no perf_event_open at all without CAP_PERFMON.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace profcollect {

struct PerfPermissions {
  int paranoid = 2;
  bool cap_perfmon = false;
  bool cap_sys_admin = false;
  bool cap_sys_ptrace = false;
  bool cap_ipc_lock = false;
  uint64_t effective_caps = 0;  // CapEff: bit n = capability n
  uid_t uid = 0;                // real uid: the kernel's ptrace check compares it with the target's

  // Reads /proc/sys/kernel/perf_event_paranoid (2, the kernel's default, when unreadable) and
  // the effective capability set from /proc/self/status.
  static PerfPermissions of_this_process();
  // From a paranoid value and a CapEff mask (bit n = capability n).
  static PerfPermissions from(int paranoid, uint64_t effective_caps, uid_t uid);

  bool perfmon() const { return cap_perfmon || cap_sys_admin; }
  bool may_open_any() const { return paranoid < 3 || perfmon(); }
  bool may_sample_kernel() const { return paranoid <= 1 || perfmon(); }
  bool may_sample_cpus() const { return paranoid <= 0 || perfmon(); }
  bool may_sample_other_users() const { return cap_sys_ptrace; }
  bool may_lock_unlimited() const { return paranoid < 0 || cap_ipc_lock; }
};

// Capability numbers (include/uapi/linux/capability.h).
inline constexpr unsigned kCapSysPtrace = 19;
inline constexpr unsigned kCapSysAdmin = 21;
inline constexpr unsigned kCapIpcLock = 14;
inline constexpr unsigned kCapPerfmon = 38;

}  // namespace profcollect
