#include "collector/daemon.h"

#include <signal.h>
#include <grp.h>
#include <sys/stat.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>

#include "collector/collection_session.h"
#include "collector/control_server.h"
#include "collector/kernel_collection.h"
#include "collector/setting_error.h"
#include "collector/spool_limits.h"
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

}  // namespace

Daemon::Daemon(asio::io_context& io, std::string config_path, DaemonConfig config, SessionLogger& logger)
    : io_(io),
      config_path_(std::move(config_path)),
      config_(std::move(config)),
      logger_(logger),
      poll_timer_(io),
      flush_timer_(io),
      window_timer_(io),
      watchdog_timer_(io),
      signals_(io),
      kernel_timer_(io),
      kernel_poll_(io) {}

Daemon::~Daemon() {
  for (auto& d : descriptors_) d->release();  // the session's events own them
}

bool Daemon::run() {
  started_ = std::chrono::steady_clock::now();
  signals_.add(SIGTERM);
  signals_.add(SIGINT);
  signals_.add(SIGHUP);
  wait_signal();
  refuse_linked_output_dir();
  // What an earlier run left is held to the limits before anything is added to it.
  enforce_spool_limits();
  open_control_socket();
  open_session();
  if (config_.schedule) arm_window();
  arm_poll();
  arm_flush();
  arm_watchdog();
  io_.run();
  return last_flush_ok_;
}

void Daemon::open_control_socket() {
  control_ = std::make_unique<ControlServer>(
      io_, config_.socket, group_id(config_.allowed_group),
      [this](const nlohmann::json& request, ControlServer::Reply reply) { handle_async(request, std::move(reply)); },
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
  session_ = std::make_unique<CollectionSession>(std::move(s), logger_);
  // A flush blocks the loop, and with it the watchdog timer: it pings between binaries.
  session_->set_flush_progress([this] { ping_watchdog_if_due(); });
  session_->start();
  ++generation_;
  for (int fd : session_->descriptors()) {
    descriptors_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, fd));
    arm_descriptor(descriptors_.size() - 1);
  }
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
  ++generation_;
  for (auto& d : descriptors_) {
    d->cancel();
    d->release();
  }
  descriptors_.clear();
  close_continuous_kernel();
  last_flush_ok_ = session_->stop();
  const nlohmann::ordered_json s = session_->status();
  ended_samples_ += s.value("samples", uint64_t{0});
  ended_lost_ += s.value("lost", uint64_t{0});
  ended_own_samples_ += s.value("own_samples", uint64_t{0});
  for (const auto& [reason, count] : s["unmapped"].items()) ended_unmapped_[reason] += count.get<uint64_t>();
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
    throw OutputError(config_.output_dir,
                      "output_dir is a symbolic link: the daemon does not follow it (name the directory itself)");
  }
}

void Daemon::enforce_spool_limits() {
  if (!config_.max_disk_bytes && !config_.retention_days) return;
  SpoolLimits limits;
  limits.max_bytes = config_.max_disk_bytes;
  if (config_.retention_days) {
    const uint64_t now_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
    const uint64_t keep_ns = *config_.retention_days * 86'400ull * 1'000'000'000ull;
    limits.expire_before_ns = now_ns > keep_ns ? now_ns - keep_ns : 0;
  }
  const SpoolEnforcement done = apply_spool_limits(config_.output_dir, limits);
  for (const std::string& e : done.errors) logger_.error(e);
  for (const Eviction& e : done.evicted) {
    // The budget is a hard limit: a binary being profiled goes too, with its counts in memory,
    // which the next flush would otherwise write back.
    bool profiled = session_ && session_->drop_binary(e.entry.directory);
    if (continuous_kernel_ && continuous_kernel_->forget(e.entry.directory)) profiled = true;
    logger_.note("evicted " + e.entry.directory + " (" + std::to_string(e.entry.bytes) + " bytes, last sampled at " +
                 std::to_string(e.entry.last_sample_ns / 1'000'000'000) + " s since the epoch): " + e.reason +
                 (profiled ? "; it is being profiled: its counts in memory are dropped and its next samples start "
                             "a new profile"
                           : ""));
  }
  const uint64_t total = done.bytes_left;
  if (limits.max_bytes && total > *limits.max_bytes) {
    if (!over_budget_said_) {
      logger_.warning("the output directory holds " + std::to_string(total) +
                      " bytes, more than max_disk_mb, in files that are not binary directories of this user");
    }
    over_budget_said_ = true;
  } else {
    over_budget_said_ = false;
  }
}

void Daemon::arm_descriptor(size_t i) {
  const uint64_t generation = generation_;
  descriptors_[i]->async_wait(
      asio::posix::stream_descriptor::wait_read, [this, i, generation](const boost::system::error_code& ec) {
        if (ec || stopping_ || generation != generation_) return;
        session_->drain();
        // An fd whose thread exited stays readable (POLLHUP): wait a little before listening
        // again so it cannot spin; the poll timer drains meanwhile.
        auto t = std::make_shared<asio::steady_timer>(io_, 10ms);
        t->async_wait([this, i, t, generation](const boost::system::error_code& e) {
          if (!e && !stopping_ && generation == generation_) arm_descriptor(i);
        });
      });
}

void Daemon::arm_poll() {
  // Wakeups come at half a buffer; the timer also drains, so that a quiet host's records and
  // process exits are seen promptly.
  poll_timer_.expires_after(100ms);
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    if (session_) session_->drain();
    // Kernel-only events on every CPU, drained by this timer alone: at the kernel profile's rate
    // a buffer holds far more than 100 ms of samples.
    if (continuous_kernel_) continuous_kernel_->drain();
    arm_poll();
  });
}

