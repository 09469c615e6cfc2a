// What `profcollect ctl` prints for people: a daemon's reply to status, flush, reload or kernel
// (docs/daemon.md, "Control socket") as a few short lines. `ctl --json` prints the reply itself.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace profcollect {

// The lines for `reply` to `command` (a successful reply; errors are printed by the caller).
std::string summarize_reply(const std::string& command, const nlohmann::ordered_json& reply);

}  // namespace profcollect
