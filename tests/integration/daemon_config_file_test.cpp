// The daemon's configuration path when it names no configuration: a directory used to read as
// an empty file (every default: at a reload the running daemon moved its output_dir and socket
// to the defaults, removed its socket and dropped its binaries filter, and answered ok), and a
// FIFO blocked the event loop at a reload. Both are refused, at the start and at a reload, with
// the file and the reason; the running configuration stays and the daemon keeps answering.
// `daemon --check-config` says the same, and prints the configuration in effect.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "tests/integration/convert_judges.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class DaemonConfigFileTest : public LiveFixtureTest {
 protected:
  std::string config_text() const {
    return "output_dir = \"" + out().string() + "\"\nsocket = \"" + socket().string() +
           "\"\nevent = \"cpu-clock\"\nfrequency = 1000\nflush_interval = \"1h\"\nbinaries = [" +
           exact_path_pattern(fixture("live_spin")) + "]\n";
  }
  fs::path out() const { return tmp_ / "out"; }
  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  fs::path config() const { return tmp_ / "profcollect.toml"; }
  TempDir tmp_;
};

TEST_F(DaemonConfigFileTest, ADirectoryOrAFifoIsRefusedAtTheStart) {
  fs::create_directory(config());
  const ProfcollectRun dir = run_profcollect({"daemon", "--config", config().string()});
  EXPECT_EQ(dir.run.exit_code, 1) << dir.describe();
  EXPECT_NE(dir.run.err.find(config().string() + ": is a directory, not a configuration file"),
            std::string::npos)
      << dir.describe();
  fs::remove(config());
  ASSERT_EQ(::mkfifo(config().c_str(), 0600), 0);
  // A FIFO without a writer: the read would wait for ever.
  BackgroundProcess fifo = start_profcollect({"daemon", "--config", config().string()});
  const std::optional<int> code = fifo.wait(kPatience);
  ASSERT_TRUE(code) << "the daemon waited on the FIFO\n" << fifo.describe();
  EXPECT_EQ(*code, 1) << fifo.describe();
  EXPECT_NE(fifo.err().find(config().string() + ": is a FIFO, not a configuration file"),
            std::string::npos)
      << fifo.describe();
  EXPECT_FALSE(fs::exists(socket())) << "nothing opens before the configuration is read";
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(DaemonConfigFileTest, AReloadOfADirectoryOrAFifoIsRefusedAndTheRunningConfigurationStays) {
  write_text(config(), config_text());
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  const CtlRun before = run_ctl(socket(), {"status"});
  ASSERT_EQ(before.exit_code, 0) << before.describe();

  // The path becomes a directory: ctl reload is refused with the file and the reason.
  fs::remove(config());
  fs::create_directory(config());
  const CtlRun as_dir = run_ctl(socket(), {"reload"});
  EXPECT_EQ(as_dir.exit_code, 1) << as_dir.describe();
  EXPECT_NE(as_dir.reply.value("error", "").find(config().string() + ": is a directory"),
            std::string::npos)
      << as_dir.describe();
  // SIGHUP too, and then the FIFO, by ctl and by SIGHUP: each refused at once, the loop free.
  daemon.signal(SIGHUP);
  fs::remove(config());
  ASSERT_EQ(::mkfifo(config().c_str(), 0600), 0);
  const CtlRun as_fifo = run_ctl(socket(), {"reload", "--timeout", "30"});
  EXPECT_EQ(as_fifo.exit_code, 1) << as_fifo.describe();
  EXPECT_NE(as_fifo.reply.value("error", "").find(config().string() + ": is a FIFO"),
            std::string::npos)
      << as_fifo.describe();
  daemon.signal(SIGHUP);
  const CtlRun after = run_ctl(socket(), {"status", "--timeout", "30"});
  ASSERT_EQ(after.exit_code, 0) << "the daemon stopped answering\n"
                                << after.describe() << daemon.describe();
  // Everything as it was: the socket (the daemon answers on it), output_dir, the filter.
  EXPECT_EQ(after.reply.value("output_dir", ""), out().string()) << after.describe();
  EXPECT_EQ(after.reply.value("event", ""), before.reply.value("event", "")) << after.describe();
  EXPECT_TRUE(fs::exists(socket()));
  const std::string log = daemon.err();
  EXPECT_NE(log.find("reload refused, the running configuration is kept: " + config().string() +
                     ": is a directory"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("configuration reloaded"), std::string::npos) << log;

  // The filter stayed: a program it names is profiled, and only that one.
  BackgroundProcess spin = start_target(fixture("live_spin"), {"a", "0.2"});
  ASSERT_TRUE(spin.wait(kPatience)) << spin.describe();
  daemon.signal(SIGTERM);
  ASSERT_EQ(daemon.wait(kPatience), std::optional<int>(0)) << daemon.describe();
  std::vector<std::string> profiled;
  for (const auto& e : fs::directory_iterator(out()))
    if (e.is_directory()) profiled.push_back(e.path().filename().string());
  ASSERT_EQ(profiled.size(), 1u) << daemon.describe();
  EXPECT_EQ(profiled[0].rfind("live_spin-", 0), 0u) << profiled[0];
}

TEST_F(DaemonConfigFileTest, CheckConfigPrintsTheConfigurationInEffectOrTheReason) {
  write_text(config(), config_text());
  const ProfcollectRun good = run_profcollect({"daemon", "--check-config", config().string()});
  ASSERT_EQ(good.run.exit_code, 0) << good.describe();
  // Every key, the defaults included, as TOML that the daemon itself reads back to the same.
  for (const std::string line :
       {"frequency = 1000", "flush_interval = '1h'", "schedule = 'continuous'", "engine = 'perf'",
        "backlog_mb = 64", "kernel = false"}) {
    EXPECT_NE(good.run.out.find(line + "\n"), std::string::npos) << line << "\n" << good.describe();
  }
  write_text(tmp_ / "effective.toml", good.run.out);
  const ProfcollectRun again =
      run_profcollect({"daemon", "--check-config", (tmp_ / "effective.toml").string()});
  ASSERT_EQ(again.run.exit_code, 0) << again.describe();
  EXPECT_EQ(again.run.out.substr(again.run.out.find('\n')),
            good.run.out.substr(good.run.out.find('\n')));
  // --config's file when --check-config names none.
  const ProfcollectRun by_config =
      run_profcollect({"daemon", "--config", config().string(), "--check-config"});
  EXPECT_EQ(by_config.run.exit_code, 0) << by_config.describe();
  EXPECT_EQ(by_config.run.out, good.run.out);

  write_text(config(), config_text() + "frequncy = 5\n");
  const ProfcollectRun bad = run_profcollect({"daemon", "--check-config", config().string()});
  EXPECT_EQ(bad.run.exit_code, 1) << bad.describe();
  EXPECT_NE(bad.run.err.find(config().string() + ":7: frequncy: unknown key"), std::string::npos)
      << bad.describe();
  fs::remove(config());
  fs::create_directory(config());
  const ProfcollectRun dir = run_profcollect({"daemon", "--check-config", config().string()});
  EXPECT_EQ(dir.run.exit_code, 1) << dir.describe();
  EXPECT_NE(dir.run.err.find("is a directory"), std::string::npos) << dir.describe();
  EXPECT_FALSE(fs::exists(socket()));
}

}  // namespace
}  // namespace profcollect::test
