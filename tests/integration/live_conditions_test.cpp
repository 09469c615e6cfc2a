// Issue 3, acceptance 4, and command mode's exit status: a PID that does not exist; a non-root
// user at kernel.perf_event_paranoid 2 (set for the test, restored after) whose own command
// works in user mode while -a and another user's --pid fail naming CAP_PERFMON / CAP_SYS_PTRACE /
// the sysctl; the target exiting mid-run; a ring-buffer overrun forced with -m 1 that
// collection.json counts and `profcollect report DIR` shows; `-- sh -c 'exit 3'` exiting 3; and
// Ctrl-C (SIGINT to the process group) flushing and returning the child's status.
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class LiveConditionsTest : public LiveFixtureTest {};

// A pid no process has: a child that has exited and been reaped (pids are not reused at once).
pid_t vanished_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST_F(LiveConditionsTest, PidThatDoesNotExistFailsClearly) {
  TempDir tmp;
  const std::string pid = std::to_string(vanished_pid());
  const ProfcollectRun run = run_profcollect({"-o", (tmp / "out").string(), "--pid", pid});
  EXPECT_NE(run.run.exit_code, 0) << run.describe();
  EXPECT_NE(run.run.err.find("no process " + pid), std::string::npos) << run.describe();
  EXPECT_TRUE(profile_dirs(tmp / "out", "").empty()) << "profiles written for a missing process";
}

TEST_F(LiveConditionsTest, TargetExitingMidRunIsFlushedAndCollectionEndsCleanly) {
  const fs::path spin = fixture("live_spin");
  const std::string build_id = readelf_build_id(spin);
  ASSERT_FALSE(build_id.empty());
  TempDir tmp;
  const fs::path out = tmp / "out";
  // Runs until SIGINT, which makes it exit 0; profcollect (default flush interval: 60 s) must
  // notice, flush and end alone. The binary is named by its build-id, the other --binary form.
  BackgroundProcess target = start_target(spin, {"a", "0", "1", "0"});
  BackgroundProcess collector = start_profcollect(
      {"-o", out.string(), "--binary", build_id, "--pid", std::to_string(target.pid())});
  ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                         kPatience))
      << collector.describe();
  // 300 ms of the target's CPU time while it is collected: 1200 periods at 4000 Hz, about half
  // of them in spin_a and half in shared_work.
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), std::chrono::milliseconds(300), kPatience));
  target.signal(SIGINT);
  const auto target_status = target.wait(kPatience);
  ASSERT_TRUE(target_status) << target.describe();
  EXPECT_EQ(*target_status, 0) << target.describe();
  const auto status = collector.wait(kPatience);
  ASSERT_TRUE(status) << "profcollect still runs after its target exited\n" << collector.describe();
  EXPECT_EQ(*status, 0) << collector.describe();

  const auto dirs = profile_dirs(out, "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << collector.describe();
  EXPECT_EQ(dirs[0].filename().string(), "live_spin-" + build_id);
  const StrictFdata fdata = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(fdata.valid()) << fdata.error;
  const auto per = fdata.per_function();
  EXPECT_GT(per.count("spin_a") ? per.at("spin_a") : 0, 100u) << collector.describe();
  EXPECT_GT(per.count("shared_work") ? per.at("shared_work") : 0, 100u) << collector.describe();
  const json meta = read_json_file(dirs[0] / "meta.json");
  ASSERT_FALSE(meta.is_discarded());
  EXPECT_GE(meta.at("samples").get<uint64_t>(), fdata.total());
  EXPECT_FALSE(read_json_file(out / "collection.json").is_discarded());
}

// The highest rate the kernel accepts now (perf_event_max_sample_rate, which it lowers by itself
// when sampling interrupts take too long), at most `wanted`.
uint64_t allowed_rate(uint64_t wanted) {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t max = 0;
  return in >> max && max > 0 && max < wanted ? max : wanted;
}

