// Issue 12, acceptance 3: after a flush the daemon removes the binary directories that
// retention_days and max_disk_mb leave no room for -- last sampled too long ago, then the least
// recently sampled until the output directory fits -- each removal logged; what it profiles
// now stays.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonSpoolLimitsTest : public LiveFixtureTest {};

// A binary directory an earlier run would have left: meta.json saying when its binary was last
// sampled, and `bytes` of profile.
void plant(const fs::path& dir, std::chrono::hours age, size_t bytes) {
  fs::create_directories(dir);
  const auto last = std::chrono::system_clock::now() - age;
  const uint64_t ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(last.time_since_epoch()).count());
  write_text(dir / "meta.json", "{\"last_sample_ns\": " + std::to_string(ns) + "}\n");
  write_text(dir / "samples.ip", std::string(bytes, '0'));
}

TEST_F(DaemonSpoolLimitsTest, RetentionAndTheDiskBudgetRemoveTheLeastRecentlySampledFirst) {
  TempDir tmp;
  const fs::path out = tmp / "out", socket = tmp / "ctl", config = tmp / "profcollect.toml";
  plant(out / "old-0001", std::chrono::hours(24 * 40), 10'000);    // past retention_days = 30
  plant(out / "older-0002", std::chrono::hours(24 * 3), 700'000);  // the least recently sampled
  plant(out / "newer-0003", std::chrono::hours(24 * 2), 700'000);
  write_text(config, "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
                         "\"\nevent = \"cpu-clock\"\nflush_interval = \"1h\"\nretention_days = 30\n"
                         "max_disk_mb = 1\nbinaries = [" + exact_path_pattern(fixture("live_spin")) + "]\n");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  NotifyListener notify(tmp / "notify");
  BackgroundProcess daemon = start_daemon(config, notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 100ms, kPatience));
  const CtlRun flush = run_ctl(socket, {"flush"});
  ASSERT_EQ(flush.exit_code, 0) << flush.describe();

  EXPECT_FALSE(fs::exists(out / "old-0001")) << daemon.describe();
  // 1.4 MB planted: removing the least recently sampled 700 kB brings it under 1 MiB.
  EXPECT_FALSE(fs::exists(out / "older-0002")) << daemon.describe();
  EXPECT_TRUE(fs::exists(out / "newer-0003")) << daemon.describe();
  EXPECT_EQ(profile_dirs(out, "live_spin").size(), 1u) << "the binary being profiled was removed";
  const std::string log = daemon.err();
  EXPECT_NE(log.find("evicted old-0001"), std::string::npos) << log;
  EXPECT_NE(log.find("): retention_days"), std::string::npos) << log;
  EXPECT_NE(log.find("evicted older-0002"), std::string::npos) << log;
  EXPECT_NE(log.find("): max_disk_mb"), std::string::npos) << log;
  EXPECT_EQ(log.find("evicted newer-0003"), std::string::npos) << log;
  const CtlRun status = run_ctl(socket, {"status"});
  EXPECT_LE(status.reply["disk_bytes"].get<uint64_t>(), uint64_t{1} << 20) << status.describe();

  daemon.signal(SIGTERM);
  const auto code = daemon.wait(kPatience);
  ASSERT_TRUE(code) << daemon.describe();
  EXPECT_EQ(*code, 0) << daemon.describe();
}

}  // namespace
}  // namespace profcollect::test