void Daemon::arm_flush() {
  flush_timer_.expires_after(config_.flush_interval);
  flush_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    if (session_) flush();
    arm_flush();
  });
}

void Daemon::arm_window() {
  // The first window opened with the daemon; it closes after `on`, the next opens `every`
  // after the one before.
  const DutyCycle cycle = *config_.schedule;
  window_timer_.expires_after(session_ ? cycle.on : cycle.every - cycle.on);
  window_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
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
  notifier_.watchdog();
  last_watchdog_ping_ = std::chrono::steady_clock::now();
  watchdog_timer_.expires_after(*interval);
  watchdog_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) arm_watchdog();
  });
}

void Daemon::wait_signal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec || stopping_) return;
    if (sig == SIGHUP) {
      (void)reload();
      wait_signal();
    } else {
      logger_.note(std::string("received ") + strsignal(sig) + ", writing the final profiles");
      stop();
    }
  });
}

bool Daemon::flush() {
  session_->drain();
  last_flush_ok_ = session_->flush();
  if (continuous_kernel_) {
    continuous_kernel_->drain();
    if (!continuous_kernel_->flush().ok) last_flush_ok_ = false;
  }
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
    window_timer_.cancel();
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
      logger_.error(std::string("the new control socket cannot be opened, keeping the old one: ") + e.what());
      config_.socket = old.socket;
      config_.allowed_group = old.allowed_group;
      open_control_socket();
      if (!refused) refused = e.what();
    }
  }
  if (config_.flush_interval != old.flush_interval) {
    flush_timer_.cancel();
    arm_flush();
  }
  if (!refused) logger_.note("configuration reloaded from " + config_path_);
  notifier_.ready(status_line());
  return refused;
}

void Daemon::stop() {
  stopping_ = true;
  notifier_.stopping();
  poll_timer_.cancel();
  flush_timer_.cancel();
  window_timer_.cancel();
  watchdog_timer_.cancel();
  signals_.cancel();
  finish_kernel_profile();  // with what it has so far, so the waiting request gets its path
  close_session();
  control_.reset();
  // Connections still open would keep the loop running.
  io_.stop();
}

std::string Daemon::status_line() const {
  if (!session_) return "waiting for the next collection window";
  const nlohmann::ordered_json s = session_->status();
  std::string line = "collecting " + s.value("event", std::string()) + " at ";
  line += s.contains("frequency_hz") ? std::to_string(s["frequency_hz"].get<uint64_t>()) + " Hz"
                                     : "a period of " + std::to_string(s.value("period", uint64_t{0}));
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
  j["uptime_s"] = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_).count();
  j["config"] = config_path_;
  j["engine"] = config_.engine;
  j["collecting"] = session_ != nullptr;
  j["output_dir"] = config_.output_dir;
  uint64_t samples = ended_samples_, lost = ended_lost_, own_samples = ended_own_samples_;
  std::map<std::string, uint64_t> unmapped = ended_unmapped_;
  nlohmann::ordered_json binaries = nlohmann::ordered_json::array();
  if (session_) {
    const nlohmann::ordered_json s = session_->status();
    j["event"] = s["event"];
    j["engine"] = s["engine"];  // what `auto` chose
    if (s.contains("bpf")) j["bpf"] = s["bpf"];
    if (s.contains("frequency_hz")) j["frequency_hz"] = s["frequency_hz"];
    if (s.contains("period")) j["period"] = s["period"];
    samples += s.value("samples", uint64_t{0});
    lost += s.value("lost", uint64_t{0});
    own_samples += s.value("own_samples", uint64_t{0});
    for (const auto& [reason, count] : s["unmapped"].items()) unmapped[reason] += count.get<uint64_t>();
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
  j["lost"] = lost;
  j["own_samples"] = own_samples;  // the daemon's own, counted apart and profiled nowhere
  if (rate_measured_) j["sample_rate"] = sample_rate_;  // measured between flushes
  j["binaries"] = std::move(binaries);
  j["unmapped"] = unmapped;
  j["disk_bytes"] = directory_bytes(config_.output_dir);
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
  return j;
}

