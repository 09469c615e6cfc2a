#include "collector/cli/collect_command.h"

#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"
#include "collector/cli/cli_spelling.h"
#include "collector/cli/stderr_logger.h"
#include "collector/cli/command_child.h"
#include "collector/cli/number_options.h"
#include "collector/host/proc_tasks.h"
#include "collector/session/collection_session.h"
#include "collector/session/session_driver.h"
#include "collector/live/event_selection.h"

namespace profcollect {

namespace {

// The command over a collection session, on the session driver: its descriptors, a poll timer,
// the flush timer, the duration, signals and the child.
class CollectLoop {
 public:
  explicit CollectLoop(const CollectOptions& o)
      : o_(o), driver_({SIGINT, SIGTERM, SIGHUP, SIGCHLD}), logger_(o.quiet) {}

  int run();

 private:
  void poll();
  void flush();
  void stop();
  void on_signal(int sig);
  void reap_child();

  const CollectOptions& o_;
  SessionDriver driver_;  // made first: it blocks the signals before the session's threads start
  StderrLogger logger_;
  std::unique_ptr<CollectionSession> session_;
  std::optional<CommandChild> child_;
  bool flush_failed_ = false;
};

int CollectLoop::run() {
  SessionSettings settings;
  if (o_.system_wide) {
    settings.target.kind = TargetKind::SystemWide;
  } else if (!o_.command.empty()) {
    settings.target.kind = TargetKind::Command;
    settings.command_path = resolve_command_path(o_.command[0]);
  } else {
    settings.target.kind = TargetKind::Processes;
    for (int p : o_.pids) settings.target.pids.push_back(p);
  }
  settings.event = o_.event;
  settings.engine = o_.engine;
  settings.branch_any = o_.branch_any;
  settings.branch_filter = o_.branch_filter;
  settings.frequency = o_.frequency;
  settings.period = o_.period;
  settings.mmap_pages = o_.mmap_pages;
  settings.backlog_bytes = static_cast<size_t>(o_.backlog_mb) << 20;
  settings.output_dir = o_.output_dir;
  settings.binaries = o_.binaries;
  settings.debug_dirs = o_.debug_dirs;
  settings.unsymbolized = o_.unsymbolized;
  if (!o_.formats.empty()) {
    try {
      settings.formats = parse_format_list(o_.formats);
    } catch (const FormatListError& e) {
      throw CliError(in_cli_terms(e.what()), 2);
    }
  }
  if (settings.target.kind == TargetKind::Command) {
    // The event selection is checked first, so a bad setting never forks the command.
    (void)select_event(EventOptions{parse_event_request(o_.event, o_.branch_any, o_.branch_filter),
                                    o_.frequency, o_.period},
                       SelectionContext::of_this_process());
    child_.emplace(o_.command);  // forked, waiting for go()
    settings.target.pids = {child_->pid()};
  }
  session_ = std::make_unique<CollectionSession>(std::move(settings), logger_);
  // A SIGINT or SIGTERM during a flush stays pending: the flush stops, and the final one has
  // what is left. With a child, profcollect waits for it instead.
  if (!child_) {
    session_->set_flush_interrupt(
        [this] { return driver_.signal_pending(SIGINT) || driver_.signal_pending(SIGTERM); });
  }
  if (child_) {
    child_->go();  // exec; enable_on_exec starts the events
  } else {
    session_->start();
  }
  std::string what = o_.system_wide        ? "all processes"
                     : !o_.command.empty() ? "command " + o_.command[0]
                                           : std::to_string(o_.pids.size()) + " process(es)";
  logger_.note("collecting " + what + " into " + o_.output_dir + ", flushing every " +
               format_seconds(o_.flush_interval));

  driver_.on_signal([this](int sig) { on_signal(sig); });
  driver_.watch(session_->descriptors(), [this] { session_->drain(); });
  // Wakeups come at half a buffer; a timer also drains so that records of a slow workload and
  // process exits are seen promptly.
  driver_.every(std::chrono::milliseconds(100), [this] { poll(); });
  driver_.every(std::chrono::milliseconds(static_cast<int64_t>(o_.flush_interval * 1000)),
                [this] { flush(); });
  if (o_.duration) {
    driver_.after(std::chrono::milliseconds(static_cast<int64_t>(*o_.duration * 1000)), [this] {
      logger_.note("duration reached");
      stop();
    });
  }
  if (child_) reap_child();  // the child may have failed to exec already
  driver_.run();

  if (child_) {
    if (!child_->reap()) {
      // The duration ended the collection, not the command: let it finish, and exit with its status.
      logger_.note("collection ended; waiting for " + o_.command[0] + " to exit");
      child_->wait();
    }
    // The command's failure is its own status; a command that succeeded while its profiles
    // could not be written is still a failed run.
    const int status = child_->exit_code();
    return status != 0 ? status : flush_failed_ ? 1 : 0;
  }
  return flush_failed_ ? 1 : 0;
}

void CollectLoop::poll() {
  session_->drain();
  if (!session_->targets_alive()) {
    logger_.note("every target process has exited");
    stop();
  }
}

void CollectLoop::flush() {
  session_->drain();
  flush_failed_ = !session_->flush();
}

void CollectLoop::stop() {
  if (driver_.stopped()) return;
  driver_.stop();
  flush_failed_ = !session_->stop();
}

void CollectLoop::reap_child() {
  if (child_ && child_->reap()) stop();
}

void CollectLoop::on_signal(int sig) {
  if (sig == SIGHUP) {
    flush();
  } else if (sig == SIGCHLD) {
    reap_child();
  } else if (child_) {
    // Ctrl-C reaches the child from the terminal too; a signal sent to us alone is passed on.
    // Either way profcollect ends when the child does, with its status.
    child_->signal(sig);
  } else {
    logger_.note(std::string("received ") + strsignal(sig) + ", writing the final profiles");
    stop();
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
  CollectOptions checked = options;
  checked.pids.clear();
  for (int pid : options.pids) {
    const std::optional<pid_t> process = thread_group_of(pid);
    if (!process) throw CliError("no process " + std::to_string(pid));
    if (*process != pid && !options.quiet) {
      std::fprintf(stderr, "profcollect: %d is a thread of process %d: profiling process %d\n", pid,
                   *process, *process);
    }
    if (std::find(checked.pids.begin(), checked.pids.end(), *process) == checked.pids.end()) {
      checked.pids.push_back(*process);
    }
  }
  CollectLoop loop(checked);
  return loop.run();
}

}  // namespace profcollect
