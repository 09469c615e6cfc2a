// What an unprivileged user meets at perf_event_paranoid 2, tried for real: the test forks,
// the child becomes `nobody` (losing every capability), and tries what the issue lists. Its
// own process samples in user mode only; -a, another user's process and a ring buffer beyond
// the locked-memory allowance fail with messages naming what is missing.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include "collector/cli/cli_spelling.h"
#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/live/perf_event_set.h"
#include "collector/host/proc_files.h"
#include "tests/integration/test_support.h"

namespace profcollect {
namespace {

constexpr uid_t kNobody = 65534;

const char* kind_name(PerfEventError::Kind k) {
  switch (k) {
    case PerfEventError::Kind::Permission:
      return "Permission";
    case PerfEventError::Kind::NoProcess:
      return "NoProcess";
    case PerfEventError::Kind::Unsupported:
      return "Unsupported";
    case PerfEventError::Kind::TooManyFiles:
      return "TooManyFiles";
    case PerfEventError::Kind::BufferSize:
      return "BufferSize";
    case PerfEventError::Kind::Other:
      return "Other";
  }
  return "?";
}

// Runs in the child, as nobody: each attempt reports "name\tresult\tdetail" lines.
void attempts(int out) {
  auto report = [out](const std::string& name, const std::string& result,
                      const std::string& detail) {
    const std::string line = name + '\t' + result + '\t' + detail + '\n';
    (void)!::write(out, line.data(), line.size());
  };
  const SelectionContext ctx = SelectionContext::of_this_process();
  EventOptions o;
  o.event = EventRequest::CpuClock;
  const EventSelection sel = select_event(o, ctx);
  report("selection", sel.name, sel.kernel_note);
  const auto cpus = static_cast<uint32_t>(online_cpus().size());
  const uint32_t pages =
      choose_mmap_pages(LockBudget::of_this_process(ctx.permissions), cpus, std::nullopt);

  auto try_open = [&](const std::string& name, TargetKind kind, std::vector<pid_t> pids,
                      uint32_t mmap_pages) -> std::unique_ptr<PerfEventSet> {
    try {
      EventSetOptions options{mmap_pages, {}, sel.name};
      auto set = std::make_unique<PerfEventSet>(
          make_sampling_attr(sel, kind), CollectionTarget{kind, pids}, options, ctx.permissions);
      report(name, "opened", "");
      return set;
    } catch (const PerfEventError& e) {
      report(name, kind_name(e.kind()), e.spelled(cli_flag_of));  // as the command line says it
    } catch (const std::exception& e) {
      report(name, "exception", e.what());
    }
    return nullptr;
  };

  // Own process, user mode: collect while spinning.
  if (auto set = try_open("self", TargetKind::Processes, {::getpid()}, pages)) {
    LiveRecordSource source(*set, sel.name);
    set->enable();
    source.add_existing_process(::getpid());
    // 300 ms of this process's own CPU time (1200 periods at 4000 Hz), not of the wall clock's,
    // which a loaded machine may give it a small part of.
    const auto cpu_time = [] {
      timespec ts{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    };
    const auto end = cpu_time() + std::chrono::milliseconds(300);
    volatile double sink = 0;
    while (cpu_time() < end)
      for (int i = 1; i < 100000; ++i) sink = sink + 1.0 / i;
    source.drain();
    source.finish();
    size_t samples = 0, kernel = 0;
    Record r;
    while (source.next(r))
      if (const auto* s = std::get_if<SampleRecord>(&r)) {
        ++samples;
        if (s->cpumode != CpuMode::User) ++kernel;
      }
    report("self-samples", std::to_string(samples), std::to_string(kernel));
  }
  try_open("system-wide", TargetKind::SystemWide, {}, pages);
  try_open("other-user", TargetKind::Processes, {1}, pages);
  try_open("big-buffer", TargetKind::Processes, {::getpid()}, 4096);
  try {
    choose_mmap_pages(LockBudget::of_this_process(ctx.permissions), cpus, 4096);
    report("big-request", "accepted", "");
  } catch (const BufferSizeError& e) {
    report("big-request", "BufferSizeError", e.spelled(cli_flag_of));
  }
}

// Exit statuses of the child besides 0 (every attempt was made).
constexpr int kCannotBecomeNobody = 3;
constexpr int kExceptionEscaped = 4;

// The whole life of the forked child: it must end here, with _exit, whatever happens. An
// exception escaping into the forked copy of the test binary would otherwise make it go on
// running the remaining tests as nobody, and exit() would run the parent's atexit handlers
// and flush its stdio buffers twice. The parent learns everything from the exit status and the
// lines written to `out`.
[[noreturn]] void run_child(int out) noexcept {
  int status = 0;
  try {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
      status = kCannotBecomeNobody;
    } else {
      attempts(out);
    }
  } catch (const std::exception& e) {
    const std::string line = std::string("child-exception\t") + e.what() + '\n';
    (void)!::write(out, line.data(), line.size());
    status = kExceptionEscaped;
  } catch (...) {
    const std::string line = "child-exception\tnot a std::exception\n";
    (void)!::write(out, line.data(), line.size());
    status = kExceptionEscaped;
  }
  ::_exit(status);
}

struct Outcome {
  std::string result, detail;
};

TEST(LivePermissions, UnprivilegedUserAtParanoidTwo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  std::string paranoid;
  if (!read_first_line("/proc/sys/kernel/perf_event_paranoid", paranoid) || paranoid != "2")
    GTEST_SKIP() << "expects kernel.perf_event_paranoid 2, it is " << paranoid;

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1]);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status) << "\n" << text;
  ASSERT_NE(WEXITSTATUS(status), kCannotBecomeNobody) << "the child could not become nobody";
  ASSERT_EQ(WEXITSTATUS(status), 0)
      << "child exit status (" << kExceptionEscaped << ": an exception escaped)\n"
      << text;
  std::map<std::string, Outcome> got;
  for (const std::string& line : test::split_lines(text)) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    got[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  auto has = [](const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
  };

  EXPECT_EQ(got["selection"].result, "cpu-clock:u");
  EXPECT_TRUE(has(got["selection"].detail, "kernel samples are left out")) << text;

  EXPECT_EQ(got["self"].result, "opened") << got["self"].detail;
  EXPECT_GT(std::stoul(got["self-samples"].result), 10u) << text;
  EXPECT_EQ(got["self-samples"].detail, "0") << "kernel samples despite exclude_kernel";

  EXPECT_EQ(got["system-wide"].result, "Permission") << text;
  EXPECT_TRUE(has(got["system-wide"].detail, "CAP_PERFMON")) << got["system-wide"].detail;
  EXPECT_TRUE(has(got["system-wide"].detail, "sysctl -w kernel.perf_event_paranoid=0"))
      << got["system-wide"].detail;

  EXPECT_EQ(got["other-user"].result, "Permission") << text;
  EXPECT_TRUE(has(got["other-user"].detail, "process 1 belongs to another user (uid 0)"))
      << got["other-user"].detail;
  EXPECT_TRUE(has(got["other-user"].detail, "CAP_SYS_PTRACE")) << got["other-user"].detail;

  EXPECT_EQ(got["big-buffer"].result, "BufferSize") << text;
  EXPECT_TRUE(has(got["big-buffer"].detail, "CAP_IPC_LOCK")) << got["big-buffer"].detail;
  EXPECT_TRUE(has(got["big-buffer"].detail, "perf_event_mlock_kb")) << got["big-buffer"].detail;

  EXPECT_EQ(got["big-request"].result, "BufferSizeError") << text;
  EXPECT_TRUE(has(got["big-request"].detail, "-m 4096")) << got["big-request"].detail;
}

}  // namespace
}  // namespace profcollect