nlohmann::ordered_json Daemon::handle(const nlohmann::json& request) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string()) return error_reply("a request names its command: {\"cmd\": \"status\"}");
  const std::string name = cmd->get<std::string>();
  if (stopping_) return error_reply("the daemon is stopping");
  if (name == "status") return status();
  if (name == "flush") {
    if (!session_) {
      nlohmann::ordered_json j = ok_reply();
      j["flushed"] = false;  // between windows everything collected is already written
      return j;
    }
    if (!flush()) return error_reply("the flush failed: the daemon's log says why; the profiles stay in memory");
    nlohmann::ordered_json j = ok_reply();
    j["flushed"] = true;
    return j;
  }
  if (name == "reload") {
    if (auto why = reload()) return error_reply("reload refused, the running configuration is kept: " + *why);
    return ok_reply();
  }
  if (name == "kernel") {
    const auto duration = request.find("duration");
    if (duration == request.end() || !duration->is_number() || duration->get<double>() <= 0) {
      return error_reply("kernel needs a positive \"duration\" in seconds");
    }
    if (kernel_) return error_reply("busy: a kernel profile is being collected");
    return error_reply("kernel is answered when its profile is written (through the control socket)");
  }
  return error_reply("unknown command \"" + name + "\" (status, flush, reload, kernel)");
}

void Daemon::handle_async(const nlohmann::json& request, std::function<void(nlohmann::ordered_json)> reply) {
  const auto cmd = request.find("cmd");
  const auto duration = request.find("duration");
  if (!stopping_ && !kernel_ && cmd != request.end() && *cmd == "kernel" && duration != request.end() &&
      duration->is_number() && duration->get<double>() > 0) {
    start_kernel_profile(duration->get<double>(), std::move(reply));
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
    logger_.note("kernel = true: collecting a kernel profile (" + continuous_kernel_->event().name + ") into " +
                 config_.output_dir + "/" + continuous_kernel_->profile_directory());
  } catch (const std::exception& e) {
    continuous_kernel_.reset();
    std::string why = e.what();
    if (const auto* setting = dynamic_cast<const SettingError*>(&e)) why = setting->spelled(daemon_config_key);
    // Said once per reason, not at every window.
    if (why != continuous_kernel_error_) logger_.error("kernel = true, but no kernel profile: " + why);
    continuous_kernel_error_ = why;
  }
}

void Daemon::close_continuous_kernel() {
  if (!continuous_kernel_) return;
  if (!continuous_kernel_->finish().ok) last_flush_ok_ = false;
  continuous_kernel_.reset();
}

void Daemon::start_kernel_profile(double seconds, std::function<void(nlohmann::ordered_json)> reply) {
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
      if (ec || n > 100) throw std::runtime_error(s.output_dir + ": " + (ec ? ec.message() : "exists"));
      s.output_dir = config_.output_dir + "/kernel-" + stamp + "-" + std::to_string(n);
    }
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
  kernel_end_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  logger_.note("collecting a kernel profile for " + std::to_string(seconds) + " s");
  arm_kernel_poll();
  kernel_timer_.expires_at(kernel_end_);
  kernel_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) finish_kernel_profile();
  });
}

void Daemon::arm_kernel_poll() {
  // Drained by a timer alone: system-wide buffers of a few seconds' kernel samples are drained
  // well before they fill at this rate.
  kernel_poll_.expires_after(100ms);
  kernel_poll_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !kernel_) return;
    kernel_->drain();
    arm_kernel_poll();
  });
}

void Daemon::finish_kernel_profile() {
  if (!kernel_) return;
  kernel_timer_.cancel();
  kernel_poll_.cancel();
  const KernelCollectionResult r = kernel_->finish();
  kernel_.reset();
  nlohmann::ordered_json j;
  if (!r.ok) {
    j["error"] = "kernel profile: writing " + r.output_dir + " failed: the daemon's log says why";
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
