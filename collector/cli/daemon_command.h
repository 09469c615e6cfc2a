// `profcollect daemon [--config FILE] [--check-config [FILE]]`: the collection daemon (collector/service/daemon.h) with its
// configuration read from FILE and its messages on stderr, prefixed with their syslog level
// as journald reads them.
#pragma once

#include <string>

namespace profcollect {

inline constexpr const char* kDefaultDaemonConfig = "/etc/profcollect/profcollect.toml";

int run_daemon(const std::string& config_path);
// `profcollect daemon --check-config [FILE]`: reads the configuration as the daemon would and
// prints the configuration in effect (every key, defaults included); 0 when it is valid, 1 (and
// the reason, with file, line and key) when it is not. Nothing is started.
int run_daemon_check(const std::string& config_path);

}  // namespace profcollect
