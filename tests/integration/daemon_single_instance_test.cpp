// One daemon per control socket and per output directory. A second `profcollect daemon` with
// the same socket used to unlink the first one's socket and bind its own (the first kept
// collecting, unreachable even after SIGHUP), and nothing kept two daemons from writing one
// output_dir. Now the second exits 1 naming the first one's PID, before it touches either; the
// first keeps its socket (same file) and answers. A socket some other process listens on is
// never unlinked either. `profcollect ctl` against a peer that never answers gives up after its
// timeout with exit 1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "tests/integration/convert_judges.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string config_for(const fs::path& out, const fs::path& socket) {
  return "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
         "\"\nevent = \"cpu-clock\"\nfrequency = 100\nflush_interval = \"1h\"\nbinaries = "
         "[\"^/nonexistent/\"]\n";
}

ino_t inode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

// A unix socket bound and listening at `path` that accepts nothing and answers nothing.
class SilentListener {
 public:
  explicit SilentListener(const fs::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
          ::listen(fd_, 8) == 0;
  }
  ~SilentListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

class DaemonSingleInstanceTest : public LiveFixtureTest {
 protected:
  TempDir tmp_;
};

TEST_F(DaemonSingleInstanceTest,
       ASecondDaemonOnTheSameSocketOrOutputDirIsRefusedAndTheFirstStaysReachable) {
  const fs::path socket = tmp_ / "run" / "ctl", out = tmp_ / "out";
  write_text(tmp_ / "first.toml", config_for(out, socket));
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess first = start_daemon(tmp_ / "first.toml", notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << first.describe() << notify.describe();
  const ino_t socket_inode = inode_of(socket);
  ASSERT_NE(socket_inode, 0u);
  const std::string holder =
      "another profcollect daemon (PID " + std::to_string(first.pid()) + ") holds ";

  // The same socket, another output directory.
  write_text(tmp_ / "same_socket.toml", config_for(tmp_ / "out2", socket));
  const ProfcollectRun same_socket =
      run_profcollect({"daemon", "--config", (tmp_ / "same_socket.toml").string()});
  EXPECT_EQ(same_socket.run.exit_code, 1) << same_socket.describe();
  EXPECT_NE(same_socket.run.err.find(holder + "socket " + socket.string()), std::string::npos)
      << same_socket.describe();
  EXPECT_FALSE(fs::exists(tmp_ / "out2")) << "the refused daemon touched its output directory";

  // The same output directory, another socket.
  const fs::path socket2 = tmp_ / "run2" / "ctl";
  write_text(tmp_ / "same_out.toml", config_for(out, socket2));
  const ProfcollectRun same_out =
      run_profcollect({"daemon", "--config", (tmp_ / "same_out.toml").string()});
  EXPECT_EQ(same_out.run.exit_code, 1) << same_out.describe();
  EXPECT_NE(same_out.run.err.find(holder + "output_dir " + out.string()), std::string::npos)
      << same_out.describe();
  EXPECT_FALSE(fs::exists(socket2)) << "the refused daemon opened a control socket";

  // The first keeps its socket -- the same file -- and answers, also after a SIGHUP.
  EXPECT_EQ(inode_of(socket), socket_inode);
  EXPECT_EQ(run_ctl(socket, {"status"}).exit_code, 0) << first.describe();
  first.signal(SIGHUP);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << first.describe();
  const CtlRun status = run_ctl(socket, {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.describe() << first.describe();
  EXPECT_EQ(status.reply.value("output_dir", ""), out.string());
  EXPECT_TRUE(first.running());

  // A reload of the first onto a socket another daemon holds is refused; it keeps its own.
  const fs::path other_socket = tmp_ / "run3" / "ctl", other_out = tmp_ / "out3";
  write_text(tmp_ / "other.toml", config_for(other_out, other_socket));
  NotifyListener other_notify(tmp_ / "notify3");
  BackgroundProcess other = start_daemon(tmp_ / "other.toml", other_notify);
  ASSERT_TRUE(other_notify.wait_for("READY=1", kPatience)) << other.describe();
  write_text(tmp_ / "first.toml", config_for(out, other_socket));
  const CtlRun reload = run_ctl(socket, {"reload"});
  EXPECT_EQ(reload.exit_code, 1) << reload.describe();
  EXPECT_NE(reload.reply.value("error", "")
                .find("(PID " + std::to_string(other.pid()) + ") holds socket"),
            std::string::npos)
      << reload.describe();
  EXPECT_EQ(run_ctl(socket, {"status"}).exit_code, 0);
  EXPECT_EQ(run_ctl(other_socket, {"status"}).exit_code, 0);

  // Once the first has ended, its socket and output directory are free again.
  first.signal(SIGTERM);
  ASSERT_EQ(first.wait(kPatience), std::optional<int>(0)) << first.describe();
  EXPECT_FALSE(fs::exists(socket)) << "the first removes its own socket at the end";
  NotifyListener again_notify(tmp_ / "notify2");
  BackgroundProcess again = start_daemon(tmp_ / "same_socket.toml", again_notify);
  EXPECT_TRUE(again_notify.wait_for("READY=1", kPatience)) << again.describe();
}

TEST_F(DaemonSingleInstanceTest, ASocketAnotherProcessListensOnIsNeverUnlinked) {
  const fs::path socket = tmp_ / "ctl";
  SilentListener listener(socket);
  ASSERT_TRUE(listener.ok());
  const ino_t inode = inode_of(socket);
  write_text(tmp_ / "profcollect.toml", config_for(tmp_ / "out", socket));
  const ProfcollectRun run =
      run_profcollect({"daemon", "--config", (tmp_ / "profcollect.toml").string()});
  EXPECT_EQ(run.run.exit_code, 1) << run.describe();
  EXPECT_NE(run.run.err.find("socket " + socket.string() + ": another process listens on it"),
            std::string::npos)
      << run.describe();
  EXPECT_EQ(inode_of(socket), inode) << "the listener's socket was replaced";
}

TEST_F(DaemonSingleInstanceTest, CtlGivesUpOnAPeerThatNeverAnswers) {
  const fs::path socket = tmp_ / "ctl";
  SilentListener listener(socket);
  ASSERT_TRUE(listener.ok());
  const auto began = std::chrono::steady_clock::now();
  const CtlRun r = run_ctl(socket, {"status", "--timeout", "1"}, std::nullopt, /*json=*/false);
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("no reply within 1 s"), std::string::npos) << r.describe();
  EXPECT_GE(took, 1s) << "gave up before its timeout";
  EXPECT_LT(took, kPatience);
  // And a socket nobody listens on is said at once.
  const CtlRun none = run_ctl(tmp_ / "absent", {"status"}, std::nullopt, false);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("is the daemon running?"), std::string::npos) << none.describe();
}

}  // namespace
}  // namespace profcollect::test
