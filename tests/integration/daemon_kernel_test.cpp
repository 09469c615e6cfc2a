// `profcollect ctl kernel --duration S`: the daemon collects a kernel profile beside its normal
// collection and answers, when it is written, with its path; a second request while one runs
// is answered "busy", and other requests are served meanwhile. The profile's files are checked
// as `profcollect kernel` writes them (kernel_profile_vs_perf_test.cpp judges their content).
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class DaemonKernelTest : public LiveFixtureTest {
 protected:
  std::string config_text() const {
    return "output_dir = \"" + out().string() + "\"\n" + "socket = \"" + socket().string() +
           "\"\n" + "event = \"cpu-clock\"\n" + "flush_interval = \"1h\"\n" + "binaries = [" +
           exact_path_pattern(fixture("live_spin")) + "]\n";
  }
  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  fs::path out() const { return tmp_ / "out"; }
  fs::path config() const { return tmp_ / "profcollect.toml"; }

  TempDir tmp_;
};

TEST_F(DaemonKernelTest, AKernelRequestIsAnsweredWithItsPathAndASecondOneWhileItRunsIsBusy) {
  if (::geteuid() != 0) GTEST_SKIP() << "system-wide kernel samples need root (or CAP_PERFMON)";
  write_text(config(), config_text());
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();

  BackgroundProcess first =
      BackgroundProcess::start({profcollect_exe().string(), "ctl", "--json", "--socket",
                                socket().string(), "kernel", "--duration", "4"});
  // The first request is being served once the daemon says so in its log.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (daemon.err().find("collecting a kernel profile") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_NE(daemon.err().find("collecting a kernel profile"), std::string::npos)
      << daemon.describe() << first.describe();

  const CtlRun second = run_ctl(socket(), {"kernel", "--duration", "1"});
  EXPECT_EQ(second.exit_code, 1) << second.describe();
  EXPECT_EQ(second.reply.value("error", "").rfind("busy", 0), 0u) << second.describe();
  const CtlRun status = run_ctl(socket(), {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.describe();
  // The status says the profile in progress: how long, how much is left, where it goes.
  ASSERT_TRUE(status.reply.contains("kernel_profile")) << status.describe();
  EXPECT_EQ(status.reply["kernel_profile"].value("duration_s", 0.0), 4.0) << status.describe();
  EXPECT_LE(status.reply["kernel_profile"].value("remaining_s", 99.0), 4.0) << status.describe();
  EXPECT_EQ(fs::path(status.reply["kernel_profile"].value("output_dir", "")).parent_path(), out())
      << status.describe();
  const CtlRun said = run_ctl(socket(), {"status"}, std::nullopt, /*json=*/false);
  EXPECT_NE(said.out.find("kernel profile in progress"), std::string::npos) << said.describe();
  EXPECT_TRUE(first.running()) << "the first request was answered before its duration\n"
                               << first.describe();

  const std::optional<int> code = first.wait(kPatience);
  ASSERT_TRUE(code) << first.describe() << daemon.describe();
  EXPECT_EQ(*code, 0) << first.describe() << daemon.describe();
  const json reply = json::parse(first.out(), nullptr, false);
  ASSERT_TRUE(reply.is_object()) << first.describe();
  const fs::path path = reply.value("path", "");
  ASSERT_FALSE(path.empty()) << first.describe();
  EXPECT_EQ(path.parent_path().parent_path(), out()) << "under output_dir/kernel-<time>";
  EXPECT_GT(reply.value("samples", uint64_t{0}), 0u) << first.describe();
  if (!reply.value("symbolized", false)) {
    for (const char* f : {"autofdo.unsym", "functions.txt", "meta.json"}) {
      EXPECT_TRUE(fs::is_regular_file(path / f)) << path / f;
    }
    EXPECT_FALSE(read_file(path / "functions.txt").empty());
  } else {
    EXPECT_TRUE(fs::is_directory(path)) << path;
  }
  EXPECT_TRUE(fs::is_regular_file(path.parent_path() / "kernel.json"));

  // Free again: a new request is taken.
  const CtlRun third = run_ctl(socket(), {"kernel", "--duration", "0.5"});
  EXPECT_EQ(third.exit_code, 0) << third.describe() << daemon.describe();
  EXPECT_TRUE(daemon.running()) << daemon.describe();
}

}  // namespace
}  // namespace profcollect::test
