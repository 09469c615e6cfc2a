#include "collector/session/session_driver.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace profcollect {

namespace asio = boost::asio;

struct SessionDriver::Timer {
  explicit Timer(asio::io_context& io) : timer(io) {}
  asio::steady_timer timer;
  std::optional<Clock::duration> interval;  // repeating
  Clock::time_point when;                   // once
  std::function<void()> fn;
};

SessionDriver::SessionDriver(std::vector<int> signals) {
  sigemptyset(&signals_);
  for (int sig : signals) sigaddset(&signals_, sig);
  ::pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  const int fd = ::signalfd(-1, &signals_, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
  signal_fd_ = std::make_unique<asio::posix::stream_descriptor>(io_, fd);  // owns and closes it
}

SessionDriver::~SessionDriver() {
  for (auto& d : descriptors_) d->release();
}

void SessionDriver::on_signal(std::function<void(int)> handler) {
  on_signal_ = std::move(handler);
  read_signal();
}

void SessionDriver::read_signal() {
  signal_fd_->async_read_some(asio::buffer(&signal_info_, sizeof signal_info_),
                              [this](const boost::system::error_code& ec, size_t n) {
                                if (ec || stopped_) return;
                                if (n == sizeof signal_info_ && on_signal_)
                                  on_signal_(static_cast<int>(signal_info_.ssi_signo));
                                if (!stopped_) read_signal();
                              });
}

bool SessionDriver::signal_pending(int sig) const {
  sigset_t pending;
  if (::sigpending(&pending) != 0) return false;
  return sigismember(&signals_, sig) == 1 && sigismember(&pending, sig) == 1;
}

void SessionDriver::watch(const std::vector<int>& fds, std::function<void()> readable) {
  unwatch();
  readable_ = std::move(readable);
  for (int fd : fds) {
    descriptors_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, fd));
    arm_descriptor(descriptors_.size() - 1);
  }
}

void SessionDriver::unwatch() {
  ++watch_generation_;
  for (auto& d : descriptors_) {
    d->cancel();
    d->release();  // the caller's
  }
  descriptors_.clear();
}

void SessionDriver::arm_descriptor(size_t index) {
  const uint64_t generation = watch_generation_;
  descriptors_[index]->async_wait(
      asio::posix::stream_descriptor::wait_read,
      [this, index, generation](const boost::system::error_code& ec) {
        if (ec || stopped_ || generation != watch_generation_) return;
        readable_();
        // A descriptor whose thread exited stays readable (POLLHUP): it is listened to again a
        // little later so that it cannot spin; the callers' poll timers drain meanwhile.
        auto pause = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(10));
        pause->async_wait([this, index, generation, pause](const boost::system::error_code& e) {
          if (!e && !stopped_ && generation == watch_generation_) arm_descriptor(index);
        });
      });
}

SessionDriver::TimerId SessionDriver::every(Clock::duration interval, std::function<void()> tick) {
  const TimerId id = next_timer_++;
  auto t = std::make_unique<Timer>(io_);
  t->interval = interval;
  t->fn = std::move(tick);
  timers_.emplace(id, std::move(t));
  arm(id);
  return id;
}

SessionDriver::TimerId SessionDriver::at(Clock::time_point when, std::function<void()> fire) {
  const TimerId id = next_timer_++;
  auto t = std::make_unique<Timer>(io_);
  t->when = when;
  t->fn = std::move(fire);
  timers_.emplace(id, std::move(t));
  arm(id);
  return id;
}

void SessionDriver::arm(TimerId id) {
  Timer& t = *timers_.at(id);
  if (t.interval) {
    t.timer.expires_after(*t.interval);
  } else {
    t.timer.expires_at(t.when);
  }
  t.timer.async_wait([this, id](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    // The handler may cancel this timer, or stop everything: the entry is looked up again.
    std::function<void()> fn = it->second->fn;
    const bool repeating = it->second->interval.has_value();
    if (!repeating) timers_.erase(it);
    fn();
    if (repeating && !stopped_ && timers_.count(id)) arm(id);
  });
}

void SessionDriver::cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  // Destroying a timer cancels its wait; the handler holds no part of it (and a handler that
  // cancels its own timer runs on a copy of the function).
  timers_.erase(it);
}

void SessionDriver::run() { io_.run(); }

void SessionDriver::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& [id, t] : timers_) t->timer.cancel();
  unwatch();
  signal_fd_->cancel();
}

}  // namespace profcollect
