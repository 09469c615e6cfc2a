#include "collector/service/daemon.h"

#include <signal.h>
#include <grp.h>
#include <malloc.h>
#include <sys/stat.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>

#include "collector/session/collection_session.h"
#include "collector/service/control_server.h"
#include "collector/kernel/kernel_collection.h"
#include "collector/host/setting_ranges.h"
#include "collector/host/setting_error.h"
#include "collector/service/spool_index.h"
#include "collector/service/spool_limits.h"
#include "output/atomic_file.h"

namespace profcollect {

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

std::optional<gid_t> group_id(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const group* g = ::getgrnam(name.c_str());
  if (!g) throw std::runtime_error("allowed_group: no group named \"" + name + "\"");
  return g->gr_gid;
}

nlohmann::ordered_json error_reply(const std::string& why) {
  nlohmann::ordered_json j;
  j["error"] = why;
  return j;
}

nlohmann::ordered_json ok_reply() {
  nlohmann::ordered_json j;
  j["ok"] = true;
  return j;
}

// Unix-epoch nanoseconds as UTC, to the second: "2026-12-05T08:00:00Z".
std::string utc_time(uint64_t unix_ns) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

uint64_t now_unix_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

LostSamples operator+(const LostSamples& a, const LostSamples& b) {
  return {a.ring_buffer + b.ring_buffer, a.kernel_dropped + b.kernel_dropped,
          a.backlog_full + b.backlog_full, a.bpf_map_full + b.bpf_map_full};
}

LostSamples operator-(const LostSamples& a, const LostSamples& b) {
  auto sub = [](uint64_t x, uint64_t y) { return x >= y ? x - y : 0; };
  return {sub(a.ring_buffer, b.ring_buffer), sub(a.kernel_dropped, b.kernel_dropped),
          sub(a.backlog_full, b.backlog_full), sub(a.bpf_map_full, b.bpf_map_full)};
}

nlohmann::ordered_json lost_json(const LostSamples& l) {
  nlohmann::ordered_json j;
  j["samples"] = l.total();
  j["ring_buffer"] = l.ring_buffer;
  j["kernel_dropped"] = l.kernel_dropped;
  j["backlog_full"] = l.backlog_full;
  j["bpf_map_full"] = l.bpf_map_full;
  return j;
}

// A kernel request's duration, checked as the command line checks it (collector/host/setting_ranges.h):
// a number of seconds from kMinSeconds to kMaxSeconds. The reason when it is not one.
std::optional<std::string> check_kernel_duration(const nlohmann::json& request) {
  const auto d = request.find("duration");
  char range[96];
  std::snprintf(range, sizeof range, "kernel needs \"duration\": seconds from %g to %.0f",
                kMinSeconds, kMaxSeconds);
  if (d == request.end() || !d->is_number()) return std::string(range);
  const double seconds = d->get<double>();
  if (!(seconds >= kMinSeconds && seconds <= kMaxSeconds))
    return std::string(range) + ", not " + d->dump();
  return std::nullopt;
}

}  // namespace

Daemon::Daemon(SessionDriver& driver, std::string config_path, DaemonConfig config,
               SessionLogger& logger)
    : driver_(driver),
      config_path_(std::move(config_path)),
      config_(std::move(config)),
      logger_(logger) {}

Daemon::~Daemon() = default;

std::vector<int> Daemon::signals() { return {SIGTERM, SIGINT, SIGHUP}; }

bool Daemon::stop_signal_pending() const {
  return driver_.signal_pending(SIGTERM) || driver_.signal_pending(SIGINT);
}

Daemon::Locks Daemon::take_locks(const DaemonConfig& config) {
  Locks locks;
  create_socket_directories(config.socket);
  locks.socket =
      std::make_unique<InstanceLock>(socket_lock_file(config.socket), "socket " + config.socket);
  // The output directory is made here if missing (0700, as the profile store would make it), so
  // that its lock exists before anything is written into it.
  struct stat st {};
  if (::lstat(config.output_dir.c_str(), &st) != 0) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(config.output_dir).parent_path(), ec);
    if (::mkdir(config.output_dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw OutputError(config.output_dir,
                        std::string("cannot create the output directory: ") + std::strerror(errno));
  }
  locks.output_dir = std::make_unique<InstanceLock>(output_dir_lock_file(config.output_dir),
                                                    "output_dir " + config.output_dir);
  return locks;
}

