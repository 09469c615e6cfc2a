// The collection daemon: one collection session of every process at a time (continuous, or
// one per duty-cycle window), driven on the session driver (collector/session/session_driver.h): the session's descriptors (its
// drain thread's: the kernel's buffers are emptied on a thread of their own, so nothing done
// here loses samples), a poll timer, the flush timer, the schedule, the service manager's
// watchdog, signals (SIGTERM and SIGINT: a final flush of at most final_flush_timeout, then the
// end; SIGHUP: reload the configuration) and the control socket (collector/service/control_server.h).
// One daemon per socket and per output directory (collector/service/instance_lock.h). A reload that
// cannot read its file keeps the running configuration; one that changes what the session
// collects restarts the session. Profiles are added to what earlier runs left in the output
// directory (output/profile_store.h). status() says how it goes: the last flush and what failed
// in it, samples lost by reason since the start and in the last interval, a kernel profile in
// progress.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collector/pipeline/collection_engine.h"
#include "collector/session/collection_session.h"
#include "collector/session/session_driver.h"
#include "collector/service/daemon_config.h"
#include "collector/service/instance_lock.h"
#include "collector/service/spool_index.h"
#include "output/directory_handle.h"
#include "collector/service/service_notifier.h"

namespace profcollect {

class CollectionSession;
class ControlServer;
class KernelCollection;
class SessionLogger;

// How long the final flush may take once SIGTERM came is the final_flush_timeout setting
// (default 1 s: systemd's stop and an operator's patience are seconds; with what comes around
// it, the engine's last drain, collection.json and the exit, the daemon ends within 2 s).
// Binaries not reached keep what the last flush wrote.

class Daemon {
 public:
  // `config` read from `config_path` (which a reload reads again). Nothing opens yet.
  Daemon(SessionDriver& driver, std::string config_path, DaemonConfig config,
         SessionLogger& logger);
  ~Daemon();

  // Takes the socket's and the output directory's locks, opens the control socket and the first
  // session, then runs until SIGTERM or SIGINT. Returns true when the final flush wrote
  // everything. Throws InstanceLockError when another daemon holds either, what opening the
  // first session throws (SettingError, OutputError, ...) and std::runtime_error for the socket.
  bool run();
  // The signals the daemon's driver must read: SIGTERM and SIGINT (a final flush, then the
  // end), SIGHUP (reload). Blocked, a stop signal that comes during a flush stays pending, and
  // the flush sees it and stops.
  static std::vector<int> signals();

  // The control protocol's requests (docs/daemon.md, "Control socket"), answered at once.
  nlohmann::ordered_json handle(const nlohmann::json& request);
  // Every request: `kernel` is answered when its profile is written, the others by handle().
  void handle_async(const nlohmann::json& request,
                    std::function<void(nlohmann::ordered_json)> reply);

 private:
  void open_session();
  void close_session();
  void arm_flush();
  void arm_window();
  void arm_watchdog();
  // WATCHDOG=1 if half the watchdog interval has passed since the last one (during a flush).
  void ping_watchdog_if_due();
  void on_signal(int sig);
  bool stop_signal_pending() const;
  bool flush();
  // The session's (and the kernel key's) flush report, kept for status and a flush request.
  void record_flush(const FlushReport& report, const std::string& kernel_error);
  // The locks for `config`'s socket and output directory (the directories made if missing).
  struct Locks {
    std::unique_ptr<InstanceLock> socket, output_dir;
  };
  static Locks take_locks(const DaemonConfig& config);
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
  // The `kernel` key: a kernel profile kept beside every collection window, flushed with it into
  // output_dir and added to across runs (collector/kernel/kernel_collection.h, cumulative). A machine
  // that cannot give one is said once; the user binaries' collection goes on.
  void open_continuous_kernel();
  void close_continuous_kernel();
  void stop();
  // When the final flushes must end (SIGTERM came); none otherwise.
  std::optional<std::chrono::steady_clock::time_point> final_flush_deadline() const;
  nlohmann::ordered_json status() const;
  // Samples lost since the daemon started, by reason.
  LostSamples lost_since_start() const;
  std::string status_line() const;

  SessionDriver& driver_;
  std::string config_path_;
  DaemonConfig config_;
  SessionLogger& logger_;
  ServiceNotifier notifier_;
  Locks locks_;
  // The output directory's files, as the disk budget and status count them; the entries written
  // since the index was last brought up to date.
  SpoolIndex spool_;
  std::optional<DirectoryHandle> spool_dir_;
  std::vector<std::string> spool_touched_;
  std::unique_ptr<CollectionSession> session_;
  std::unique_ptr<ControlServer> control_;
  std::optional<SessionDriver::TimerId> flush_timer_, window_timer_;
  std::chrono::steady_clock::time_point last_watchdog_ping_{};
  std::chrono::steady_clock::time_point started_;
  // Totals of the sessions that have ended (duty-cycle windows, restarts at a reload).
  uint64_t ended_samples_ = 0, ended_own_samples_ = 0;
  LostSamples ended_lost_;
  std::map<std::string, uint64_t> ended_unmapped_;
  // For STATUS=: the samples at the last flush and when it was.
  uint64_t samples_at_flush_ = 0;
  std::chrono::steady_clock::time_point last_flush_;
  double sample_rate_ = 0;
  bool rate_measured_ = false;
  bool ready_sent_ = false;
  bool over_budget_said_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_{};
  // When a flush first saw SIGTERM or SIGINT pending: the final flush's time counts from there.
  std::optional<std::chrono::steady_clock::time_point> stop_seen_;
  bool last_flush_ok_ = true;
  // The last flush, as status says it (null before the first), and the losses at it and at the
  // one before: the last interval's.
  nlohmann::ordered_json last_flush_report_;
  LostSamples lost_at_flush_, lost_in_last_interval_;
  // The kernel profile being collected, if any, and who waits for it.
  std::unique_ptr<KernelCollection> kernel_;
  std::function<void(nlohmann::ordered_json)> kernel_reply_;
  std::optional<SessionDriver::TimerId> kernel_timer_, kernel_poll_;
  std::chrono::steady_clock::time_point kernel_end_;
  double kernel_seconds_ = 0;
  uint64_t kernel_started_ns_ = 0;
  std::string kernel_output_dir_;
  // The `kernel` key's profile, or why there is none.
  std::unique_ptr<KernelCollection> continuous_kernel_;
  std::string continuous_kernel_error_;
};

}  // namespace profcollect
