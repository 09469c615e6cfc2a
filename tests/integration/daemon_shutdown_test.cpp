// SIGTERM ends the daemon within 2 s, its final flush included: that flush has final_flush_timeout (1 s)
// (by default); binaries it does not reach keep what their last flush wrote, and it says
// so. Here fourteen distinct programs have samples no flush has written yet when SIGTERM comes.
// The daemon's own measure of the time from the signal to its end is read from its log (a
// measure of the test's would count the machine's load as the daemon's); whatever was written,
// each binary's files agree with its meta.json.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <regex>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class DaemonShutdownTest : public SpoolFixtureTest {
 protected:
  TempDir tmp_;
};

TEST_F(DaemonShutdownTest, SigtermEndsWithinTwoSecondsAndWhatWasWrittenIsConsistent) {
  const fs::path out = tmp_ / "out", socket = tmp_ / "ctl", config = tmp_ / "profcollect.toml";
  std::vector<fs::path> programs;
  std::string patterns;
  for (int i = 0; i < 14; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "spool_hot_%02d", i);
    programs.push_back(spool_fixture(name));
    patterns += (patterns.empty() ? "" : ", ") + exact_path_pattern(programs.back());
  }
  write_text(
      config,
      "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
          "\"\nevent = \"cpu-clock\"\nfrequency = 1000\nflush_interval = \"1h\"\nbinaries = [" +
          patterns + "]\n");
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config, notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  std::vector<BackgroundProcess> running;
  for (const fs::path& p : programs) {
    running.push_back(start_target(p, {"0.05"}));
    ASSERT_TRUE(wait_until([&] { return running.back().out().find("idle") != std::string::npos; },
                           kPatience))
        << running.back().describe();
  }
  daemon.signal(SIGTERM);
  ASSERT_EQ(daemon.wait(kPatience), std::optional<int>(0)) << daemon.describe();
  const std::string log = daemon.err();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex("stopped ([0-9.]+) s after the signal"))) << log;
  EXPECT_LE(std::stod(m[1]), 2.0) << log;
  const bool complete = log.find("; profiles in " + out.string()) != std::string::npos;
  const bool cut = log.find("final flush cut short after") != std::string::npos;
  EXPECT_TRUE(complete != cut)
      << "the end says either where the profiles are or that it was cut short\n"
      << log;
  size_t written = 0;
  std::string names;  // for the message
  for (const auto& e : fs::directory_iterator(out)) {
    if (!e.is_directory() || e.path().filename().string().starts_with(".")) continue;
    names += e.path().filename().string() + "\n";
    const StrictFdata fdata = read_fdata_strictly(e.path() / "bolt.fdata");
    ASSERT_TRUE(fdata.valid()) << e.path() << ": " << fdata.error;
    const nlohmann::json meta = read_json_file(e.path() / "meta.json");
    EXPECT_EQ(meta.value("samples", uint64_t{0}), fdata.total()) << e.path();
    ++written;
  }
  if (complete) EXPECT_EQ(written, programs.size()) << log << names;
}

}  // namespace
}  // namespace profcollect::test