bool Daemon::run() {
  started_ = std::chrono::steady_clock::now();
  // Before anything is touched: another daemon's socket or output directory stay its own.
  refuse_linked_output_dir();
  locks_ = take_locks(config_);
  driver_.on_signal([this](int sig) { on_signal(sig); });
  // What an earlier run left is held to the limits before anything is added to it.
  enforce_spool_limits();
  open_control_socket();
  open_session();
  if (config_.schedule) arm_window();
  // Wakeups come at half a buffer; the timer also drains, so that a quiet host's records and
  // process exits are seen promptly. The kernel profile's events, on every CPU, are drained by
  // this timer alone: at the kernel profile's rate a buffer holds far more than 100 ms of samples.
  driver_.every(100ms, [this] {
    if (session_) session_->drain();
    if (continuous_kernel_) continuous_kernel_->drain();
  });
  arm_flush();
  arm_watchdog();
  driver_.run();
  return last_flush_ok_;
}

void Daemon::open_control_socket() {
  control_ = std::make_unique<ControlServer>(
      driver_.io(), config_.socket, group_id(config_.allowed_group),
      [this](const nlohmann::json& request, ControlServer::Reply reply) {
        handle_async(request, std::move(reply));
      },
      logger_);
}

void Daemon::open_session() {
  refuse_linked_output_dir();
  SessionSettings s;
  s.target.kind = TargetKind::SystemWide;
  s.event = config_.event;
  s.engine = config_.engine;
  s.branch_any = config_.branch_stacks;
  s.frequency = config_.frequency;
  s.period = config_.period;
  s.output_dir = config_.output_dir;
  s.binary_patterns = config_.binaries;
  s.exclude_patterns = config_.exclude;
  s.mmap_pages = config_.mmap_pages;
  s.backlog_bytes = static_cast<size_t>(config_.backlog_mb) << 20;
  for (const std::string& name : config_.formats)
    s.formats.push_back(format_named(name));  // checked when read
  session_ = std::make_unique<CollectionSession>(std::move(s), logger_);
  // A flush blocks the loop, and with it the watchdog timer: it pings between binaries.
  session_->set_flush_progress([this] { ping_watchdog_if_due(); });
  // A SIGTERM during a flush stays pending (blocked, read from the signalfd): the flush stops
  // at once, and the final flush has the time left.
  session_->set_flush_interrupt([this] {
    if (!stop_signal_pending()) return false;
    if (!stop_seen_) stop_seen_ = std::chrono::steady_clock::now();
    return true;
  });
  session_->start();
  driver_.watch(session_->descriptors(), [this] {
    if (session_) session_->drain();
  });
  samples_at_flush_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
  logger_.note("collecting every process into " + config_.output_dir);
  if (config_.kernel) open_continuous_kernel();
  if (!ready_sent_) {
    notifier_.ready(status_line());
    ready_sent_ = true;
  } else {
    notifier_.status(status_line());
  }
}

void Daemon::close_session() {
  if (!session_) return;
  driver_.unwatch();
  last_flush_ok_ = true;
  close_continuous_kernel();  // false when its profile could not be written
  const bool kernel_ok = last_flush_ok_;
  // Told to stop, the final flush has a deadline; a window's end or a reload writes everything.
  const bool ok = session_->stop(final_flush_deadline());
  last_flush_ok_ = ok && kernel_ok;
  if (session_->last_flush()) record_flush(*session_->last_flush(), "");
  const SessionStatus s = session_->status();
  ended_samples_ += s.samples;
  ended_lost_ = ended_lost_ + s.counters.lost;
  ended_own_samples_ += s.own_samples.value_or(0);
  for (const auto& [reason, count] : s.unmapped) ended_unmapped_[reason] += count;
  session_.reset();
  sample_rate_ = 0;
  rate_measured_ = false;
  enforce_spool_limits();
}

