#include "collector/cli/collect_command.h"

#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"
#include "collector/cli/command_child.h"
#include "collector/event_selection.h"
#include "collector/live_record_source.h"
#include "collector/mapped_binary_opener.h"
#include "collector/mmap_budget.h"
#include "collector/online_cpus.h"
#include "collector/perf_event_set.h"
#include "collector/perf_permissions.h"
#include "mapper/process_table.h"
#include "output/binary_profiles.h"
#include "output/profile_store.h"

namespace profcollect {

namespace {

namespace asio = boost::asio;

uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

std::string realpath_or(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool looks_like_build_id(const std::string& s) {
  if (s.size() < 16 || s.size() > 40 || s.size() % 2) return false;
  return s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

BinarySelection make_selection(const CollectOptions& o, const std::string& command_path) {
  BinarySelection sel;
  for (const auto& b : o.binaries) {
    if (looks_like_build_id(b) && !std::filesystem::exists(b)) {
      sel.build_ids.push_back(*BuildId::from_hex(b));
    } else {
      sel.paths.push_back(realpath_or(b));
      if (sel.paths.back() != b) sel.paths.push_back(b);
    }
  }
  if (!o.binaries.empty()) return sel;
  if (o.system_wide) {
    sel.all = true;
  } else if (!o.command.empty()) {
    sel.paths.push_back(command_path);
  } else {
    for (int pid : o.pids) {
      char buf[PATH_MAX];
      std::string link = "/proc/" + std::to_string(pid) + "/exe";
      ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
      if (n > 0) sel.paths.emplace_back(buf, static_cast<size_t>(n));
    }
  }
  return sel;
}

// The collection: perf events, their records, the process table and the profiles, driven by
// one io_context.
class Collection {
 public:
  Collection(const CollectOptions& o, asio::io_context& io) : o_(o), io_(io), flush_timer_(io),
      poll_timer_(io), duration_timer_(io), signals_(io) {}

  int run();

 private:
  void arm_fd(size_t i);
  void arm_poll();
  void arm_flush();
  void drain_and_process();
  void process_ready();  // resolves every record the source has ready
  void resync_after_loss();
  void flush(bool final_flush);
  void stop();
  void on_signal(int sig);
  void reap_child();
  nlohmann::ordered_json summary() const;
  void say(const std::string& s) const {
    if (!o_.quiet) std::fprintf(stderr, "profcollect: %s\n", s.c_str());
  }

  const CollectOptions& o_;
  asio::io_context& io_;
  asio::steady_timer flush_timer_, poll_timer_, duration_timer_;
  asio::signal_set signals_;
  std::vector<std::unique_ptr<asio::posix::stream_descriptor>> fds_;

  EventSelection selection_;
  std::unique_ptr<PerfEventSet> events_;
  std::unique_ptr<LiveRecordSource> source_;
  std::unique_ptr<ProfileStore> store_;
  std::unique_ptr<BinaryProfiles> profiles_;
  ProcessTable processes_;
  std::optional<CommandChild> child_;
  int child_status_ = 0;
  bool stopping_ = false;
  bool flush_failed_ = false;
  uint64_t samples_ = 0;
  uint64_t branch_stacks_ = 0;  // samples that carried a branch stack
  int64_t clock_to_epoch_ = 0;  // add to a sample's CLOCK_MONOTONIC time for Unix-epoch ns
  uint64_t start_ns_ = 0;
  uint64_t lost_records_seen_ = 0;
  std::chrono::steady_clock::time_point last_resync_{};
};

int Collection::run() {
  PerfPermissions permissions = PerfPermissions::of_this_process();
  SelectionContext ctx = SelectionContext::of_this_process();
  EventOptions eo;
  eo.event = parse_event_request(o_.event, o_.branch_any, o_.branch_filter);
  eo.frequency_hz = o_.frequency;
  eo.period = o_.period;
  selection_ = select_event(eo, ctx);

  CollectionTarget target;
  std::string command_path;
  if (o_.system_wide) {
    target.kind = TargetKind::SystemWide;
  } else if (!o_.command.empty()) {
    target.kind = TargetKind::Command;
    command_path = resolve_command_path(o_.command[0]);
  } else {
    target.kind = TargetKind::Processes;
    for (int p : o_.pids) target.pids.push_back(p);
  }

  store_ = std::make_unique<ProfileStore>(o_.output_dir);  // an unwritable DIR fails before anything runs
  profiles_ = std::make_unique<BinaryProfiles>(make_selection(o_, command_path), open_mapped_binary,
                                               selection_.name);
  profiles_->set_write_unsymbolized(o_.unsymbolized);

  if (target.kind == TargetKind::Command) {
    child_.emplace(o_.command);  // forked, waiting for go()
    target.pids = {child_->pid()};
  }

  perf_event_attr attr = make_sampling_attr(selection_, target.kind);
  // Sample times on CLOCK_MONOTONIC, so they convert to wall-clock time for meta.json.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  EventSetOptions so;
  so.event_name = selection_.name;
  LockBudget budget = LockBudget::of_this_process(permissions);
  so.mmap_pages = choose_mmap_pages(budget, static_cast<uint32_t>(online_cpus().size()), o_.mmap_pages);
  events_ = std::make_unique<PerfEventSet>(attr, target, so, permissions);
  source_ = std::make_unique<LiveRecordSource>(*events_, selection_.name);

  clock_to_epoch_ = static_cast<int64_t>(clock_ns(CLOCK_REALTIME)) - static_cast<int64_t>(clock_ns(CLOCK_MONOTONIC));
  start_ns_ = clock_ns(CLOCK_REALTIME);

  say(selection_.engine_note);
  if (!selection_.kernel_note.empty()) say(selection_.kernel_note);
  if (!selection_.rate_note.empty()) say(selection_.rate_note);
  for (const auto& n : events_->notes()) say(n);

  if (target.kind == TargetKind::Command) {
    child_->go();  // exec; enable_on_exec starts the events
  } else {
    events_->enable();
    if (target.kind == TargetKind::SystemWide) {
      source_->add_all_existing_processes();
    } else {
      for (int p : o_.pids) source_->add_existing_process(p);
    }
  }
  std::string what = target.kind == TargetKind::SystemWide ? "all processes"
                     : target.kind == TargetKind::Command ? "command " + o_.command[0]
                                                          : std::to_string(o_.pids.size()) + " process(es)";
  say("collecting " + what + " into " + o_.output_dir + ", flushing every " +
      std::to_string(static_cast<int>(o_.flush_interval)) + " s");

  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.add(SIGHUP);
  if (child_) signals_.add(SIGCHLD);
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (!ec) on_signal(sig);
  });
  for (int fd : source_->pollable_fds()) {
    fds_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, fd));
    arm_fd(fds_.size() - 1);
  }
  arm_poll();
  arm_flush();
  if (o_.duration) {
    duration_timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(*o_.duration * 1000)));
    duration_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) {
        say("duration reached");
        stop();
      }
    });
  }
  if (child_) reap_child();  // the child may have failed to exec already
  io_.run();

  // The descriptors belong to PerfEventSet: do not let asio close them.
  for (auto& d : fds_) d->release();

  if (child_) {
    if (!child_->reap()) {
      // --duration ended the collection, not the command: let it finish, and exit with its status.
      say("collection ended; waiting for " + o_.command[0] + " to exit");
      child_->wait();
    }
    return child_->exit_code();
  }
  return flush_failed_ ? 1 : 0;
}

