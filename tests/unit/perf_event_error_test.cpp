// The messages of failed perf_event_open calls: each names what is missing and how to grant it,
// following the kernel's permission rules for the target.
#include "collector/live/perf_event_error.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace profcollect {
namespace {

using Kind = PerfEventError::Kind;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

OpenFailure failure(int err, TargetKind target, pid_t pid = 4321) {
  OpenFailure f;
  f.error_number = err;
  f.target = target;
  f.pid = f.tid = target == TargetKind::SystemWide ? -1 : pid;
  f.cpu = 0;
  f.event_name = "cpu-clock:u";
  return f;
}

TEST(PerfEventError, SystemWideWithoutPerfmonNamesCapabilityAndSysctl) {
  const auto p = PerfPermissions::from(2, 0, 1000);
  const PerfEventError e = describe_open_failure(failure(EACCES, TargetKind::SystemWide), p);
  EXPECT_EQ(e.kind(), Kind::Permission);
  EXPECT_EQ(e.error_number(), EACCES);
  const std::string m = e.what();
  EXPECT_TRUE(has(m, "system-wide sampling (-a)")) << m;
  EXPECT_TRUE(has(m, "CAP_PERFMON")) << m;
  EXPECT_TRUE(has(m, "kernel.perf_event_paranoid is 2")) << m;
  EXPECT_TRUE(has(m, "sysctl -w kernel.perf_event_paranoid=0")) << m;
  EXPECT_TRUE(has(m, "setcap cap_perfmon+ep")) << m;
  EXPECT_TRUE(has(m, "EACCES")) << m;
}

TEST(PerfEventError, AnotherUsersProcessNamesPtrace) {
  const auto p = PerfPermissions::from(2, 0, 1000);
  OpenFailure f = failure(EACCES, TargetKind::Processes, 1);
  f.other_user = true;
  f.owner = 0;
  const PerfEventError e = describe_open_failure(f, p);
  EXPECT_EQ(e.kind(), Kind::Permission);
  const std::string m = e.what();
  EXPECT_TRUE(has(m, "process 1 belongs to another user (uid 0)")) << m;
  EXPECT_TRUE(has(m, "CAP_SYS_PTRACE")) << m;
  EXPECT_TRUE(has(m, "cap_perfmon,cap_sys_ptrace+ep")) << m;
}

TEST(PerfEventError, ParanoidThreeForbidsEverything) {
  const auto p = PerfPermissions::from(3, 0, 1000);
  const std::string m = describe_open_failure(failure(EACCES, TargetKind::Command), p).what();
  EXPECT_TRUE(has(m, "kernel.perf_event_paranoid is 3")) << m;
  EXPECT_TRUE(has(m, "CAP_PERFMON")) << m;
  EXPECT_TRUE(has(m, "kernel.perf_event_paranoid=2")) << m;
}

TEST(PerfEventError, KernelSamplesWithoutPermission) {
  const auto p = PerfPermissions::from(2, 0, 1000);
  OpenFailure f = failure(EACCES, TargetKind::Command);
  f.include_kernel = true;
  const std::string m = describe_open_failure(f, p).what();
  EXPECT_TRUE(has(m, "kernel samples need CAP_PERFMON")) << m;
  EXPECT_TRUE(has(m, "kernel.perf_event_paranoid=1")) << m;
}

TEST(PerfEventError, SameUserRefusalMentionsNonDumpable) {
  const auto p = PerfPermissions::from(2, 0, 1000);
  const std::string m = describe_open_failure(failure(EPERM, TargetKind::Processes), p).what();
  EXPECT_TRUE(has(m, "not allowed to sample process 4321")) << m;
  EXPECT_TRUE(has(m, "non-dumpable")) << m;
  EXPECT_TRUE(has(m, "EPERM")) << m;
}

TEST(PerfEventError, OtherErrnosHaveTheirKinds) {
  const auto p = PerfPermissions::from(2, 0, 1000);
  const PerfEventError gone = describe_open_failure(failure(ESRCH, TargetKind::Processes, 99), p);
  EXPECT_EQ(gone.kind(), Kind::NoProcess);
  EXPECT_STREQ(gone.what(), "no process 99");
  const PerfEventError nopmu = describe_open_failure(failure(ENOENT, TargetKind::Command), p);
  EXPECT_EQ(nopmu.kind(), Kind::Unsupported);
  EXPECT_TRUE(has(nopmu.what(), "cpu-clock:u is not supported")) << nopmu.what();
  const PerfEventError files = describe_open_failure(failure(EMFILE, TargetKind::Processes), p);
  EXPECT_EQ(files.kind(), Kind::TooManyFiles);
  EXPECT_TRUE(has(files.what(), "ulimit -n")) << files.what();
  const PerfEventError other = describe_open_failure(failure(EINVAL, TargetKind::SystemWide), p);
  EXPECT_EQ(other.kind(), Kind::Other);
  EXPECT_TRUE(has(other.what(), "EINVAL")) << other.what();
  EXPECT_TRUE(has(other.what(), "CPU 0")) << other.what();
}

TEST(PerfPermissions, RulesFollowTheKernel) {
  const auto user2 = PerfPermissions::from(2, 0, 1000);
  EXPECT_TRUE(user2.may_open_any());
  EXPECT_FALSE(user2.may_sample_kernel());
  EXPECT_FALSE(user2.may_sample_cpus());
  EXPECT_FALSE(user2.may_sample_other_users());
  EXPECT_FALSE(user2.may_lock_unlimited());
  const auto user1 = PerfPermissions::from(1, 0, 1000);
  EXPECT_TRUE(user1.may_sample_kernel());
  EXPECT_FALSE(user1.may_sample_cpus());
  const auto user0 = PerfPermissions::from(0, 0, 1000);
  EXPECT_TRUE(user0.may_sample_cpus());
  EXPECT_TRUE(PerfPermissions::from(-1, 0, 1000).may_lock_unlimited());
  EXPECT_FALSE(PerfPermissions::from(3, 0, 1000).may_open_any());
  // Root's full capability set (CapEff 000001ffffffffff).
  const auto root = PerfPermissions::from(3, 0x1ffffffffffull, 0);
  EXPECT_TRUE(root.may_open_any());
  EXPECT_TRUE(root.may_sample_kernel());
  EXPECT_TRUE(root.may_sample_cpus());
  EXPECT_TRUE(root.may_sample_other_users());
  EXPECT_TRUE(root.may_lock_unlimited());
}

}  // namespace
}  // namespace profcollect
