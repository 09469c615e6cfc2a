#include "collector/pipeline/drain_thread.h"

#include <poll.h>

#include <algorithm>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "collector/pipeline/collection_engine.h"

namespace profcollect {

namespace {

int make_eventfd() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  return fd;
}

void signal_eventfd(int fd) {
  const uint64_t one = 1;
  // EAGAIN: the counter is at its maximum, which is readable anyway.
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
}

}  // namespace

DrainThread::DrainThread(CollectionEngine& engine, std::chrono::milliseconds interval)
    : engine_(engine), interval_(interval) {
  ready_fd_ = make_eventfd();
  try {
    stop_fd_ = make_eventfd();
    kick_fd_ = make_eventfd();
  } catch (...) {
    ::close(ready_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    throw;
  }
  // Signals stay with the owner's thread: the new thread inherits this mask.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(ready_fd_);
    ::close(stop_fd_);
    ::close(kick_fd_);
    throw;
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

DrainThread::~DrainThread() {
  stop();
  ::close(ready_fd_);
  ::close(stop_fd_);
  ::close(kick_fd_);
}

void DrainThread::stop() {
  if (!thread_.joinable()) return;
  signal_eventfd(stop_fd_);
  thread_.join();
}

bool DrainThread::sync(std::chrono::milliseconds patience, const std::function<void()>& waiting) {
  std::unique_lock<std::mutex> lock(sync_mutex_);
  if (ended_) return false;
  const uint64_t ticket = ++requested_;
  signal_eventfd(kick_fd_);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  // In slices, so that an owner with a watchdog says meanwhile that it is alive.
  constexpr auto kSlice = std::chrono::milliseconds(500);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const auto until = std::min(deadline, now + kSlice);
    if (synced_.wait_until(lock, until, [&] { return completed_ >= ticket || ended_; }))
      return !ended_;
    if (until >= deadline) return false;
    if (waiting) {
      lock.unlock();
      waiting();
      lock.lock();
    }
  }
}

void DrainThread::clear_ready() {
  uint64_t value;
  [[maybe_unused]] const ssize_t n = ::read(ready_fd_, &value, sizeof value);
}

void DrainThread::rethrow_if_failed() {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void DrainThread::run() {
  ::pthread_setname_np(::pthread_self(), "profcollect-drn");
  // The stop descriptor first, then the engine's. A descriptor that hangs up (a --pid target's
  // thread exited: its fd stays readable for good) is left out of the wait, or the loop would
  // spin on it; its buffer is still read at every pass.
  // Whatever ends the loop, a sync() waiting for it returns.
  struct Ended {
    DrainThread& t;
    ~Ended() {
      std::lock_guard<std::mutex> lock(t.sync_mutex_);
      t.ended_ = true;
      t.synced_.notify_all();
    }
  } ended{*this};
  std::vector<pollfd> fds;
  constexpr size_t kOwn = 2;  // the stop and kick descriptors
  auto rebuild = [&] {
    fds.clear();
    fds.push_back(pollfd{stop_fd_, POLLIN, 0});
    fds.push_back(pollfd{kick_fd_, POLLIN, 0});
    for (int fd : engine_.descriptors()) fds.push_back(pollfd{fd, POLLIN, 0});
  };
  rebuild();
  const int timeout = static_cast<int>(interval_.count());
  for (;;) {
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents) break;
    if (fds[1].revents) {
      uint64_t value;
      [[maybe_unused]] const ssize_t r = ::read(kick_fd_, &value, sizeof value);
    }
    for (size_t i = kOwn; i < fds.size(); ++i) {
      if (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) fds[i].fd = -1;
    }
    // The sync() requests made before this pass begins are served by it.
    uint64_t serving;
    {
      std::lock_guard<std::mutex> lock(sync_mutex_);
      serving = requested_;
    }
    try {
      passes_.fetch_add(1, std::memory_order_relaxed);
      if (engine_.collect()) signal_eventfd(ready_fd_);
      if (engine_.descriptors_changed()) rebuild();
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      failure_ = std::current_exception();
      signal_eventfd(ready_fd_);  // the session's thread comes and finds it
      return;
    }
    std::lock_guard<std::mutex> lock(sync_mutex_);
    completed_ = serving;
    synced_.notify_all();
  }
}

}  // namespace profcollect
