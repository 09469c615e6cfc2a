// `profcollect ctl [--socket PATH] status|flush|reload|kernel --duration S`: one request to a
// running daemon over its control socket (README "Control socket"); prints the reply and
// fails (exit 1) when the reply is an error.
#pragma once

#include <optional>
#include <string>

namespace profcollect {

inline constexpr const char* kDefaultControlSocket = "/run/profcollect/ctl";

struct CtlOptions {
  std::string socket = kDefaultControlSocket;
  std::string command;              // status, flush, reload, kernel
  std::optional<double> duration;   // kernel
};

int run_ctl(const CtlOptions& options);

}  // namespace profcollect
