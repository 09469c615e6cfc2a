// `profcollect doctor [--json]`: what this machine lets profcollect do and what stands in the
// way (collector/doctor/machine_checks.h), one line per check with its fix. Exit status 0 when the
// report was made, whatever it says: a missing PMU is a fact, not a failure of the command.
#pragma once

namespace profcollect {

struct DoctorOptions {
  bool json = false;
};

int run_doctor(const DoctorOptions& options);

}  // namespace profcollect
