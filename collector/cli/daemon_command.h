// `profcollect daemon [--config FILE]`: the collection daemon (collector/daemon.h) with its
// configuration read from FILE and its messages on stderr, prefixed with their syslog level
// as journald reads them.
#pragma once

#include <string>

namespace profcollect {

inline constexpr const char* kDefaultDaemonConfig = "/etc/profcollect/profcollect.toml";

int run_daemon(const std::string& config_path);

}  // namespace profcollect
