#include "collector/cli/daemon_command.h"

#include <systemd/sd-daemon.h>

#include <cstdio>

#include "collector/cli/cli_error.h"
#include "collector/collection_session.h"
#include "collector/daemon.h"
#include "collector/daemon_config.h"
#include "collector/setting_error.h"

namespace profcollect {

namespace {

// One line per message; the session's settings are spelled as the configuration's keys.
class JournalLogger : public SessionLogger {
 public:
  void note(const std::string& m) override { say(SD_INFO, "", m); }
  void warning(const std::string& m) override { say(SD_WARNING, "warning: ", m); }
  void error(const std::string& m) override { say(SD_ERR, "error: ", m); }

 private:
  static void say(const char* level, const char* kind, const std::string& m) {
    std::fprintf(stderr, "%sprofcollect: %s%s\n", level, kind, spell_settings(m, daemon_config_key).c_str());
    std::fflush(stderr);
  }
};

}  // namespace

int run_daemon(const std::string& config_path) {
  DaemonConfig config;
  try {
    config = load_daemon_config(config_path);
  } catch (const DaemonConfigError& e) {
    throw CliError(std::string("configuration refused: ") + e.what());
  }
  JournalLogger logger;
  boost::asio::io_context io;
  Daemon daemon(io, config_path, std::move(config), logger);
  try {
    return daemon.run() ? 0 : 1;
  } catch (const SettingError& e) {
    throw CliError(e.spelled(daemon_config_key));
  }
}

}  // namespace profcollect
