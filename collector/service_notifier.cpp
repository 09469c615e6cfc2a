#include "collector/service_notifier.h"

#include <systemd/sd-daemon.h>

namespace profcollect {

void ServiceNotifier::ready(const std::string& status) { sd_notify(0, ("READY=1\nSTATUS=" + status).c_str()); }

void ServiceNotifier::status(const std::string& status) { sd_notify(0, ("STATUS=" + status).c_str()); }

void ServiceNotifier::reloading() { sd_notify(0, "RELOADING=1"); }

void ServiceNotifier::stopping() { sd_notify(0, "STOPPING=1"); }

void ServiceNotifier::watchdog() { sd_notify(0, "WATCHDOG=1"); }

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog_ping_interval() const {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

}  // namespace profcollect