void Collection::arm_fd(size_t i) {
  fds_[i]->async_wait(asio::posix::stream_descriptor::wait_read,
                      [this, i](const boost::system::error_code& ec) {
                        if (ec || stopping_) return;
                        drain_and_process();
                        // An fd whose thread exited stays readable (POLLHUP): wait a little before
                        // listening again so it cannot spin; the poll timer drains meanwhile.
                        auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(10));
                        t->async_wait([this, i, t](const boost::system::error_code& e) {
                          if (!e && !stopping_) arm_fd(i);
                        });
                      });
}

void Collection::arm_poll() {
  // Wakeups come at half a buffer; a timer also drains so that records of a slow workload and
  // process exits are seen promptly.
  poll_timer_.expires_after(std::chrono::milliseconds(100));
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    drain_and_process();
    if (!child_ && !o_.system_wide && events_->live_event_count() == 0) {
      say("every target process has exited");
      stop();
      return;
    }
    arm_poll();
  });
}

void Collection::arm_flush() {
  flush_timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(o_.flush_interval * 1000)));
  flush_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    drain_and_process();
    flush(false);
    arm_flush();
  });
}

void Collection::drain_and_process() {
  source_->drain();
  process_ready();
  resync_after_loss();
}

void Collection::resync_after_loss() {
  // A ring-buffer overrun may have taken MMAP2 records with it, and then every later sample of
  // that mapping would count as unmapped. The target processes' mappings are read again from
  // /proc (at most once a second); what is already known is simply replaced.
  uint64_t lost = source_->counters().lost_records;
  if (lost == lost_records_seen_ || o_.system_wide) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_resync_ < std::chrono::seconds(1)) return;
  lost_records_seen_ = lost;
  last_resync_ = now;
  if (child_) {
    source_->add_existing_process(child_->pid());
  } else {
    for (int p : o_.pids) source_->add_existing_process(p);
  }
}

