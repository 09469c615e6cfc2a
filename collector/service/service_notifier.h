// What the daemon tells its service manager (sd_notify(3)): READY=1 once the events are open,
// STATUS= lines, RELOADING=1 around a reload, WATCHDOG=1 pings and STOPPING=1. Without
// NOTIFY_SOCKET (not started by systemd) every call does nothing.
//
// The messages are sent by a thread of their own, never by the caller: sd_notify sends on a
// blocking datagram socket, and a manager that stops reading its notify socket (stalled, or a
// test harness) fills it after a few messages (net.unix.max_dgram_qlen); the daemon's loop would
// then block and stop draining its ring buffers. Pending messages are coalesced, so a stalled
// manager costs a bounded queue: one STATUS= (the latest), one WATCHDOG=1, and the lifecycle
// messages (READY=1, RELOADING=1, STOPPING=1) in order. Destruction waits a moment for what is
// pending to go out (STOPPING=1 at the end); a sender still blocked then is left behind and
// ends with the process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace profcollect {

class ServiceNotifier {
 public:
  ServiceNotifier();
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  void ready(const std::string& status);
  void status(const std::string& status);
  void reloading();
  void stopping();
  void watchdog();
  // Half the watchdog interval the service manager set (WATCHDOG_USEC), when it set one.
  std::optional<std::chrono::microseconds> watchdog_ping_interval() const;

  struct Outbox;  // shared with the sending thread

 private:
  std::shared_ptr<Outbox> outbox_;  // null without NOTIFY_SOCKET
};

}  // namespace profcollect
