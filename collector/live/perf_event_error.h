// Why events could not be opened or mapped, as a typed error whose message names what is
// missing and how to grant it. The message builders are pure, so every wording is unit tested
// against the permission rules in perf_permissions.h.
#pragma once

#include "collector/host/setting_error.h"

#include <sys/types.h>

#include <stdexcept>
#include <string>

#include "collector/pipeline/collection_target.h"
#include "collector/host/perf_permissions.h"

namespace profcollect {

class PerfEventError : public SettingError {
 public:
  enum class Kind {
    Permission,    // EACCES/EPERM: a capability or the paranoid sysctl is missing
    NoProcess,     // ESRCH or no /proc/PID: the target is gone
    Unsupported,   // ENOENT/EOPNOTSUPP/ENODEV: no such event on this machine
    TooManyFiles,  // EMFILE/ENFILE: threads x CPUs events exceed the fd limit
    BufferSize,    // mmap refused: locked-memory limit
    Other,
  };

  PerfEventError(Kind kind, int error_number, const std::string& message)
      : SettingError(message), kind_(kind), errno_(error_number) {}

  Kind kind() const { return kind_; }
  int error_number() const { return errno_; }

 private:
  Kind kind_;
  int errno_;
};

// One failed perf_event_open.
struct OpenFailure {
  int error_number = 0;
  TargetKind target = TargetKind::Processes;
  pid_t pid = -1;  // the process it was for; -1 system-wide
  pid_t tid = -1;  // the thread
  int cpu = -1;
  bool other_user = false;      // the process belongs to another user than our real uid
  uid_t owner = 0;              // its owner when other_user
  bool include_kernel = false;  // the attr asked for kernel samples
  std::string event_name;       // "cpu-clock:u"
};

// The typed error for a failed open, its message chosen from the errno, the target and what
// this process may do.
PerfEventError describe_open_failure(const OpenFailure& failure,
                                     const PerfPermissions& permissions);

}  // namespace profcollect