void Daemon::refuse_linked_output_dir() const {
  // Under systemd output_dir is the unit's StateDirectory: a link in its place was planted, and
  // following it would write (and evict) wherever it points.
  struct stat st {};
  if (::lstat(config_.output_dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    throw OutputError(
        config_.output_dir,
        "output_dir is a symbolic link: the daemon does not follow it (name the directory itself)");
  }
}

void Daemon::enforce_spool_limits() {
  // Its listing of the output directory (a string per entry: tens of thousands after a long run
  // of ever new binaries) and the limits' copy of the index are freed on the way out: give
  // their pages back, as the session's flush does with its own (it trimmed before this ran), or
  // the daemon keeps their high-water mark, which grows with the directory.
  struct TrimOnReturn {
    ~TrimOnReturn() { malloc_trim(0); }
  } trim;
  // The index follows the output directory: read whole once, then only what was written since.
  try {
    if (!spool_dir_) {
      struct stat st {};
      if (::lstat(config_.output_dir.c_str(), &st) != 0 && errno == ENOENT)
        return;  // nothing written yet
      spool_dir_.emplace(DirectoryHandle::open_existing(config_.output_dir));
      spool_.rescan(*spool_dir_);
    } else {
      spool_.refresh(*spool_dir_, spool_touched_);
    }
  } catch (const OutputError& e) {
    logger_.error(std::string("max_disk_mb and retention_days not applied: ") + e.what());
    spool_dir_.reset();
    return;
  }
  spool_touched_.clear();
  if (!config_.max_disk_bytes && !config_.retention_days) return;
  SpoolLimits limits;
  limits.max_bytes = config_.max_disk_bytes;
  if (config_.retention_days) {
    const uint64_t now_ns =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
    const uint64_t keep_ns = *config_.retention_days * 86'400ull * 1'000'000'000ull;
    limits.expire_before_ns = now_ns > keep_ns ? now_ns - keep_ns : 0;
  }
  const SpoolEnforcement done = apply_spool_limits(*spool_dir_, spool_, limits);
  for (const std::string& e : done.errors) logger_.error(e);
  for (const Eviction& e : done.evicted) {
    // The budget is a hard limit: a binary being profiled goes too, with its counts in memory,
    // which the next flush would otherwise write back.
    bool profiled = session_ && session_->drop_binary(e.entry.directory);
    if (continuous_kernel_ && continuous_kernel_->forget(e.entry.directory)) profiled = true;
    logger_.note("evicted " + e.entry.directory + " (" + std::to_string(e.entry.bytes) +
                 " bytes, last sampled at " +
                 std::to_string(e.entry.last_sample_ns / 1'000'000'000) +
                 " s since the epoch): " + e.reason +
                 (profiled ? "; it is being profiled: its counts in memory are dropped and its "
                             "next samples start "
                             "a new profile"
                           : ""));
  }
  const uint64_t total = done.bytes_left;
  if (limits.max_bytes && total > *limits.max_bytes) {
    if (!over_budget_said_) {
      logger_.warning(
          "the output directory holds " + std::to_string(total) +
          " bytes, more than max_disk_mb, in files that are not binary directories of this user");
    }
    over_budget_said_ = true;
  } else {
    over_budget_said_ = false;
  }
}

void Daemon::arm_flush() {
  if (flush_timer_) driver_.cancel(*flush_timer_);
  flush_timer_ = driver_.every(config_.flush_interval, [this] {
    if (session_) flush();
  });
}

void Daemon::arm_window() {
  // The first window opened with the daemon; it closes after `on`, the next opens `every`
  // after the one before.
  const DutyCycle cycle = *config_.schedule;
  if (window_timer_) driver_.cancel(*window_timer_);
  window_timer_ = driver_.after(session_ ? cycle.on : cycle.every - cycle.on, [this] {
    window_timer_.reset();
    if (session_) {
      close_session();
      notifier_.status(status_line());
    } else {
      try {
        open_session();
      } catch (const std::exception& e) {
        logger_.error(std::string("collection window not opened: ") + e.what());
      }
    }
    arm_window();
  });
}

void Daemon::ping_watchdog_if_due() {
  const auto interval = notifier_.watchdog_ping_interval();
  if (!interval || stopping_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_watchdog_ping_ < *interval) return;
  notifier_.watchdog();
  last_watchdog_ping_ = now;
}

void Daemon::arm_watchdog() {
  const auto interval = notifier_.watchdog_ping_interval();
  if (!interval) return;
  auto ping = [this] {
    notifier_.watchdog();
    last_watchdog_ping_ = std::chrono::steady_clock::now();
  };
  ping();
  driver_.every(*interval, ping);
}

void Daemon::on_signal(int sig) {
  if (stopping_) return;
  if (sig == SIGHUP) {
    (void)reload();
  } else {
    logger_.note(std::string("received ") + strsignal(sig) + ", writing the final profiles");
    stop();
  }
}

bool Daemon::flush() {
  session_->drain();
  last_flush_ok_ = session_->flush();
  std::string kernel_error;
  if (continuous_kernel_) {
    continuous_kernel_->drain();
    const KernelCollectionResult k = continuous_kernel_->flush();
    spool_touched_.push_back(continuous_kernel_->profile_directory());
    spool_touched_.push_back("kernel.json");
    if (!k.ok) {
      last_flush_ok_ = false;
      kernel_error = k.error.empty() ? "not written" : k.error;
    }
  }
  record_flush(*session_->last_flush(), kernel_error);
  enforce_spool_limits();
  const auto now = std::chrono::steady_clock::now();
  const uint64_t samples = session_->counts().samples;
  const double seconds = std::chrono::duration<double>(now - last_flush_).count();
  if (seconds > 0) {
    sample_rate_ = static_cast<double>(samples - samples_at_flush_) / seconds;
    rate_measured_ = true;
  }
  samples_at_flush_ = samples;
  last_flush_ = now;
  notifier_.status(status_line());
  return last_flush_ok_;
}

std::optional<std::string> Daemon::reload() {
  notifier_.reloading();
  DaemonConfig next;
  try {
    next = load_daemon_config(config_path_);
  } catch (const DaemonConfigError& e) {
    logger_.error(std::string("reload refused, the running configuration is kept: ") + e.what());
    notifier_.ready(status_line());
    return e.what();
  }
  // Another socket or output directory is this daemon's only once its lock is taken.
  Locks next_locks;
  if (next.socket != config_.socket || next.output_dir != config_.output_dir) {
    try {
      struct stat st {};
      if (::lstat(next.output_dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        throw OutputError(next.output_dir,
                          "output_dir is a symbolic link: the daemon does not follow it");
      Locks taken = take_locks(next);
      if (next.socket != config_.socket) next_locks.socket = std::move(taken.socket);
      if (next.output_dir != config_.output_dir)
        next_locks.output_dir = std::move(taken.output_dir);
    } catch (const std::exception& e) {
      logger_.error(std::string("reload refused, the running configuration is kept: ") + e.what());
      notifier_.ready(status_line());
      return e.what();
    }
  }
  const DaemonConfig old = config_;
  config_ = next;
  std::optional<std::string> refused;
  if (!next.same_session(old) || next.schedule != old.schedule) {
    const bool was_collecting = session_ != nullptr;
    close_session();
    if (was_collecting || !config_.schedule) {
      try {
        open_session();
      } catch (const std::exception& e) {
        refused = std::string("the new configuration cannot collect: ") + e.what();
        logger_.error("reload refused, the running configuration is kept: " + *refused);
        config_ = old;
        open_session();  // it ran a moment ago; if it no longer opens, the daemon cannot go on
      }
    }
    if (window_timer_) driver_.cancel(*window_timer_);
    window_timer_.reset();
    if (config_.schedule) arm_window();
  } else if (next.kernel != old.kernel && session_) {
    if (config_.kernel) {
      open_continuous_kernel();
    } else {
      close_continuous_kernel();
    }
  }
  if (config_.socket != old.socket || config_.allowed_group != old.allowed_group) {
    control_.reset();
    try {
      open_control_socket();
    } catch (const std::exception& e) {
      logger_.error(std::string("the new control socket cannot be opened, keeping the old one: ") +
                    e.what());
      config_.socket = old.socket;
      config_.allowed_group = old.allowed_group;
      open_control_socket();
      if (!refused) refused = e.what();
    }
  }
  if (config_.flush_interval != old.flush_interval) arm_flush();
  if (config_.output_dir != old.output_dir) {
    spool_dir_.reset();  // read whole at the next accounting
    spool_touched_.clear();
  }
  // The locks follow what is in use now.
  if (config_.socket != old.socket && next_locks.socket)
    locks_.socket = std::move(next_locks.socket);
  if (config_.output_dir != old.output_dir && next_locks.output_dir)
    locks_.output_dir = std::move(next_locks.output_dir);
  if (!refused) logger_.note("configuration reloaded from " + config_path_);
  notifier_.ready(status_line());
  return refused;
}

void Daemon::record_flush(const FlushReport& r, const std::string& kernel_error) {
  spool_touched_.insert(spool_touched_.end(), r.touched.begin(), r.touched.end());
  nlohmann::ordered_json j;
  j["time"] = utc_time(r.unix_ns);
  j["unix_ns"] = r.unix_ns;
  j["seconds"] = r.seconds;
  j["ok"] = r.ok && !r.cut_short && kernel_error.empty();
  j["binaries_written"] = r.written;
  if (r.cut_short) {
    j["cut_short"] = true;
    j["binaries_pending"] = r.pending;
  }
  nlohmann::ordered_json failures = nlohmann::ordered_json::array();
  for (const FlushFailure& f : r.failures) {
    nlohmann::ordered_json e;
    e["binary"] = f.binary;
    e["directory"] = f.directory;
    e["reason"] = f.reason;
    failures.push_back(std::move(e));
  }
  if (!kernel_error.empty())
    failures.push_back({{"binary", "[kernel]"}, {"directory", ""}, {"reason", kernel_error}});
  j["failures"] = std::move(failures);
  last_flush_report_ = std::move(j);
  // The losses of the interval this flush ends.
  const LostSamples lost = lost_since_start();
  lost_in_last_interval_ = lost - lost_at_flush_;
  lost_at_flush_ = lost;
}

LostSamples Daemon::lost_since_start() const {
  return session_ ? ended_lost_ + session_->engine_counters().lost : ended_lost_;
}

void Daemon::stop() {
  stopping_ = true;
  // From when the signal was first seen: a flush it interrupted saw it before it was read.
  const auto began = stop_seen_.value_or(std::chrono::steady_clock::now());
  stop_deadline_ = began + config_.final_flush_timeout;
  notifier_.stopping();
  driver_.stop();
  finish_kernel_profile();  // with what it has so far, so the waiting request gets its path
  close_session();
  control_.reset();
  char took[32];
  std::snprintf(took, sizeof took, "%.2f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  logger_.note(std::string("stopped ") + took + " s after the signal, the final flush included");
  // Connections still open would keep the loop running.
  driver_.io().stop();
}

std::string Daemon::status_line() const {
  if (!session_) return "waiting for the next collection window";
  const SessionStatus s = session_->status();
  std::string line = "collecting " + s.event + " at ";
  line += s.by_frequency ? std::to_string(s.rate) + " Hz" : "a period of " + std::to_string(s.rate);
  // The rate is measured between flushes: none before the first.
  if (rate_measured_) {
    char rate[64];
    std::snprintf(rate, sizeof rate, ": %.0f samples/s", sample_rate_);
    line += rate;
  }
  return line + ", " + std::to_string(session_->profiled_images()) + " binaries";
}

nlohmann::ordered_json Daemon::status() const {
  nlohmann::ordered_json j = ok_reply();
  j["uptime_s"] =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_)
          .count();
  j["config"] = config_path_;
  j["engine"] = config_.engine;
  j["collecting"] = session_ != nullptr;
  j["output_dir"] = config_.output_dir;
  uint64_t samples = ended_samples_, own_samples = ended_own_samples_;
  const LostSamples lost = lost_since_start();
  std::map<std::string, uint64_t> unmapped = ended_unmapped_;
  nlohmann::ordered_json binaries = nlohmann::ordered_json::array();
  if (session_) {
    const SessionStatus s = session_->status();
    j["event"] = s.event;
    j["engine"] = s.engine;  // what `auto` chose
    for (const auto& [key, value] : s.engine_details.items()) j[key] = value;
    j[s.by_frequency ? "frequency_hz" : "period"] = s.rate;
    samples += s.samples;
    if (s.counters.backlog_limit_bytes) {
      j["backlog"] = {{"bytes", s.counters.backlog_bytes},
                      {"peak_bytes", s.counters.backlog_peak_bytes},
                      {"limit_bytes", s.counters.backlog_limit_bytes},
                      {"dropped_records", s.counters.dropped_records}};
    }
    own_samples += s.own_samples.value_or(0);
    for (const auto& [reason, count] : s.unmapped) unmapped[reason] += count;
    for (const auto& b : session_->binary_counts()) {
      nlohmann::ordered_json e;
      e["path"] = b.path;
      e["directory"] = b.directory;
      e["samples"] = b.samples;
      binaries.push_back(std::move(e));
    }
  } else {
    j["event"] = config_.event;
  }
  j["samples"] = samples;
  j["lost"] = lost.total();
  j["lost_by_reason"] = lost_json(lost);
  if (!last_flush_report_.is_null()) {
    nlohmann::ordered_json interval = lost_json(lost_in_last_interval_);
    j["lost_last_interval"] = std::move(interval);
  }
  j["lost_since_last_flush"] = lost_json(lost - lost_at_flush_);
  if (!last_flush_report_.is_null()) j["last_flush"] = last_flush_report_;
  j["own_samples"] = own_samples;  // the daemon's own, counted apart and profiled nowhere
  if (rate_measured_) j["sample_rate"] = sample_rate_;  // measured between flushes
  j["binaries"] = std::move(binaries);
  j["unmapped"] = unmapped;
  j["disk_bytes"] = spool_.total_bytes();  // as of the last flush
  if (config_.kernel) {
    nlohmann::ordered_json k;
    if (continuous_kernel_) {
      const PipelineCounts& c = continuous_kernel_->counts();
      k["event"] = continuous_kernel_->event().name;
      k["samples"] = c.samples;
      k["directory"] = continuous_kernel_->profile_directory();
    } else if (!continuous_kernel_error_.empty()) {
      k["error"] = continuous_kernel_error_;
    }
    j["kernel"] = std::move(k);
  }
  if (kernel_) {
    nlohmann::ordered_json k;
    k["started"] = utc_time(kernel_started_ns_);
    k["duration_s"] = kernel_seconds_;
    k["remaining_s"] = std::max(
        0.0, std::chrono::duration<double>(kernel_end_ - std::chrono::steady_clock::now()).count());
    k["output_dir"] = kernel_output_dir_;
    k["samples"] = kernel_->counts().samples;
    j["kernel_profile"] = std::move(k);
  }
  return j;
}

nlohmann::ordered_json Daemon::handle(const nlohmann::json& request) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string())
    return error_reply("a request names its command: {\"cmd\": \"status\"}");
  const std::string name = cmd->get<std::string>();
  if (stopping_) return error_reply("the daemon is stopping");
  if (name == "status") return status();
  if (name == "flush") {
    if (!session_) {
      nlohmann::ordered_json j = ok_reply();
      j["flushed"] = false;  // between windows everything collected is already written
      return j;
    }
    if (!flush()) {
      // What failed, binary by binary (the first few in the message, all in "failures").
      std::string why;
      const auto& failures = last_flush_report_["failures"];
      for (size_t i = 0; i < failures.size() && i < 3; ++i) {
        const auto& f = failures[i];
        const std::string binary = f["binary"].get<std::string>();
        why += (i ? "; " : "") + (binary.empty() ? f["directory"].get<std::string>() : binary) +
               ": " + f["reason"].get<std::string>();
      }
      if (failures.size() > 3) why += "; and " + std::to_string(failures.size() - 3) + " more";
      nlohmann::ordered_json j =
          error_reply("the flush failed (" + std::to_string(failures.size()) +
                      " not written; the profiles stay in memory): " + why);
      j["failures"] = failures;
      return j;
    }
    nlohmann::ordered_json j = ok_reply();
    j["flushed"] = true;
    j["binaries_written"] = last_flush_report_["binaries_written"];
    j["seconds"] = last_flush_report_["seconds"];
    return j;
  }
  if (name == "reload") {
    if (auto why = reload())
      return error_reply("reload refused, the running configuration is kept: " + *why);
    return ok_reply();
  }
  if (name == "kernel") {
    if (auto why = check_kernel_duration(request)) return error_reply(*why);
    if (kernel_) return error_reply("busy: a kernel profile is being collected");
    return error_reply(
        "kernel is answered when its profile is written (through the control socket)");
  }
  return error_reply("unknown command \"" + name + "\" (status, flush, reload, kernel)");
}

void Daemon::handle_async(const nlohmann::json& request,
                          std::function<void(nlohmann::ordered_json)> reply) {
  const auto cmd = request.find("cmd");
  if (!stopping_ && !kernel_ && cmd != request.end() && *cmd == "kernel" &&
      !check_kernel_duration(request)) {
    start_kernel_profile(request["duration"].get<double>(), std::move(reply));
    return;
  }
  reply(handle(request));
}

void Daemon::open_continuous_kernel() {
  if (continuous_kernel_) return;
  KernelCollectionSettings s;
  s.output_dir = config_.output_dir;
  s.cumulative = true;
  try {
    continuous_kernel_ = std::make_unique<KernelCollection>(std::move(s), logger_);
    continuous_kernel_->start();
    continuous_kernel_error_.clear();
    logger_.note("kernel = true: collecting a kernel profile (" + continuous_kernel_->event().name +
                 ") into " + config_.output_dir + "/" + continuous_kernel_->profile_directory());
  } catch (const std::exception& e) {
    continuous_kernel_.reset();
    std::string why = e.what();
    if (const auto* setting = dynamic_cast<const SettingError*>(&e))
      why = setting->spelled(daemon_config_key);
    // Said once per reason, not at every window.
    if (why != continuous_kernel_error_)
      logger_.error("kernel = true, but no kernel profile: " + why);
    continuous_kernel_error_ = why;
  }
}

std::optional<std::chrono::steady_clock::time_point> Daemon::final_flush_deadline() const {
  if (!stopping_) return std::nullopt;
  return stop_deadline_;
}

void Daemon::close_continuous_kernel() {
  if (!continuous_kernel_) return;
  spool_touched_.push_back(continuous_kernel_->profile_directory());
  spool_touched_.push_back("kernel.json");
  if (!continuous_kernel_->finish(final_flush_deadline()).ok) last_flush_ok_ = false;
  continuous_kernel_.reset();
}

void Daemon::start_kernel_profile(double seconds,
                                  std::function<void(nlohmann::ordered_json)> reply) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  KernelCollectionSettings s;
  s.output_dir = config_.output_dir + "/kernel-" + stamp;
  try {
    std::error_code ec;
    std::filesystem::create_directories(config_.output_dir, ec);
    // A new directory per profile: two in one second get -2, -3, ...
    for (int n = 2; !std::filesystem::create_directory(s.output_dir, ec); ++n) {
      if (ec || n > 100)
        throw std::runtime_error(s.output_dir + ": " + (ec ? ec.message() : "exists"));
      s.output_dir = config_.output_dir + "/kernel-" + stamp + "-" + std::to_string(n);
    }
    kernel_output_dir_ = s.output_dir;
    kernel_ = std::make_unique<KernelCollection>(std::move(s), logger_);
    kernel_->start();
  } catch (const SettingError& e) {
    kernel_.reset();
    reply(error_reply("kernel profile: " + e.spelled(daemon_config_key)));
    return;
  } catch (const std::exception& e) {
    kernel_.reset();
    reply(error_reply(std::string("kernel profile: ") + e.what()));
    return;
  }
  kernel_reply_ = std::move(reply);
  kernel_seconds_ = seconds;
  kernel_started_ns_ = now_unix_ns();
  kernel_end_ = std::chrono::steady_clock::now() +
                std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  logger_.note("collecting a kernel profile for " + std::to_string(seconds) + " s");
  // Drained by a timer alone: system-wide buffers of a few seconds' kernel samples are drained
  // well before they fill at this rate.
  kernel_poll_ = driver_.every(100ms, [this] {
    if (kernel_) kernel_->drain();
  });
  kernel_timer_ = driver_.at(kernel_end_, [this] {
    kernel_timer_.reset();
    finish_kernel_profile();
  });
}

void Daemon::finish_kernel_profile() {
  if (!kernel_) return;
  for (std::optional<SessionDriver::TimerId>* timer : {&kernel_timer_, &kernel_poll_}) {
    if (*timer) driver_.cancel(**timer);
    timer->reset();
  }
  // Ended by SIGTERM, it shares the final flush's deadline.
  const KernelCollectionResult r = kernel_->finish(final_flush_deadline());
  kernel_.reset();
  spool_touched_.push_back(std::filesystem::path(kernel_output_dir_).filename().string());
  nlohmann::ordered_json j;
  if (!r.ok) {
    j["error"] = "kernel profile: writing " + r.output_dir +
                 " failed: " + (r.error.empty() ? "see the log" : r.error);
  } else {
    j["ok"] = true;
    j["path"] = r.profile_dir;
    j["output_dir"] = r.output_dir;
    j["symbolized"] = r.symbolized;
    j["samples"] = r.samples;
    j["module_samples"] = r.module_samples;
  }
  logger_.note("kernel profile in " + r.profile_dir);
  auto reply = std::move(kernel_reply_);
  kernel_reply_ = nullptr;
  if (reply) reply(std::move(j));
}

}  // namespace profcollect
