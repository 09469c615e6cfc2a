#include "collector/live/perf_event_error.h"

#include <cerrno>

#include "collector/host/errno_name.h"

namespace profcollect {

namespace {

constexpr const char* kSetcap = "sudo setcap ";
constexpr const char* kExe = "+ep $(command -v profcollect)";

std::string paranoid_text(const PerfPermissions& p) {
  return "kernel.perf_event_paranoid is " + std::to_string(p.paranoid);
}

std::string permission_message(const OpenFailure& f, const PerfPermissions& p) {
  const std::string answer = " (perf_event_open: " + errno_name(f.error_number) + ")";
  if (!p.may_open_any())
    return "perf_event_open is forbidden to processes without CAP_PERFMON: " + paranoid_text(p) +
           " (a distribution setting above the kernel's maximum of 2). Grant CAP_PERFMON (`" +
           kSetcap + "cap_perfmon" + kExe +
           "`) or lower it with `sudo sysctl -w "
           "kernel.perf_event_paranoid=2`" +
           answer;
  if (f.target == TargetKind::SystemWide && !p.may_sample_cpus())
    return "system-wide sampling (-a) needs CAP_PERFMON (or CAP_SYS_ADMIN), or "
           "kernel.perf_event_paranoid at most 0; " +
           paranoid_text(p) + " and this process has neither capability. Grant it with `" +
           kSetcap + "cap_perfmon" + kExe + "` or `sudo sysctl -w kernel.perf_event_paranoid=0`" +
           answer;
  if (f.other_user && !p.may_sample_other_users())
    return "process " + std::to_string(f.pid) + " belongs to another user (uid " +
           std::to_string(f.owner) +
           "): sampling it needs CAP_SYS_PTRACE, which this process "
           "lacks. Grant it with `" +
           kSetcap + "cap_perfmon,cap_sys_ptrace" + kExe + "`, or run profcollect as that user" +
           answer;
  if (f.include_kernel && !p.may_sample_kernel())
    return "kernel samples need CAP_PERFMON or kernel.perf_event_paranoid at most 1; " +
           paranoid_text(p) + ". Grant it with `" + kSetcap + "cap_perfmon" + kExe +
           "` or `sudo sysctl -w kernel.perf_event_paranoid=1`" + answer;
  if (f.target != TargetKind::SystemWide)
    return "not allowed to sample process " + std::to_string(f.pid) +
           ": it may be a set-uid or otherwise non-dumpable program, or a security module "
           "(SELinux, AppArmor, Yama) forbids it; " +
           paranoid_text(p) + ". CAP_PERFMON and CAP_SYS_PTRACE (`" + kSetcap +
           "cap_perfmon,cap_sys_ptrace" + kExe + "`) lift the kernel's own checks" + answer;
  return "perf_event_open refused system-wide sampling; " + paranoid_text(p) + ". CAP_PERFMON (`" +
         kSetcap + "cap_perfmon" + kExe + "`) lifts the kernel's checks" + answer;
}

std::string where(const OpenFailure& f) {
  std::string w =
      f.target == TargetKind::SystemWide ? "system-wide" : "thread " + std::to_string(f.tid);
  if (f.cpu >= 0) w += " on CPU " + std::to_string(f.cpu);
  return w;
}

}  // namespace

PerfEventError describe_open_failure(const OpenFailure& f, const PerfPermissions& p) {
  using Kind = PerfEventError::Kind;
  const int e = f.error_number;
  switch (e) {
    case EACCES:
    case EPERM:
      return PerfEventError(Kind::Permission, e, permission_message(f, p));
    case ESRCH:
      return PerfEventError(Kind::NoProcess, e, "no process " + std::to_string(f.pid));
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return PerfEventError(Kind::Unsupported, e,
                            "the event " + f.event_name + " is not supported on this machine (" +
                                errno_name(e) + "); try {event} cpu-clock");
    case EMFILE:
    case ENFILE:
      return PerfEventError(Kind::TooManyFiles, e,
                            "too many open files (" + errno_name(e) +
                                "): profcollect opens one event per thread per CPU; raise the "
                                "limit with `ulimit -n` or sample fewer processes");
    default:
      return PerfEventError(
          Kind::Other, e,
          "perf_event_open failed for " + f.event_name + " (" + where(f) + "): " + errno_name(e));
  }
}

}  // namespace profcollect