// An overrun in -a loses records of any process, not only samples: here a program starts while
// every buffer is full, so its COMM and MMAP2 records are lost. Its later samples still land in
// its binary: a sample whose process has no mapping at its address after a loss has the
// process read again from /proc (once per process and loss); without that, every one of them
// would count as no_mapping and the program would get no profile.
TEST_F(LiveConditionsTest,
       AfterAnOverrunInSystemWideModeAProcessStartedDuringTheLossStillResolves) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  const uint64_t rate = allowed_rate(4000);
  BackgroundProcess collector =
      start_profcollect({"-a", "-m", "1", "-e", "cpu-clock", "-F", std::to_string(rate), "--binary",
                         spin.string(), "-o", out.string()});
  ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                         kPatience))
      << collector.describe();
  // Stopped, the collector reads nothing: a busy shell fills every one-page buffer (cpu-clock
  // samples every CPU, idle ones included) long before 100 ms of its CPU time have passed.
  BackgroundProcess filler = BackgroundProcess::start({"sh", "-c", "while :; do :; done"});
  collector.signal(SIGSTOP);
  ASSERT_TRUE(wait_until([&] { return process_state(collector.pid()) == 'T'; }, kPatience))
      << collector.describe();
  ASSERT_TRUE(wait_for_cpu_time(filler.pid(), 100ms, kPatience));
  // The program starts into full buffers, and runs a while before the collector comes back.
  BackgroundProcess target = start_target(spin, {"a", "0"});
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 50ms, kPatience));
  collector.signal(SIGCONT);
  filler.signal(SIGKILL);
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 400ms, kPatience));
  collector.signal(SIGINT);
  ASSERT_EQ(collector.wait(kPatience), std::optional<int>(0)) << collector.describe();

  const json collection = read_json_file(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << collector.describe();
  EXPECT_GT(collection.at("lost_records").get<uint64_t>(), 0u) << collection.dump(2);
  EXPECT_GE(collection.at("resynced_processes").get<uint64_t>(), 1u) << collection.dump(2);
  const auto dirs = profile_dirs(out, "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << "the program started during the loss got no profile\n"
                             << collection.dump(2);
  // 400 ms of its CPU time after the collector came back: some of its samples are lost with
  // one-page buffers, but a tenth of them resolving is far from none.
  const json meta = read_json_file(dirs[0] / "meta.json");
  EXPECT_GE(meta.value("samples", uint64_t{0}), rate * 4 / 10 / 10)
      << meta.dump(2) << collection.dump(2);
}

// A collector in a pid namespace of its own (a daemon in a container) samples the host's
// processes too, but the kernel names them pid 0 there, in their samples and in their MMAP2
// records: no address space can be known for them. Their samples are counted as
// other_pid_namespace (as the BPF engine counts them), not as no_mapping, and profile nothing.
TEST_F(LiveConditionsTest, SamplesOfProcessesOutsideThePidNamespaceAreCountedAsSuch) {
  if (!have_executable("unshare")) GTEST_SKIP() << "unshare (util-linux) is not installed";
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess outside = start_target(spin, {"b", "0"});
  BackgroundProcess unshare = BackgroundProcess::start(
      {"unshare", "--pid", "--fork", "--mount-proc", profcollect_exe().string(), "-a", "-e",
       "cpu-clock", "-F", "1000", "-o", out.string()});
  ASSERT_TRUE(
      wait_until([&] { return unshare.err().find("collecting") != std::string::npos; }, kPatience))
      << unshare.describe();
  ASSERT_TRUE(wait_for_cpu_time(outside.pid(), 300ms, kPatience));
  const std::vector<pid_t> inside = child_processes(unshare.pid());
  ASSERT_EQ(inside.size(), 1u) << unshare.describe();
  ::kill(inside[0], SIGINT);  // pid 1 of its namespace: it takes the signals it handles
  ASSERT_EQ(unshare.wait(kPatience), std::optional<int>(0)) << unshare.describe();
  const json collection = read_json_file(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << unshare.describe();
  // 0.3 s of the outside program's CPU time at 1 kHz, nearly all of it in user mode.
  EXPECT_GE(collection.at("unmapped").at("other_pid_namespace").get<uint64_t>(), 150u)
      << collection.dump(2);
  EXPECT_LT(collection.at("unmapped").at("no_mapping").get<uint64_t>(), 50u) << collection.dump(2);
  EXPECT_TRUE(profile_dirs(out, "live_spin").empty())
      << "a process outside the namespace was profiled";
}

TEST_F(LiveConditionsTest, RingBufferOverrunIsCountedAndReported) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  // One data page per CPU at 20 kHz over two busy threads, which run until SIGINT (then exit 0).
  // (Higher rates also lose the exec's MMAP2 record, leaving nothing to map the samples to.)
  const uint64_t rate = allowed_rate(20000);
  BackgroundProcess collector =
      start_profcollect({"-m", "1", "-F", std::to_string(rate), "-o", out.string(), "--",
                         spin.string(), "a", "0", "2", "0"});
  ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                         kPatience))
      << collector.describe();
  std::vector<pid_t> children;
  ASSERT_TRUE(wait_until([&] { return (children = child_processes(collector.pid())).size() == 1; },
                         kPatience));
  const pid_t target = children[0];
  // profcollect stopped while the threads run 200 ms of CPU time: 4000 timer periods at 20 kHz
  // against the ~70 samples a page holds per CPU, so the buffers overrun however loaded the
  // machine is (a drain that keeps up cannot hide it).
  collector.signal(SIGSTOP);
  ASSERT_TRUE(wait_until([&] { return process_state(collector.pid()) == 'T'; }, kPatience))
      << collector.describe();
  ASSERT_TRUE(wait_for_cpu_time(target, std::chrono::milliseconds(200 * 20000 / rate), kPatience));
  const std::optional<uint64_t> sleeps = voluntary_context_switches(collector.pid());
  ASSERT_TRUE(sleeps);
  collector.signal(SIGCONT);
  // Once it has gone back to sleep twice it has drained every buffer, so the next samples find
  // room, the first of them after a LOST record.
  ASSERT_TRUE(wait_until(
      [&] { return voluntary_context_switches(collector.pid()).value_or(0) >= *sleeps + 2; },
      kPatience))
      << collector.describe();
  ASSERT_TRUE(wait_for_cpu_time(target, std::chrono::milliseconds(50), kPatience));
  collector.signal(SIGINT);  // passed on to live_spin, which exits 0
  const std::optional<int> exit_code = collector.wait(kPatience);
  ASSERT_TRUE(exit_code) << collector.describe();
  ASSERT_EQ(*exit_code, 0) << collector.describe();
  const json collection = read_json_file(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << collector.describe();
  const uint64_t lost = collection.at("lost").get<uint64_t>();
  EXPECT_GT(lost, 0u) << "no loss counted with one-page buffers\n" << collection.dump(2);
  EXPECT_GT(collection.at("lost_records").get<uint64_t>(), 0u) << collection.dump(2);
  EXPECT_GT(collection.at("samples").get<uint64_t>(), 0u) << collection.dump(2);
  // The end of the run says how much was lost and what helps.
  const std::string said = std::to_string(lost) + " samples (";
  EXPECT_NE(collector.err().find("warning: " + said), std::string::npos) << collector.describe();
  EXPECT_NE(collector.err().find("ring_buffer " + std::to_string(lost) + "): raise -m or lower -F"),
            std::string::npos)
      << collector.describe();

  // The report shows the same figure, in JSON and in text.
  const ProfcollectRun as_json = run_profcollect({"report", out.string(), "--json"});
  ASSERT_EQ(as_json.run.exit_code, 0) << as_json.describe();
  const json report = json::parse(as_json.run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << as_json.describe();
  EXPECT_EQ(report.at("lost").get<uint64_t>(), lost);
  EXPECT_EQ(report.at("collection"), collection);
  const ProfcollectRun as_text = run_profcollect({"report", out.string()});
  ASSERT_EQ(as_text.run.exit_code, 0) << as_text.describe();
  bool shown = false;
  for (const auto& line : split_lines(as_text.run.out)) {
    std::istringstream words(line);
    std::string label;
    uint64_t value = 0;
    if (words >> label >> value && label == "lost" && value == lost) shown = true;
  }
  EXPECT_TRUE(shown) << "no 'lost " << lost << "' line in the report:\n" << as_text.run.out;
}

TEST_F(LiveConditionsTest, CommandModeExitsWithTheCommandsStatus) {
  TempDir tmp;
  const ProfcollectRun three =
      run_profcollect({"-q", "-o", (tmp / "a").string(), "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(three.run.exit_code, 3) << three.describe();
  const ProfcollectRun killed =
      run_profcollect({"-q", "-o", (tmp / "b").string(), "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(killed.run.exit_code, 128 + SIGTERM) << killed.describe();
  const ProfcollectRun missing =
      run_profcollect({"-q", "-o", (tmp / "c").string(), "--", (tmp / "no-such-program").string()});
  EXPECT_EQ(missing.run.exit_code, 127) << missing.describe();
  EXPECT_NE(missing.run.err.find("no-such-program"), std::string::npos) << missing.describe();
}

TEST_F(LiveConditionsTest, CtrlCFlushesAndReturnsTheChildsStatus) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  // As from a terminal: profcollect and its child in one process group, SIGINT to the group.
  // Case 1: the child catches SIGINT and exits 42. Case 2: SIGINT kills it (130).
  for (const auto& [extra, expected] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"1", "42"}, 42}, {{}, 128 + SIGINT}}) {
    const fs::path out = tmp / ("out" + std::to_string(expected));
    std::vector<std::string> args = {"-o", out.string(), "--", spin.string(), "a", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    BackgroundProcess collector =
        start_profcollect(args, {.cwd = {}, .own_process_group = true, .run_as = std::nullopt});
    ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                           kPatience))
        << collector.describe();
    // Let samples accumulate: 100 ms of the child's CPU time, 400 periods at 4000 Hz, about half
    // in spin_a. Nothing is flushed yet (every 60 s).
    std::vector<pid_t> children;
    ASSERT_TRUE(wait_until(
        [&] { return (children = child_processes(collector.pid())).size() == 1; }, kPatience));
    ASSERT_TRUE(wait_for_cpu_time(children[0], 100ms, kPatience));
    EXPECT_TRUE(profile_dirs(out, "live_spin").empty()) << "flushed before the end?";
    collector.signal_group(SIGINT);
    const auto status = collector.wait(kPatience);
    ASSERT_TRUE(status) << "profcollect did not end after Ctrl-C\n" << collector.describe();
    EXPECT_EQ(*status, expected) << collector.describe();
    const auto dirs = profile_dirs(out, "live_spin");
    ASSERT_EQ(dirs.size(), 1u) << "no final flush after Ctrl-C\n" << collector.describe();
    const StrictFdata fdata = read_fdata_strictly(dirs[0] / "bolt.fdata");
    ASSERT_TRUE(fdata.valid()) << fdata.error;
    EXPECT_GT(fdata.per_function()["spin_a"], 0u);
  }
}

