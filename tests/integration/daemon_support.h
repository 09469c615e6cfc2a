// What the daemon tests (daemon_*_test.cpp) share: a stand-in for systemd's notification socket
// (a unix datagram socket the test binds and passes as NOTIFY_SOCKET: what systemd reads), the
// daemon started in the background with a configuration file, and `profcollect ctl` runs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "tests/integration/fixture_set.h"
#include "tests/integration/live_support.h"

namespace profcollect::test {

// Receives sd_notify messages sent to its socket.
class NotifyListener {
 public:
  explicit NotifyListener(const std::filesystem::path& path);
  ~NotifyListener();
  NotifyListener(const NotifyListener&) = delete;
  NotifyListener& operator=(const NotifyListener&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Waits for a message, after the one the last wait_for returned, that holds a line starting
  // with `line` (e.g. "READY=1", "STATUS="); returns it. Every message received is kept in
  // messages().
  std::optional<std::string> wait_for(const std::string& line, std::chrono::milliseconds timeout);
  // How many messages received so far hold such a line.
  size_t count(const std::string& line) const;
  std::vector<std::string> messages() const;
  std::string describe() const;
  // Stops reading (a stalled manager: the socket's queue fills and senders block) or reads again.
  void pause(bool paused) { paused_ = paused; }

 private:
  bool holds(const std::string& message, const std::string& line) const;
  // Receives every message as it comes, as systemd does: a datagram socket nobody reads fills
  // after a few messages (net.unix.max_dgram_qlen), and the daemon's sd_notify then blocks.
  void receive();
  std::filesystem::path path_;
  int fd_ = -1;
  int stop_[2] = {-1, -1};  // a pipe that ends receive()
  std::atomic<bool> paused_{false};
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> messages_;
  size_t seen_ = 0;  // messages already matched by wait_for: each is matched once
  std::thread receiver_;
};

// `profcollect daemon --config CONFIG` in the background, with NOTIFY_SOCKET set to `notify`
// (and WATCHDOG_USEC to `watchdog`, as systemd sets it for WatchdogSec=).
BackgroundProcess start_daemon(const std::filesystem::path& config, const NotifyListener& notify,
                               std::optional<std::chrono::microseconds> watchdog = std::nullopt);

// `profcollect ctl --socket SOCKET [--json] ARGS...`, as `run_as` when given; its exit code and
// output (with `json`, the reply is parsed from it).
struct CtlRun {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json reply;  // stdout parsed; discarded when not JSON
  std::string describe() const {
    return "exit " + std::to_string(exit_code) + "\nstdout: " + out + "\nstderr: " + err;
  }
};
CtlRun run_ctl(const std::filesystem::path& socket, const std::vector<std::string>& args,
               std::optional<RunAs> run_as = std::nullopt, bool json = true);

// A configuration's regular expression matching exactly `path`, as a TOML string: a
// system-wide daemon also sees the programs other tests (or other builds) run.
std::string exact_path_pattern(const std::filesystem::path& path);

// The many distinct programs of tests/fixtures/make_spool_fixtures.sh (spool_hot_00 ..
// spool_hot_13 for the budget test, spool_safe_0 .. 2 for others), and one of them by name,
// canonical.
FixtureSet& spool_fixture_set();
std::filesystem::path spool_fixture(const std::string& name);

// Base of the tests that profile the spool programs (and the live ones).
class SpoolFixtureTest : public LiveFixtureTest {
 protected:
  void SetUp() override;
};

// Writes `text` to `path` (replacing it).
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace profcollect::test
