// The service as a user's host runs it (issue 12, acceptance 1 and 2): the installed unit and
// daemon under a real systemd (a Debian 12 container, systemd_container.h), driven only through
// systemctl, journalctl and `profcollect ctl`.
//
// - `systemctl start` returns once the daemon said READY=1 (Type=notify); a program runs; `ctl
//   flush` writes its profiles under /var/lib/profcollect, which llvm-bolt-19 and
//   llvm-profdata-19 read (the program's hot function profiled); `systemctl reload` with a
//   broken configuration keeps the service running on the old one and the journal says why;
//   `systemctl stop` ends it with status 0 after a final flush (the samples of a run after the
//   last requested flush reach the files).
// - With the watchdog set (a drop-in WatchdogSec=), a running daemon's pings keep it alive for
//   several periods, and a daemon stopped with SIGSTOP is restarted by systemd for that reason; a daemon killed with SIGKILL is restarted, and every count of a profile flushed
//   before only grows.
// - A `profcollect daemon` started by hand beside the service (issue 22), with the same
//   configuration or with only the output directory in common, is refused naming the service's
//   PID, and the service keeps its socket and goes on collecting.
//
// The program is the live fixture live_spin (dynamically linked: the container is the same
// Debian release), which spins for a given amount of its own CPU time, copied into the
// container; its profiles are judged on the host against the same file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/integration/convert_judges.h"
#include "tests/integration/systemd_container.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr const char* kProgram = "/usr/local/bin/live_spin";
constexpr const char* kConfig = "/etc/profcollect/profcollect.toml";
constexpr const char* kOutput = "/var/lib/profcollect";

// Flushes come only on request and at the stop; the control socket is the service group's, as
// the example configuration has it; everything else is the default.
// The final flush is given time to finish (on a loaded machine 1 s may cut it short), as the
// test checks what it writes.
const std::string kConfigWithoutRate =
    "flush_interval = \"1h\"\n"
    "final_flush_timeout = \"60s\"\n"
    "allowed_group = \"profcollect\"\n";
const std::string kGoodConfig = kConfigWithoutRate + "frequency = 2000\n";

fs::path live_spin_on_host() { return binary_dir() / "fixtures" / "live" / "live_spin"; }

