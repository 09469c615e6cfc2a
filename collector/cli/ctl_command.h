// `profcollect ctl [--socket PATH] status|flush|reload|kernel --duration S`: one request to a
// running daemon over its control socket (docs/daemon.md, "Control socket"); prints the reply (a summary
// for people, or with --json the JSON as sent) and fails (exit 1) when the reply is an error or
// none came within the timeout.
#pragma once

#include <optional>
#include <string>

namespace profcollect {

inline constexpr const char* kDefaultControlSocket = "/run/profcollect/ctl";
inline constexpr double kDefaultFlushTimeout = 120;   // seconds
inline constexpr double kDefaultRequestTimeout = 30;  // seconds

struct CtlOptions {
  std::string socket = kDefaultControlSocket;
  std::string command;             // status, flush, reload, kernel
  std::optional<double> duration;  // kernel
  bool json = false;               // the reply as the daemon sent it
  // Seconds to wait for the reply (kernel: beyond its duration). Unset: what the request may
  // take on a busy host. A flush waits for the drain thread's pass (up to 10 s) and then renders
  // every profile; anything else waits behind a flush already under way.
  std::optional<double> timeout;
};

int run_ctl(const CtlOptions& options);

}  // namespace profcollect
