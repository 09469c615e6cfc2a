// Issue 12, acceptance 2: the daemon killed with SIGKILL and started again takes up the profiles
// it had flushed: after the restart's first flush every count of the binary's profile is at
// least what it was, and the new samples are added.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonRestartTest : public LiveFixtureTest {};

TEST_F(DaemonRestartTest, AfterSigkillARestartTakesUpTheFlushedProfilesAndCountsOnlyGrow) {
  TempDir tmp;
  const fs::path out = tmp / "out", socket = tmp / "ctl", config = tmp / "profcollect.toml";
  write_text(config, "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
                         "\"\nevent = \"cpu-clock\"\nfrequency = 4000\nflush_interval = \"1h\"\n"
                         "binaries = [" + exact_path_pattern(fixture("live_spin")) + "]\n");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});

  NotifyListener notify(tmp / "notify");
  std::optional<BackgroundProcess> daemon(start_daemon(config, notify));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon->describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun first = run_ctl(socket, {"flush"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const auto dirs = profile_dirs(out, "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << ::testing::PrintToString(dirs) << daemon->describe();
  const StrictFdata before = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(before.valid()) << before.error;
  const nlohmann::json meta_before = read_json_file(dirs[0] / "meta.json");
  ASSERT_GT(before.total(), 0u);

  // Samples after the flush are lost with the process (at most one flush interval's).
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 50ms, kPatience));
  daemon->signal(SIGKILL);
  ASSERT_TRUE(daemon->wait(kPatience));
  EXPECT_TRUE(fs::exists(socket)) << "SIGKILL leaves the socket file";
  daemon.reset();

  // The restart replaces the stale socket and adds to what is in the output directory.
  daemon.emplace(start_daemon(config, notify));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon->describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun second = run_ctl(socket, {"flush"});
  ASSERT_EQ(second.exit_code, 0) << second.describe() << daemon->describe();
  const StrictFdata after = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(after.valid()) << after.error;
  for (const auto& [site, count] : before.counts) {
    const auto it = after.counts.find(site);
    ASSERT_TRUE(it != after.counts.end()) << site.first << "+" << site.second << " vanished after the restart";
    EXPECT_GE(it->second, count) << site.first << "+" << site.second << " went down after the restart";
  }
  EXPECT_GT(after.total(), before.total()) << "the restarted daemon added nothing";
  const nlohmann::json meta_after = read_json_file(dirs[0] / "meta.json");
  EXPECT_GT(meta_after["samples"].get<uint64_t>(), meta_before["samples"].get<uint64_t>());
  EXPECT_EQ(meta_after["first_sample_ns"], meta_before["first_sample_ns"]);

  daemon->signal(SIGTERM);
  const auto code = daemon->wait(kPatience);
  ASSERT_TRUE(code) << daemon->describe();
  EXPECT_EQ(*code, 0) << daemon->describe();
}

}  // namespace
}  // namespace profcollect::test