// The counts of a no_lbr bolt.fdata, by line without its count ("1 spin_a 1a 0" -> 12).
std::map<std::string, uint64_t> fdata_counts(const std::string& text) {
  std::map<std::string, uint64_t> counts;
  for (const std::string& line : split_lines(text)) {
    if (line.empty() || line.starts_with("no_lbr")) continue;
    const size_t space = line.rfind(' ');
    counts[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return counts;
}

class SystemdServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(require_bookworm_tree());
    if (IsSkipped()) return;
    ASSERT_TRUE(fs::exists(live_spin_on_host()))
        << live_spin_on_host()
        << " is missing: the fixture sets are made by ctest's fixtures.generate";
    try {
      container_ = std::make_unique<SystemdContainer>(bookworm_tree().root);
      container_->install_build(binary_dir());
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    fs::copy_file(live_spin_on_host(), container_->root() / "usr/local/bin/live_spin",
                  fs::copy_options::overwrite_existing);
    write_file(container_->root() / "etc/profcollect/profcollect.toml", kGoodConfig);
    if (PROFCOLLECT_SANITIZED) {
      // A sanitized build's leak check stops the world with ptrace, which the unit's filter
      // denies (as it should): left to the tests on the host. Any other report still ends it.
      const fs::path dropin = container_->root() / "etc/systemd/system/profcollect.service.d";
      fs::create_directories(dropin);
      write_file(dropin / "sanitizer.conf",
                 "[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "
                 "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1\n");
      must({"systemctl", "daemon-reload"});
    }
  }
  // The daemon's pid, checked to be one: `kill 0` inside would signal the test's own process
  // group through nsenter.
  std::string main_pid() {
    const std::string pid = show("MainPID");
    EXPECT_TRUE(!pid.empty() && pid != "0" &&
                pid.find_first_not_of("0123456789") == std::string::npos)
        << "MainPID " << pid << "\n"
        << container_->diagnostics();
    return pid;
  }

  // A command inside that must succeed.
  CommandResult must(const std::vector<std::string>& argv, seconds timeout = seconds(120)) {
    CommandResult r = container_->run(argv, timeout);
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv) << "\n" << container_->diagnostics();
    return r;
  }
  std::string show(const std::string& property) {
    const CommandResult r =
        container_->run({"systemctl", "show", "-p", property, "--value", "profcollect"});
    return r.out.substr(0, r.out.find('\n'));
  }
  // Waits until `property` of the unit satisfies `accept`; false after `timeout`.
  bool wait_for(const std::string& property, const std::function<bool(const std::string&)>& accept,
                seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (accept(show(property))) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // The program's profile directory under the output directory, "" when there is none.
  fs::path profile_dir() const {
    std::error_code ec;
    for (const auto& entry :
         fs::directory_iterator(container_->root() / fs::path(kOutput).relative_path(), ec)) {
      if (entry.path().filename().string().starts_with("live_spin-")) return entry.path();
    }
    return {};
  }
  void run_program(const char* cpu_seconds) { must({kProgram, "a", cpu_seconds}); }

  std::unique_ptr<SystemdContainer> container_;
};

TEST_F(SystemdServiceTest,
       StartsWhenReadyFlushesOnRequestKeepsItsConfigOnABadReloadAndStopsAfterAFlush) {
  must({"systemctl", "start", "profcollect"});
  // Type=notify: start returned only once READY=1 arrived, which the daemon sends once its events
  // and its control socket are open: both answer at once (a Type=simple start would return
  // before either).
  EXPECT_EQ(show("ActiveState"), "active") << container_->diagnostics();
  const CommandResult at_start = must({"profcollect", "ctl", "--json", "status"});
  const nlohmann::json started = nlohmann::json::parse(at_start.out, nullptr, false);
  ASSERT_TRUE(started.is_object()) << at_start.out;
  EXPECT_EQ(started.value("collecting", false), true) << at_start.out;
  EXPECT_EQ(started.value("event", std::string()), "cpu-clock") << at_start.out;
  const std::string first_pid = main_pid();

  // The control socket serves root and members of allowed_group (here the service's own group,
  // as the example configuration has it), and refuses anyone else.
  must({"useradd", "--no-create-home", "--groups", "profcollect", "pc-operator"});
  must({"useradd", "--no-create-home", "pc-stranger"});
  const CommandResult member = container_->run(
      {"runuser", "-u", "pc-operator", "--", "profcollect", "ctl", "--json", "status"});
  EXPECT_EQ(member.exit_code, 0) << member.describe({"runuser pc-operator"});
  const nlohmann::json member_reply = nlohmann::json::parse(member.out, nullptr, false);
  EXPECT_TRUE(member_reply.is_object() && member_reply.value("collecting", false)) << member.out;
  const CommandResult stranger = container_->run(
      {"runuser", "-u", "pc-stranger", "--", "profcollect", "ctl", "--json", "status"});
  EXPECT_EQ(stranger.exit_code, 1) << stranger.describe({"runuser pc-stranger"});
  EXPECT_TRUE(stranger.out.find("\"ok\"") == std::string::npos) << stranger.out;
  EXPECT_FALSE((stranger.out + stranger.err).empty()) << "the refusal says why";

  run_program("1");
  const CommandResult flushed = must({"profcollect", "ctl", "--json", "flush"});
  EXPECT_EQ(nlohmann::json::parse(flushed.out, nullptr, false).value("ok", false), true)
      << flushed.out;
  const fs::path dir = profile_dir();
  ASSERT_FALSE(dir.empty()) << "no live_spin profile after the flush\n"
                            << container_->diagnostics();
  const std::string fdata = read_file(dir / "bolt.fdata");
  EXPECT_NE(fdata.find(" spin_a "), std::string::npos) << fdata;

  // The judges, on the host, against the same program file.
  TempDir tmp;
  write_file(tmp / "live_spin.fdata", fdata);
  const BoltRun bolt =
      run_llvm_bolt(live_spin_on_host(), tmp / "live_spin.fdata", tmp / "live_spin.bolt");
  EXPECT_EQ(bolt.run.exit_code, 0) << bolt.run.describe(bolt.argv);
  ASSERT_TRUE(bolt.profiled_functions) << bolt.run.describe(bolt.argv);
  EXPECT_GE(*bolt.profiled_functions, 1u) << bolt.run.describe(bolt.argv);
  write_file(tmp / "autofdo.prof", read_file(dir / "autofdo.prof"));
  const std::vector<std::string> show_profile = {
      "llvm-profdata-19", "show", "--sample", "--all-functions", (tmp / "autofdo.prof").string()};
  const CommandResult profdata = run_command(show_profile);
  EXPECT_EQ(profdata.exit_code, 0) << profdata.describe(show_profile);
  EXPECT_NE(profdata.out.find("spin_a"), std::string::npos) << profdata.describe(show_profile);

  // A broken configuration at reload: refused, logged with the key, the old one kept (the broken
  // file also asks for another rate, which must not be applied).
  write_file(container_->root() / "etc/profcollect/profcollect.toml",
             kConfigWithoutRate + "frequency = 3000\nfrequncy = 5\n");
  container_->run({"systemctl", "reload", "profcollect"});
  EXPECT_TRUE(wait_for(
      "ActiveState", [](const std::string& s) { return s == "active"; }, seconds(30)))
      << container_->diagnostics();
  EXPECT_EQ(show("MainPID"), first_pid) << "the daemon was restarted";
  // journald may file the daemon's line a moment after systemctl returns.
  std::string journal;
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (journal.find("frequncy") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    journal = container_->run({"journalctl", "-u", "profcollect", "--no-pager", "-o", "cat"}).out;
  }
  EXPECT_NE(journal.find("reload refused"), std::string::npos) << journal;
  EXPECT_NE(journal.find("frequncy"), std::string::npos) << journal;
  EXPECT_NE(journal.find(kConfig), std::string::npos) << journal;
  const CommandResult status = must({"profcollect", "ctl", "--json", "status"});
  EXPECT_EQ(nlohmann::json::parse(status.out, nullptr, false).value("frequency_hz", uint64_t{0}),
            2000u)
      << status.out;
  // A good file at reload is applied, by the same process.
  write_file(container_->root() / "etc/profcollect/profcollect.toml",
             kConfigWithoutRate + "frequency = 3000\n");
  must({"systemctl", "reload", "profcollect"});
  EXPECT_TRUE(wait_for(
      "ActiveState", [](const std::string& s) { return s == "active"; }, seconds(30)))
      << container_->diagnostics();
  EXPECT_EQ(show("MainPID"), first_pid) << "the daemon was restarted";
  const CommandResult reloaded = must({"profcollect", "ctl", "--json", "status"});
  EXPECT_EQ(nlohmann::json::parse(reloaded.out, nullptr, false).value("frequency_hz", uint64_t{0}),
            3000u)
      << reloaded.out;

  // Samples after the last requested flush reach the files at the stop.
  const uint64_t before_stop = [&] {
    uint64_t n = 0;
    for (const auto& [line, count] : fdata_counts(read_file(dir / "bolt.fdata"))) n += count;
    return n;
  }();
  run_program("1");
  must({"systemctl", "stop", "profcollect"}, seconds(240));
  EXPECT_EQ(show("ExecMainStatus"), "0") << container_->diagnostics();
  EXPECT_EQ(show("Result"), "success") << container_->diagnostics();
  uint64_t after_stop = 0;
  for (const auto& [line, count] : fdata_counts(read_file(profile_dir() / "bolt.fdata")))
    after_stop += count;
  // 1 s of CPU time at 2000 Hz: about 2000 samples; a quarter of them is plenty to tell.
  EXPECT_GE(after_stop, before_stop + 500) << "the final flush is missing";
}

TEST_F(SystemdServiceTest, AHandStartedDaemonBesideTheServiceIsRefusedAndTheServiceGoesOn) {
  must({"systemctl", "start", "profcollect"});
  const std::string pid = main_pid();
  ASSERT_FALSE(HasFailure());
  const fs::path socket = container_->root() / "run/profcollect/ctl";
  struct stat before {};
  ASSERT_EQ(::stat(socket.c_str(), &before), 0) << socket;

  // The same configuration: the same socket and output directory.
  const CommandResult same = container_->run({"profcollect", "daemon"}, seconds(60));
  EXPECT_EQ(same.exit_code, 1) << same.describe({"profcollect daemon"});
  EXPECT_NE(same.err.find("(PID " + pid + ")"), std::string::npos) << same.err;
  // Only the output directory in common.
  write_file(container_->root() / "etc/profcollect/other.toml",
             "socket = \"/run/pc-other/ctl\"\nflush_interval = \"1h\"\n");
  const CommandResult other = container_->run(
      {"profcollect", "daemon", "--config", "/etc/profcollect/other.toml"}, seconds(60));
  EXPECT_EQ(other.exit_code, 1) << other.describe({"profcollect daemon --config other.toml"});
  EXPECT_NE(other.err.find("(PID " + pid + ")"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find(kOutput), std::string::npos) << "names what is in use: " << other.err;

  // The service: the same process, its socket the same inode, answering, and collecting.
  EXPECT_EQ(show("ActiveState"), "active") << container_->diagnostics();
  EXPECT_EQ(show("MainPID"), pid) << container_->diagnostics();
  struct stat after {};
  ASSERT_EQ(::stat(socket.c_str(), &after), 0) << "the service's socket was removed";
  EXPECT_EQ(after.st_ino, before.st_ino) << "the service's socket was replaced";
  run_program("1");
  const CommandResult flushed = must({"profcollect", "ctl", "--json", "flush"});
  EXPECT_EQ(nlohmann::json::parse(flushed.out, nullptr, false).value("ok", false), true)
      << flushed.out;
  const fs::path dir = profile_dir();
  ASSERT_FALSE(dir.empty()) << "no live_spin profile after the flush\n"
                            << container_->diagnostics();
  EXPECT_NE(read_file(dir / "bolt.fdata").find(" spin_a "), std::string::npos);
  const nlohmann::json meta = nlohmann::json::parse(read_file(dir / "meta.json"), nullptr, false);
  EXPECT_GE(meta.value("samples", uint64_t{0}), 500u) << "1 s of CPU time at 2000 Hz";
  must({"systemctl", "stop", "profcollect"}, seconds(240));
  EXPECT_EQ(show("ExecMainStatus"), "0") << container_->diagnostics();
}

TEST_F(SystemdServiceTest, WatchdogRestartsAStoppedDaemonAndAKilledOneLosesNothingFlushed) {
  const fs::path dropin = container_->root() / "etc/systemd/system/profcollect.service.d";
  fs::create_directories(dropin);
  write_file(dropin / "watchdog.conf", "[Service]\nWatchdogSec=4s\nRestartSec=1s\n");
  must({"systemctl", "daemon-reload"});
  must({"systemctl", "start", "profcollect"});
  run_program("1");
  must({"profcollect", "ctl", "--json", "flush"});
  const fs::path dir = profile_dir();
  ASSERT_FALSE(dir.empty()) << container_->diagnostics();
  const std::map<std::string, uint64_t> flushed = fdata_counts(read_file(dir / "bolt.fdata"));
  ASSERT_FALSE(flushed.empty());

  // kill -9: systemd restarts it (Restart=on-failure), and it takes up what is on disk. (The
  // daemon's own pid: `systemctl kill` also signals the unit's other processes, and fails in a
  // container when one of them cannot be signalled.)
  const std::string killed_pid = main_pid();
  ASSERT_FALSE(HasFailure());
  must({"kill", "-KILL", killed_pid});
  ASSERT_TRUE(wait_for(
      "MainPID", [&](const std::string& pid) { return pid != killed_pid && pid != "0"; },
      seconds(60)))
      << container_->diagnostics();
  ASSERT_TRUE(wait_for(
      "ActiveState", [](const std::string& s) { return s == "active"; }, seconds(60)))
      << container_->diagnostics();
  run_program("1");
  must({"profcollect", "ctl", "--json", "flush"});
  const std::map<std::string, uint64_t> after =
      fdata_counts(read_file(profile_dir() / "bolt.fdata"));
  for (const auto& [line, count] : flushed) {
    EXPECT_GE(after.count(line) ? after.at(line) : 0, count)
        << line << ": a flushed count went down";
  }

  // A running daemon's pings reach systemd: three watchdog periods pass without a restart.
  const auto watchdog_timeouts = [&] {
    const std::string journal = must({"journalctl", "-u", "profcollect", "--no-pager"}).out;
    size_t n = 0;
    for (size_t at = journal.find("Watchdog timeout"); at != std::string::npos;
         at = journal.find("Watchdog timeout", at + 1)) {
      ++n;
    }
    return n;
  };
  const std::string stopped_pid = main_pid();
  const std::string restarts_before = show("NRestarts");
  ASSERT_TRUE(!restarts_before.empty() &&
              restarts_before.find_first_not_of("0123456789") == std::string::npos)
      << "NRestarts " << restarts_before;
  std::this_thread::sleep_for(seconds(12));
  EXPECT_EQ(show("MainPID"), stopped_pid) << "restarted while it ran\n"
                                          << container_->diagnostics();
  EXPECT_EQ(show("NRestarts"), restarts_before) << container_->diagnostics();
  EXPECT_EQ(watchdog_timeouts(), 0u) << container_->diagnostics();

  // SIGSTOP: no ping for 4 s, and systemd restarts it, saying why.
  ASSERT_FALSE(HasFailure());
  must({"kill", "-STOP", stopped_pid});
  EXPECT_TRUE(wait_for(
      "MainPID", [&](const std::string& pid) { return pid != stopped_pid && pid != "0"; },
      seconds(60)))
      << "the watchdog did not restart the stopped daemon\n"
      << container_->diagnostics();
  EXPECT_TRUE(wait_for(
      "ActiveState", [](const std::string& s) { return s == "active"; }, seconds(60)))
      << container_->diagnostics();
  EXPECT_EQ(show("NRestarts"), std::to_string(std::stoull(restarts_before) + 1))
      << container_->diagnostics();
  EXPECT_EQ(watchdog_timeouts(), 1u) << container_->diagnostics();
}

}  // namespace
}  // namespace profcollect::test
