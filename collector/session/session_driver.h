// The one event loop under every way a collection runs (the command, the kernel command and the
// daemon): the sessions' ring-buffer descriptors, timers, and signals, on one Boost.Asio
// io_context that the control socket can share.
//
// Signals are blocked in the thread that makes the driver (make it before any thread starts, so
// that every thread inherits the mask) and read from a signalfd. A blocked signal stays pending
// until the loop reads it, so work that holds the loop (a flush) can ask whether one came
// (signal_pending) and stop early. A child process must unblock them before it execs.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace profcollect {

class SessionDriver {
 public:
  using Clock = std::chrono::steady_clock;
  using TimerId = uint64_t;

  // `signals`: what the loop reads (on_signal); blocked from here on.
  explicit SessionDriver(std::vector<int> signals);
  ~SessionDriver();
  SessionDriver(const SessionDriver&) = delete;
  SessionDriver& operator=(const SessionDriver&) = delete;

  boost::asio::io_context& io() { return io_; }

  // Each signal read, until stop().
  void on_signal(std::function<void(int)> handler);
  // Whether one of the driver's signals `sig` is pending (sent, not read yet).
  bool signal_pending(int sig) const;

  // `readable` runs when one of `fds` can be read. It replaces what was watched before (the
  // daemon opens a new session at each collection window). The descriptors stay the caller's:
  // the driver never closes them.
  void watch(const std::vector<int>& fds, std::function<void()> readable);
  void unwatch();

  // `tick` every `interval`, the first after one interval, until cancelled or stop().
  TimerId every(Clock::duration interval, std::function<void()> tick);
  // `fire` once at `when` (at once when it has passed).
  TimerId at(Clock::time_point when, std::function<void()> fire);
  TimerId after(Clock::duration delay, std::function<void()> fire) {
    return at(Clock::now() + delay, std::move(fire));
  }
  void cancel(TimerId id);

  // Runs the loop until stop() and everything it cancelled has unwound.
  void run();
  // Cancels every timer, the descriptors and the signal read. Idempotent.
  void stop();
  bool stopped() const { return stopped_; }

 private:
  struct Timer;
  void arm(TimerId id);
  void arm_descriptor(size_t index);
  void read_signal();

  boost::asio::io_context io_;
  sigset_t signals_{};
  std::unique_ptr<boost::asio::posix::stream_descriptor> signal_fd_;
  signalfd_siginfo signal_info_{};
  std::function<void(int)> on_signal_;

  std::vector<std::unique_ptr<boost::asio::posix::stream_descriptor>> descriptors_;
  std::function<void()> readable_;
  uint64_t watch_generation_ = 0;

  std::map<TimerId, std::unique_ptr<Timer>> timers_;
  TimerId next_timer_ = 1;
  bool stopped_ = false;
};

}  // namespace profcollect
