// Issue 12: `profcollect daemon` as systemd would see it (READY=1 once the events are open,
// STATUS= with the rate, STOPPING=1 at the end, all read from a notification socket the test
// binds), driven with `profcollect ctl`: a flush on request writes the profiles, SIGTERM ends
// with a final flush and exit 0, a broken configuration is refused at start (naming file, line
// and key) and at a reload (the running one kept), bad and oversized requests get an error and
// the daemon keeps serving, and only root and the allowed group are served.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <regex>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// The kernel request's range, as the command line's --duration has it.
const std::string kDurationRange = "kernel needs \"duration\": seconds from 0.001 to 31622400";

class DaemonControlTest : public LiveFixtureTest {
 protected:
  // A configuration that profiles live_spin only, with cpu-clock (every machine has it), and
  // flushes only when asked (or at the end).
  std::string config_text(unsigned frequency = 4000) const {
    return "output_dir = \"" + (tmp_ / "out").string() + "\"\n" + "socket = \"" +
           socket().string() + "\"\n" + "event = \"cpu-clock\"\n" +
           "frequency = " + std::to_string(frequency) + "\n" + "flush_interval = \"1h\"\n" +
           "binaries = [" + exact_path_pattern(fixture("live_spin")) + "]\n" +
           "allowed_group = \"nogroup\"\n";
  }
  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  fs::path out() const { return tmp_ / "out"; }
  fs::path config() const { return tmp_ / "profcollect.toml"; }

  TempDir tmp_;
};