void Collection::process_ready() {
  Record r;
  while (source_->next(r)) {
    if (auto* s = std::get_if<SampleRecord>(&r)) {
      ++samples_;
      uint64_t t = s->time == kNoTime ? 0 : static_cast<uint64_t>(static_cast<int64_t>(s->time) + clock_to_epoch_);
      profiles_->add_sample(s->pid, s->ip, s->cpumode, t, processes_);
      if (s->has_branch_stack) {
        ++branch_stacks_;
        profiles_->add_branch_stack(s->pid, s->branches, processes_);
      }
    } else {
      processes_.update(r);
    }
  }
}

nlohmann::ordered_json Collection::summary() const {
  const LiveCounters& c = source_->counters();
  nlohmann::ordered_json j;
  j["event"] = selection_.name;
  if (selection_.rate.by_frequency) {
    j["frequency_hz"] = selection_.rate.value;
  } else {
    j["period"] = selection_.rate.value;
  }
  j["samples"] = samples_;
  if (records_branch_stack(selection_.engine)) j["branch_stacks"] = branch_stacks_;
  j["lost"] = c.lost_samples + c.dropped_samples;
  j["lost_records"] = c.lost_records;
  j["throttled"] = c.throttles;
  const OutcomeCounts& oc = profiles_->outcomes();
  j["mapped"] = oc[SampleOutcome::Mapped];
  nlohmann::ordered_json unmapped = nlohmann::ordered_json::object();
  for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
    auto o = static_cast<SampleOutcome>(i);
    if (o == SampleOutcome::NoSymbol) continue;  // decided per function when writing
    unmapped[std::string(outcome_name(o))] = oc[o];
  }
  j["unmapped"] = unmapped;
  j["binaries"] = profiles_->binary_count();
  j["start_ns"] = start_ns_;
  j["end_ns"] = clock_ns(CLOCK_REALTIME);
  return j;
}

void Collection::flush(bool final_flush) {
  try {
    profiles_->flush(*store_);
    store_->write_collection(summary());
    flush_failed_ = false;
  } catch (const std::exception& e) {
    // Keep everything in memory: the next flush writes it all.
    flush_failed_ = true;
    std::fprintf(stderr, "profcollect: error: flush failed: %s%s\n", e.what(),
                 final_flush ? "" : " (the profiles in memory are kept; retrying at the next flush)");
  }
  for (const auto& w : profiles_->take_warnings()) say("warning: " + w);
  for (const auto& w : store_->take_warnings()) say("warning: " + w);
}

void Collection::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (events_) events_->disable();
  drain_and_process();
  source_->finish();
  process_ready();
  flush(true);
  const LiveCounters& c = source_->counters();
  say(std::to_string(samples_) + " samples, " + std::to_string(profiles_->outcomes()[SampleOutcome::Mapped]) +
      " in " + std::to_string(profiles_->binary_count()) + " profiled binaries, " +
      std::to_string(c.lost_samples + c.dropped_samples) + " lost; profiles in " + o_.output_dir);
  flush_timer_.cancel();
  poll_timer_.cancel();
  duration_timer_.cancel();
  signals_.cancel();
  for (auto& d : fds_) d->cancel();
}

void Collection::reap_child() {
  if (child_ && child_->reap()) {
    stop();
  }
}

void Collection::on_signal(int sig) {
  if (sig == SIGHUP) {
    drain_and_process();
    flush(false);
  } else if (sig == SIGCHLD) {
    reap_child();
  } else if (child_) {
    // Ctrl-C reaches the child from the terminal too; a signal sent to us alone is passed on.
    // Either way profcollect ends when the child does, with its status.
    child_->signal(sig);
  } else {
    say(std::string("received ") + strsignal(sig) + ", writing the final profiles");
    stop();
  }
  if (!stopping_) {
    signals_.async_wait([this](const boost::system::error_code& ec, int s) {
      if (!ec) on_signal(s);
    });
  }
}

}  // namespace

int run_collect(const CollectOptions& options) {
  int modes = (!options.pids.empty()) + (!options.command.empty()) + options.system_wide;
  if (modes != 1) {
    throw CliError("name one target: --pid PID[,PID...], -a, or -- COMMAND [ARGS...]", 2);
  }
  if (options.frequency && options.period) throw CliError("-F and -c exclude each other", 2);
  if (options.flush_interval <= 0) throw CliError("--flush-interval must be positive", 2);
  for (int pid : options.pids) {
    if (pid <= 0 || !std::filesystem::exists("/proc/" + std::to_string(pid))) {
      throw CliError("no process " + std::to_string(pid));
    }
  }
  asio::io_context io;
  Collection c(options, io);
  return c.run();
}

}  // namespace profcollect
