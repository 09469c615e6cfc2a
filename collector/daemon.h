// The collection daemon: one collection session of every process at a time (continuous, or
// one per duty-cycle window), driven on a Boost.Asio io_context: the session's descriptors, a
// poll timer, the flush timer, the schedule, the service manager's watchdog, signals (SIGTERM
// and SIGINT: a final flush, then the end; SIGHUP: reload the configuration) and the control
// socket (collector/control_server.h). A reload that cannot read its file keeps the running
// configuration; one that changes what the session collects restarts the session. Profiles are
// added to what earlier runs left in the output directory (output/profile_store.h).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>

#include "collector/daemon_config.h"
#include "collector/service_notifier.h"

namespace profcollect {

class CollectionSession;
class ControlServer;
class KernelCollection;
class SessionLogger;

class Daemon {
 public:
  // `config` read from `config_path` (which a reload reads again). Nothing opens yet.
  Daemon(boost::asio::io_context& io, std::string config_path, DaemonConfig config, SessionLogger& logger);
  ~Daemon();

  // Opens the control socket and the first session, then runs until SIGTERM or SIGINT.
  // Returns true when the final flush wrote everything. Throws what opening the first session
  // throws (SettingError, OutputError, ...) and std::runtime_error for the socket.
  bool run();

  // The control protocol's requests (README "Control socket"), answered at once.
  nlohmann::ordered_json handle(const nlohmann::json& request);
  // Every request: `kernel` is answered when its profile is written, the others by handle().
  void handle_async(const nlohmann::json& request, std::function<void(nlohmann::ordered_json)> reply);

 private:
  void open_session();
  void close_session();
  void arm_descriptor(size_t i);
  void arm_poll();
  void arm_flush();
  void arm_window();
  void arm_watchdog();
  // WATCHDOG=1 if half the watchdog interval has passed since the last one (during a flush).
  void ping_watchdog_if_due();
  void wait_signal();
  bool flush();
  // Removes the binary directories retention_days and max_disk_mb leave no room for, each said
  // (at start, after every flush and at the end of every session), and drops the counts the
  // session holds of them.
  void enforce_spool_limits();
  // Throws OutputError when output_dir is a symbolic link.
  void refuse_linked_output_dir() const;
  // Reads the configuration file again and applies it; the reason when it is refused.
  std::optional<std::string> reload();
  void open_control_socket();
  // A kernel profile on request, beside the running collection (its own kernel-only events),
  // into output_dir/kernel-<UTC time>; one at a time.
  void start_kernel_profile(double seconds, std::function<void(nlohmann::ordered_json)> reply);
  void finish_kernel_profile();
  void arm_kernel_poll();
  // The `kernel` key: a kernel profile kept beside every collection window, flushed with it into
  // output_dir and added to across runs (collector/kernel_collection.h, cumulative). A machine
  // that cannot give one is said once; the user binaries' collection goes on.
  void open_continuous_kernel();
  void close_continuous_kernel();
  void stop();
  nlohmann::ordered_json status() const;
  std::string status_line() const;

  boost::asio::io_context& io_;
  std::string config_path_;
  DaemonConfig config_;
  SessionLogger& logger_;
  ServiceNotifier notifier_;
  std::unique_ptr<CollectionSession> session_;
  std::unique_ptr<ControlServer> control_;
  std::vector<std::unique_ptr<boost::asio::posix::stream_descriptor>> descriptors_;
  boost::asio::steady_timer poll_timer_, flush_timer_, window_timer_, watchdog_timer_;
  std::chrono::steady_clock::time_point last_watchdog_ping_{};
  boost::asio::signal_set signals_;
  std::chrono::steady_clock::time_point started_;
  // Totals of the sessions that have ended (duty-cycle windows, restarts at a reload).
  uint64_t ended_samples_ = 0, ended_lost_ = 0, ended_own_samples_ = 0;
  std::map<std::string, uint64_t> ended_unmapped_;
  // For STATUS=: the samples at the last flush and when it was.
  uint64_t samples_at_flush_ = 0;
  std::chrono::steady_clock::time_point last_flush_;
  double sample_rate_ = 0;
  bool rate_measured_ = false;
  bool ready_sent_ = false;
  bool over_budget_said_ = false;
  bool stopping_ = false;
  bool last_flush_ok_ = true;
  uint64_t generation_ = 0;  // of the session: a stale descriptor wait does nothing
  // The kernel profile being collected, if any, and who waits for it.
  std::unique_ptr<KernelCollection> kernel_;
  std::function<void(nlohmann::ordered_json)> kernel_reply_;
  boost::asio::steady_timer kernel_timer_, kernel_poll_;
  std::chrono::steady_clock::time_point kernel_end_;
  // The `kernel` key's profile, or why there is none.
  std::unique_ptr<KernelCollection> continuous_kernel_;
  std::string continuous_kernel_error_;
};

}  // namespace profcollect
