#include "collector/service/service_notifier.h"

#if PROFCOLLECT_WITH_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace profcollect {

namespace {
constexpr bool kWithSystemd = PROFCOLLECT_WITH_SYSTEMD;
}  // namespace

struct ServiceNotifier::Outbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> lifecycle;  // READY=1..., RELOADING=1, STOPPING=1, in order
  std::optional<std::string> status;  // the latest STATUS= not sent yet
  bool watchdog = false;
  bool closing = false;
  bool sending = false;

  bool pending() const { return !lifecycle.empty() || status || watchdog; }
  bool idle() const { return !pending() && !sending; }

  // A manager that never reads again must not make the queue grow: beyond a few lifecycle
  // messages (a reload storm) the oldest go.
  void push(std::string message) {
    if (lifecycle.size() >= 16) lifecycle.pop_front();
    lifecycle.push_back(std::move(message));
    changed.notify_all();
  }

  void send_all() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return pending() || closing; });
      if (!pending()) return;  // closing, everything sent
      sending = true;
      std::string message;
      if (!lifecycle.empty()) {
        message = std::move(lifecycle.front());
        lifecycle.pop_front();
      } else if (status) {
        message = "STATUS=" + *status;
        status.reset();
      } else {
        message = "WATCHDOG=1";
        watchdog = false;
      }
      lock.unlock();
#if PROFCOLLECT_WITH_SYSTEMD
      sd_notify(0, message.c_str());  // may block while the manager does not read
#endif
      lock.lock();
      sending = false;
      changed.notify_all();
    }
  }
};

ServiceNotifier::ServiceNotifier() {
  // A build without systemd support (PROFCOLLECT_WITH_SYSTEMD=OFF) tells no manager anything: run
  // it as Type=simple, without a watchdog.
  if (!kWithSystemd || !std::getenv("NOTIFY_SOCKET")) return;
  outbox_ = std::make_shared<Outbox>();
  // Detached, holding the outbox: a send blocked at the end must not hold up the exit.
  std::thread([outbox = outbox_] { outbox->send_all(); }).detach();
}

ServiceNotifier::~ServiceNotifier() {
  if (!outbox_) return;
  std::unique_lock lock(outbox_->mutex);
  outbox_->closing = true;
  outbox_->changed.notify_all();
  outbox_->changed.wait_for(lock, std::chrono::seconds(2), [&] { return outbox_->idle(); });
}

void ServiceNotifier::ready(const std::string& status) {
  if (!outbox_) return;
  std::lock_guard lock(outbox_->mutex);
  outbox_->status.reset();  // sent with READY=1
  outbox_->push("READY=1\nSTATUS=" + status);
}

void ServiceNotifier::status(const std::string& status) {
  if (!outbox_) return;
  std::lock_guard lock(outbox_->mutex);
  outbox_->status = status;
  outbox_->changed.notify_all();
}

void ServiceNotifier::reloading() {
  if (!outbox_) return;
  std::lock_guard lock(outbox_->mutex);
  outbox_->push("RELOADING=1");
}

void ServiceNotifier::stopping() {
  if (!outbox_) return;
  std::lock_guard lock(outbox_->mutex);
  outbox_->push("STOPPING=1");
}

void ServiceNotifier::watchdog() {
  if (!outbox_) return;
  std::lock_guard lock(outbox_->mutex);
  outbox_->watchdog = true;
  outbox_->changed.notify_all();
}

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog_ping_interval() const {
#if PROFCOLLECT_WITH_SYSTEMD
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
#else
  return std::nullopt;
#endif
}

}  // namespace profcollect