// A client of the control socket that speaks raw bytes.
class RawClient {
 public:
  explicit RawClient(const fs::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{static_cast<time_t>(kPatience.count()), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // One reply line (without its newline); nullopt at the end of the stream.
  std::optional<std::string> line() {
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

TEST_F(DaemonControlTest,
       NotifiesReadyAnswersStatusFlushesOnRequestAndEndsWithAFinalFlushAtSigterm) {
  write_text(config(), config_text());
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify, std::chrono::microseconds(400'000));
  const auto ready = notify.wait_for("READY=1", kPatience);
  ASSERT_TRUE(ready) << daemon.describe() << notify.describe();
  EXPECT_NE(ready->find("STATUS=collecting cpu-clock at 4000 Hz"), std::string::npos) << *ready;
  // The socket is there once READY=1 is: 0660, in a directory made 0755.
  struct stat st {};
  ASSERT_EQ(::stat(socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, 65534u) << "the socket's group is allowed_group (nogroup)";
  ASSERT_EQ(::stat(socket().parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);

  // WatchdogSec=0.4s: a ping every 0.2 s, the first at once.
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", kPatience)) << notify.describe();
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", kPatience)) << notify.describe();

  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  // The events were open before the target started (READY=1 came first): its samples arrive.
  CtlRun status;
  ASSERT_TRUE(wait_until(
      [&] {
        status = run_ctl(socket(), {"status"});
        if (status.exit_code != 0 || status.reply.is_discarded()) return true;
        for (const auto& b : status.reply["binaries"]) {
          if (b["path"] == fixture("live_spin").string() && b["samples"].get<uint64_t>() > 0)
            return true;
        }
        return false;
      },
      kPatience));
  ASSERT_EQ(status.exit_code, 0) << status.describe();
  const json& s = status.reply;
  EXPECT_EQ(s["engine"], "perf");
  EXPECT_EQ(s["event"], "cpu-clock");
  EXPECT_EQ(s["frequency_hz"], 4000);
  EXPECT_GT(s["samples"].get<uint64_t>(), 0u);
  EXPECT_TRUE(s["lost"].is_number_unsigned());
  EXPECT_TRUE(s["uptime_s"].is_number_integer());
  EXPECT_TRUE(s["unmapped"].contains("other_binary")) << s.dump();
  EXPECT_TRUE(s["disk_bytes"].is_number_unsigned());
  ASSERT_EQ(s["binaries"].size(), 1u) << "binaries selects live_spin only: " << s.dump();
  EXPECT_TRUE(profile_dirs(out(), "live_spin").empty())
      << "flushed before the flush interval or a request";

  const CtlRun flush = run_ctl(socket(), {"flush"});
  ASSERT_EQ(flush.exit_code, 0) << flush.describe();
  EXPECT_EQ(flush.reply["flushed"], true);
  const auto dirs = profile_dirs(out(), "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << "no profile after the flush";
  const StrictFdata flushed = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(flushed.valid()) << flushed.error;
  EXPECT_GT(flushed.per_function()["spin_a"], 0u);
  EXPECT_GT(run_ctl(socket(), {"status"}).reply["disk_bytes"].get<uint64_t>(), 0u);

  // 100 ms more of the target's CPU time, then SIGTERM: only the final flush can write them.
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 100ms, kPatience));
  daemon.signal(SIGTERM);
  const auto code = daemon.wait(kPatience);
  ASSERT_TRUE(code) << "the daemon did not end after SIGTERM\n" << daemon.describe();
  EXPECT_EQ(*code, 0) << daemon.describe();
  EXPECT_TRUE(notify.wait_for("STOPPING=1", 5s)) << notify.describe();
  const StrictFdata last = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(last.valid()) << last.error;
  EXPECT_GT(last.total(), flushed.total()) << "no final flush at SIGTERM";
  EXPECT_FALSE(fs::exists(socket())) << "the socket outlived the daemon";
}

TEST_F(DaemonControlTest, ADutyCycleCollectsInWindowsAndFlushesAtTheEndOfEach) {
  write_text(config(), config_text() + "schedule = { on = \"1s\", every = \"3s\" }\n");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  // The first window ends after a second: its profiles are written with no flush asked for.
  ASSERT_TRUE(notify.wait_for("STATUS=waiting for the next collection window", kPatience))
      << notify.describe();
  const auto dirs = profile_dirs(out(), "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << "the end of a window wrote no profile\n" << daemon.describe();
  const StrictFdata first = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(first.valid()) << first.error;
  const CtlRun between = run_ctl(socket(), {"status"});
  // Unless the next window opened meanwhile (a loaded machine may take two seconds to run ctl).
  // (The notification of a window that opened before the reply is already queued.)
  if (!notify.wait_for("STATUS=collecting", 100ms)) {
    EXPECT_EQ(between.reply["collecting"], false) << between.describe();
    ASSERT_TRUE(notify.wait_for("STATUS=collecting", kPatience)) << notify.describe();
  }
  // The second window adds to the first.
  ASSERT_TRUE(notify.wait_for("STATUS=waiting for the next collection window", kPatience))
      << notify.describe();
  const StrictFdata second = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(second.valid()) << second.error;
  EXPECT_GT(second.total(), first.total()) << "the second window added nothing";
  daemon.signal(SIGTERM);
  const auto code = daemon.wait(kPatience);
  ASSERT_TRUE(code) << daemon.describe();
  EXPECT_EQ(*code, 0) << daemon.describe();
}

// exclude wins over binaries: two copies of one program, both selected, one excluded by its path.
TEST_F(DaemonControlTest, AnExcludedBinaryGetsNoProfileWhileTheOthersDo) {
  const fs::path copy = tmp_ / "spin_excluded";
  fs::copy_file(fixture("live_spin"), copy);
  write_text(config(), "output_dir = \"" + out().string() + "\"\nsocket = \"" + socket().string() +
                           "\"\nevent = \"cpu-clock\"\nflush_interval = \"1h\"\nbinaries = [" +
                           exact_path_pattern(fixture("live_spin")) + ", " +
                           exact_path_pattern(copy) + "]\nexclude = [" + exact_path_pattern(copy) +
                           "]\n");
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  BackgroundProcess kept = start_target(fixture("live_spin"), {"a", "0"});
  BackgroundProcess excluded = start_target(copy, {"a", "0"});
  ASSERT_TRUE(wait_for_cpu_time(kept.pid(), 200ms, kPatience));
  ASSERT_TRUE(wait_for_cpu_time(excluded.pid(), 200ms, kPatience));
  const CtlRun flush = run_ctl(socket(), {"flush"});
  ASSERT_EQ(flush.exit_code, 0) << flush.describe();
  EXPECT_EQ(profile_dirs(out(), "live_spin").size(), 1u) << daemon.describe();
  EXPECT_TRUE(profile_dirs(out(), "spin_excluded").empty()) << daemon.describe();
  const CtlRun status = run_ctl(socket(), {"status"});
  ASSERT_EQ(status.exit_code, 0) << status.describe();
  for (const auto& b : status.reply["binaries"])
    EXPECT_NE(b["path"], copy.string()) << status.reply.dump();
  daemon.signal(SIGTERM);
  ASSERT_TRUE(daemon.wait(kPatience)) << daemon.describe();
}

TEST_F(DaemonControlTest, ABadConfigurationIsRefusedAtStartNamingFileLineAndKey) {
  write_text(config(), config_text() + "\nflush_interval = \"2s\"\nfrequncy = 99\n");
  const ProfcollectRun run = run_profcollect({"daemon", "--config", config().string()});
  // The duplicate key is TOML's own error, found first, at its line (9: seven lines, a blank).
  EXPECT_EQ(run.run.exit_code, 1) << run.describe();
  EXPECT_NE(run.run.err.find(config().string() + ":9:"), std::string::npos) << run.describe();
  EXPECT_NE(run.run.err.find("flush_interval"), std::string::npos) << run.describe();

  write_text(config(), config_text() + "\nfrequncy = 99\n");
  const ProfcollectRun unknown = run_profcollect({"daemon", "--config", config().string()});
  EXPECT_EQ(unknown.run.exit_code, 1) << unknown.describe();
  EXPECT_NE(unknown.run.err.find(config().string() + ":9: frequncy: unknown key"),
            std::string::npos)
      << unknown.describe();
  EXPECT_FALSE(fs::exists(socket()));
}

TEST_F(DaemonControlTest, AReloadOfABrokenFileKeepsTheRunningConfigurationAndAGoodOneIsApplied) {
  write_text(config(), config_text(997));
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();

  // Line 3 of the new file names an unknown key.
  write_text(config(), "event = \"cpu-clock\"\nfrequency = 1999\nfrequncy = 3\n");
  const CtlRun refused = run_ctl(socket(), {"reload"});
  EXPECT_EQ(refused.exit_code, 1) << refused.describe();
  EXPECT_NE(refused.err.find(config().string() + ":3: frequncy: unknown key"), std::string::npos)
      << refused.describe();
  // SIGHUP (systemd's ExecReload) with the same broken file: refused and logged, still running.
  daemon.signal(SIGHUP);
  ASSERT_TRUE(wait_until(
      [&] {
        const std::string err = daemon.err();
        size_t n = 0;
        for (size_t at = err.find("reload refused"); at != std::string::npos;
             at = err.find("reload refused", at + 1))
          ++n;
        return n >= 2;
      },
      kPatience))
      << daemon.describe();
  EXPECT_NE(daemon.err().find(":3: frequncy: unknown key"), std::string::npos) << daemon.describe();
  ASSERT_TRUE(daemon.running()) << daemon.describe();
  const CtlRun kept = run_ctl(socket(), {"status"});
  ASSERT_EQ(kept.exit_code, 0) << kept.describe();
  EXPECT_EQ(kept.reply["frequency_hz"], 997) << "the running configuration was not kept";

  // A good file is applied: the rate changed, so the session restarts at the new one.
  write_text(config(), config_text(1999));
  const CtlRun applied = run_ctl(socket(), {"reload"});
  ASSERT_EQ(applied.exit_code, 0) << applied.describe() << daemon.describe();
  const CtlRun now = run_ctl(socket(), {"status"});
  EXPECT_EQ(now.reply["frequency_hz"], 1999) << now.describe();
  // systemd hears RELOADING=1 and READY=1 around every reload (three here).
  EXPECT_TRUE(notify.wait_for("READY=1", kPatience));
  EXPECT_TRUE(wait_until(
      [&] {
        notify.wait_for("READY=1", 10ms);
        return notify.count("READY=1") >= 4;
      },
      kPatience))
      << notify.describe();
  EXPECT_GE(notify.count("RELOADING=1"), 3u) << notify.describe();

  daemon.signal(SIGTERM);
  const auto code = daemon.wait(kPatience);
  ASSERT_TRUE(code) << daemon.describe();
  EXPECT_EQ(*code, 0) << daemon.describe();
}

TEST_F(DaemonControlTest, BadAndOversizedRequestsGetAnErrorAndTheDaemonKeepsServing) {
  write_text(config(), config_text());
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();

  auto error_of = [](const std::optional<std::string>& line) {
    if (!line) return std::string("(no reply)");
    const json j = json::parse(*line, nullptr, false);
    return j.is_object() && j.contains("error") ? j["error"].get<std::string>()
                                                : "(not an error: " + *line + ")";
  };
  {
    RawClient c(socket());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send("this is not json\n"));
    EXPECT_EQ(error_of(c.line()), "a request is one JSON object per line");
    ASSERT_TRUE(c.send("[1,2]\n{\"cmd\": 7}\n{\"cmd\": \"explode\"}\n{\"cmd\": \"kernel\"}\n"));
    EXPECT_EQ(error_of(c.line()), "a request is one JSON object per line");
    EXPECT_EQ(error_of(c.line()), "a request names its command: {\"cmd\": \"status\"}");
    EXPECT_EQ(error_of(c.line()), "unknown command \"explode\" (status, flush, reload, kernel)");
    EXPECT_EQ(error_of(c.line()), kDurationRange);
    // The same connection still serves a good request after the bad ones.
    ASSERT_TRUE(c.send("{\"cmd\": \"status\"}\n"));
    const auto good = c.line();
    ASSERT_TRUE(good);
    EXPECT_EQ(json::parse(*good, nullptr, false).value("engine", ""), "perf") << *good;
  }
  {
    // 70 000 bytes without a newline, more than a request may hold: an error, then the end of
    // that connection.
    RawClient c(socket());
    ASSERT_TRUE(c.connected());
    c.send(std::string(70'000, 'x') + "\n");
    EXPECT_EQ(error_of(c.line()), "request longer than 65536 bytes");
    EXPECT_FALSE(c.line()) << "the connection stayed open after an oversized request";
  }
  {
    // A peer that goes away mid-request.
    RawClient c(socket());
    ASSERT_TRUE(c.send("{\"cmd\": \"sta"));
  }
  {
    // A kernel request without its duration, and with durations the command line refuses too
    // (its range: tests/integration/cli_numeric_options_test.cpp): past a year (the clock
    // arithmetic of 1e10 s overflowed and the profile came back at once; 1e308 does not fit an
    // integer at all), not positive, not a number. Each is refused at once, and no kernel
    // profile starts.
    RawClient c(socket());
    ASSERT_TRUE(c.send("{\"cmd\": \"kernel\"}\n"));
    EXPECT_EQ(error_of(c.line()), kDurationRange);
    for (const std::string bad :
         {"1e10", "1e308", "31622401", "0", "-1", "0.0001", "\"5\"", "true", "null", "[5]"}) {
      SCOPED_TRACE(bad);
      ASSERT_TRUE(c.send("{\"cmd\": \"kernel\", \"duration\": " + bad + "}\n"));
      const std::string error = error_of(c.line());
      EXPECT_EQ(error.rfind(kDurationRange, 0), 0u) << error;
    }
    EXPECT_EQ(daemon.err().find("collecting a kernel profile"), std::string::npos)
        << daemon.describe();
  }
  const CtlRun status = run_ctl(socket(), {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.describe() << daemon.describe();
  EXPECT_TRUE(daemon.running()) << daemon.describe();
}

TEST_F(DaemonControlTest, OnlyRootAndTheAllowedGroupAreServed) {
  // nobody (65534) must reach the socket's directory.
  fs::permissions(tmp_.path(), fs::perms::owner_all | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read |
                                   fs::perms::others_exec);
  write_text(config(), config_text());
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();

  const RunAs member{65534, 65534};  // nobody:nogroup, and allowed_group is nogroup
  const RunAs stranger{65534, 1};    // nobody in group daemon only
  const CtlRun allowed = run_ctl(socket(), {"status"}, member);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.describe();
  EXPECT_EQ(allowed.reply.value("engine", ""), "perf") << allowed.describe();

  // The socket's mode keeps the stranger out...
  const CtlRun denied = run_ctl(socket(), {"flush"}, stranger);
  EXPECT_EQ(denied.exit_code, 1) << denied.describe();
  EXPECT_NE(denied.err.find("Permission denied"), std::string::npos) << denied.describe();
  // ...and so do the peer's credentials, when the mode does not.
  ASSERT_EQ(::chmod(socket().c_str(), 0666), 0);
  const CtlRun refused = run_ctl(socket(), {"flush"}, stranger);
  EXPECT_EQ(refused.exit_code, 1) << refused.describe();
  EXPECT_EQ(refused.reply.value("error", ""),
            "permission denied: uid 65534 is neither root nor a member of the allowed group")
      << refused.describe();
  EXPECT_NE(daemon.err().find("refused a request: uid 65534"), std::string::npos)
      << daemon.describe();
  EXPECT_FALSE(fs::exists(out() / "collection.json")) << "the refused flush was done";
  EXPECT_EQ(run_ctl(socket(), {"status"}).exit_code, 0) << "root is always served";
  EXPECT_TRUE(daemon.running()) << daemon.describe();
}

}  // namespace
}  // namespace profcollect::test
