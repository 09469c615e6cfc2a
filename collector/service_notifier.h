// What the daemon tells its service manager (sd_notify(3)): READY=1 once the events are open,
// STATUS= lines, RELOADING=1 around a reload, WATCHDOG=1 pings and STOPPING=1. Without
// NOTIFY_SOCKET (not started by systemd) every call does nothing.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace profcollect {

class ServiceNotifier {
 public:
  void ready(const std::string& status);
  void status(const std::string& status);
  void reloading();
  void stopping();
  void watchdog();
  // Half the watchdog interval the service manager set (WATCHDOG_USEC), when it set one.
  std::optional<std::chrono::microseconds> watchdog_ping_interval() const;
};

}  // namespace profcollect