TEST_F(LiveConditionsTest, UnprivilegedUserAtParanoid2) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create the test user and set the sysctl";
  std::string error;
  const auto user = test_user(error);
  if (!user) GTEST_SKIP() << "cannot create user " << kTestUser << ": " << error;
  ParanoidSetting paranoid(2);
  ASSERT_TRUE(paranoid.ok()) << "cannot set " << kParanoid;

  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  // The user needs a directory of its own to write to.
  const BackgroundProcess::Options as_user = run_in_own_directory(*user, tmp.path());
  const fs::path home = as_user.cwd;

  // Its own command: works, user mode only, and says that kernel samples are left out.
  {
    BackgroundProcess own =
        start_profcollect({"-o", (home / "own").string(), "--", spin.string(), "a", "1"}, as_user);
    const auto status = own.wait(kPatience);
    ASSERT_TRUE(status) << own.describe();
    ASSERT_EQ(*status, 0) << own.describe();
    EXPECT_TRUE(contains_ignoring_case(own.err(), "kernel samples are left out")) << own.describe();
    const json collection = read_json_file(home / "own" / "collection.json");
    ASSERT_FALSE(collection.is_discarded()) << own.describe();
    EXPECT_TRUE(collection.at("event").get<std::string>().ends_with(":u")) << collection.dump(2);
    EXPECT_EQ(collection.at("unmapped").at("kernel").get<uint64_t>(), 0u) << "user mode only";
    const auto dirs = profile_dirs(home / "own", "live_spin");
    ASSERT_EQ(dirs.size(), 1u) << own.describe();
    const StrictFdata fdata = read_fdata_strictly(dirs[0] / "bolt.fdata");
    ASSERT_TRUE(fdata.valid()) << fdata.error;
    EXPECT_GT(fdata.per_function()["spin_a"], 0u);
  }
  // -a: needs CAP_PERFMON or the sysctl.
  {
    BackgroundProcess all =
        start_profcollect({"-o", (home / "all").string(), "-a", "--duration", "1"}, as_user);
    const auto status = all.wait(kPatience);
    ASSERT_TRUE(status) << all.describe();
    EXPECT_NE(*status, 0) << all.describe();
    EXPECT_NE(all.err().find("CAP_PERFMON"), std::string::npos) << all.describe();
    EXPECT_NE(all.err().find("perf_event_paranoid"), std::string::npos) << all.describe();
  }
  // Another user's (root's) process: needs CAP_SYS_PTRACE.
  {
    BackgroundProcess root_target = start_target(spin, {"a", "10"});
    BackgroundProcess other = start_profcollect(
        {"-o", (home / "other").string(), "--pid", std::to_string(root_target.pid())}, as_user);
    const auto status = other.wait(kPatience);
    ASSERT_TRUE(status) << other.describe();
    EXPECT_NE(*status, 0) << other.describe();
    EXPECT_NE(other.err().find("CAP_SYS_PTRACE"), std::string::npos) << other.describe();
  }
}

}  // namespace
}  // namespace profcollect::test
