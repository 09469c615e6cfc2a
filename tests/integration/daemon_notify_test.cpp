// A service manager that stops reading its notify socket must not stall the daemon: a datagram
// socket nobody reads fills after a few messages, and a blocking send from the daemon's loop
// would stop it draining its ring buffers and answering its control socket. With a watchdog
// ping every 10 ms and the manager not reading for a second (about a hundred pings, against a
// queue of ten), the daemon still answers status and flush; when the manager reads again the
// pending messages arrive, and SIGTERM still ends the daemon with 0 and STOPPING=1.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonNotifyTest : public LiveFixtureTest {
 protected:
  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  fs::path config() const { return tmp_ / "profcollect.toml"; }
  TempDir tmp_;
};

TEST_F(DaemonNotifyTest, AManagerThatStopsReadingNeverStallsTheDaemon) {
  write_text(config(), "output_dir = \"" + (tmp_ / "out").string() + "\"\n" + "socket = \"" +
                           socket().string() + "\"\n" + "event = \"cpu-clock\"\n" +
                           "flush_interval = \"1h\"\n" + "binaries = [" +
                           exact_path_pattern(fixture("live_spin")) + "]\n");
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify, std::chrono::microseconds(20000));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  ASSERT_TRUE(notify.wait_for("WATCHDOG=1", kPatience)) << notify.describe();

  notify.pause(true);
  std::this_thread::sleep_for(1s);
  const size_t received = notify.messages().size();
  const CtlRun status = run_ctl(socket(), {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.describe() << daemon.describe();
  const CtlRun flush = run_ctl(socket(), {"flush"});
  EXPECT_EQ(flush.exit_code, 0) << flush.describe() << daemon.describe();
  EXPECT_EQ(notify.messages().size(), received) << "the listener was not paused";

  notify.pause(false);
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", kPatience)) << notify.describe();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(kPatience), std::optional<int>(0)) << daemon.describe();
  EXPECT_TRUE(notify.wait_for("STOPPING=1", kPatience)) << notify.describe();
}

}  // namespace
}  // namespace profcollect::test
