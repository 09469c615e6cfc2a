#include "collector/cli/collect_command.h"

#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
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
#include "collector/proc_tasks.h"
#include "collector/collection_session.h"
#include "collector/event_selection.h"

namespace profcollect {

namespace {

namespace asio = boost::asio;

// The command's event loop over a collection session: its descriptors, a poll timer, the flush
// timer, the duration, signals and the child, on one io_context.
class CollectLoop {
 public:
  CollectLoop(const CollectOptions& o, asio::io_context& io)
      : o_(o), io_(io), logger_(o.quiet), flush_timer_(io), poll_timer_(io), duration_timer_(io), signals_(io) {}

  int run();

 private:
  void arm_fd(size_t i);
  void arm_poll();
  void arm_flush();
  void stop();
  void on_signal(int sig);
  void reap_child();

  const CollectOptions& o_;
  asio::io_context& io_;
  StderrLogger logger_;
  asio::steady_timer flush_timer_, poll_timer_, duration_timer_;
  asio::signal_set signals_;
  std::vector<std::unique_ptr<asio::posix::stream_descriptor>> fds_;
  std::unique_ptr<CollectionSession> session_;
  std::optional<CommandChild> child_;
  bool stopping_ = false;
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
  settings.output_dir = o_.output_dir;
  settings.binaries = o_.binaries;
  settings.debug_dirs = o_.debug_dirs;
  settings.unsymbolized = o_.unsymbolized;
  if (settings.target.kind == TargetKind::Command) {
    // The event selection is checked first, so a bad setting never forks the command.
    (void)select_event(EventOptions{parse_event_request(o_.event, o_.branch_any, o_.branch_filter), o_.frequency,
                                    o_.period},
                       SelectionContext::of_this_process());
    child_.emplace(o_.command);  // forked, waiting for go()
    settings.target.pids = {child_->pid()};
  }
  session_ = std::make_unique<CollectionSession>(std::move(settings), logger_);
  if (child_) {
    child_->go();  // exec; enable_on_exec starts the events
  } else {
    session_->start();
  }
  std::string what = o_.system_wide ? "all processes"
                     : !o_.command.empty() ? "command " + o_.command[0]
                                           : std::to_string(o_.pids.size()) + " process(es)";
  logger_.note("collecting " + what + " into " + o_.output_dir + ", flushing every " +
               format_seconds(o_.flush_interval));

  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.add(SIGHUP);
  if (child_) signals_.add(SIGCHLD);
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (!ec) on_signal(sig);
  });
  for (int fd : session_->descriptors()) {
    fds_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, fd));
    arm_fd(fds_.size() - 1);
  }
  arm_poll();
  arm_flush();
  if (o_.duration) {
    duration_timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(*o_.duration * 1000)));
    duration_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) {
        logger_.note("duration reached");
        stop();
      }
    });
  }
  if (child_) reap_child();  // the child may have failed to exec already
  io_.run();

  // The descriptors belong to the session's events: do not let asio close them.
  for (auto& d : fds_) d->release();

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

void CollectLoop::arm_fd(size_t i) {
  fds_[i]->async_wait(asio::posix::stream_descriptor::wait_read,
                      [this, i](const boost::system::error_code& ec) {
                        if (ec || stopping_) return;
                        session_->drain();
                        // An fd whose thread exited stays readable (POLLHUP): wait a little before
                        // listening again so it cannot spin; the poll timer drains meanwhile.
                        auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(10));
                        t->async_wait([this, i, t](const boost::system::error_code& e) {
                          if (!e && !stopping_) arm_fd(i);
                        });
                      });
}

void CollectLoop::arm_poll() {
  // Wakeups come at half a buffer; a timer also drains so that records of a slow workload and
  // process exits are seen promptly.
  poll_timer_.expires_after(std::chrono::milliseconds(100));
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    session_->drain();
    if (!session_->targets_alive()) {
      logger_.note("every target process has exited");
      stop();
      return;
    }
    arm_poll();
  });
}

void CollectLoop::arm_flush() {
  flush_timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(o_.flush_interval * 1000)));
  flush_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    session_->drain();
    flush_failed_ = !session_->flush();
    arm_flush();
  });
}

void CollectLoop::stop() {
  if (stopping_) return;
  stopping_ = true;
  flush_failed_ = !session_->stop();
  flush_timer_.cancel();
  poll_timer_.cancel();
  duration_timer_.cancel();
  signals_.cancel();
  for (auto& d : fds_) d->cancel();
}

void CollectLoop::reap_child() {
  if (child_ && child_->reap()) stop();
}

void CollectLoop::on_signal(int sig) {
  if (sig == SIGHUP) {
    session_->drain();
    flush_failed_ = !session_->flush();
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
  asio::io_context io;
  CollectLoop loop(checked, io);
  return loop.run();
}

}  // namespace profcollect
