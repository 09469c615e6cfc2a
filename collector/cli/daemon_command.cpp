#include "collector/cli/daemon_command.h"

#include <cstdio>

#include "collector/cli/cli_error.h"
#include "collector/session/collection_session.h"
#include "collector/session/session_driver.h"
#include "collector/service/daemon.h"
#include "collector/service/daemon_config.h"
#include "collector/host/setting_error.h"

namespace profcollect {

namespace {

// The syslog priority prefixes the journal reads from a service's stderr (sd-daemon.h's SD_INFO,
// SD_WARNING, SD_ERR): spelled here so that a build without libsystemd logs alike.
constexpr const char* kInfo = "<6>";
constexpr const char* kWarning = "<4>";
constexpr const char* kError = "<3>";

// One line per message; the session's settings are spelled as the configuration's keys.
class JournalLogger : public SessionLogger {
 public:
  void note(const std::string& m) override { say(kInfo, "", m); }
  void warning(const std::string& m) override { say(kWarning, "warning: ", m); }
  void error(const std::string& m) override { say(kError, "error: ", m); }

 private:
  static void say(const char* level, const char* kind, const std::string& m) {
    std::fprintf(stderr, "%sprofcollect: %s%s\n", level, kind,
                 spell_settings(m, daemon_config_key).c_str());
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
  // Made before the notifier's thread starts: the signals it blocks stay blocked in every thread.
  SessionDriver driver(Daemon::signals());
  Daemon daemon(driver, config_path, std::move(config), logger);
  try {
    return daemon.run() ? 0 : 1;
  } catch (const SettingError& e) {
    throw CliError(e.spelled(daemon_config_key));
  }
}

int run_daemon_check(const std::string& config_path) {
  DaemonConfig config;
  try {
    config = load_daemon_config(config_path);
  } catch (const DaemonConfigError& e) {
    std::fprintf(stderr, "profcollect: error: configuration refused: %s\n", e.what());
    return 1;
  }
  std::printf("# %s: valid; the configuration in effect:\n%s", config_path.c_str(),
              format_daemon_config(config).c_str());
  return 0;
}

}  // namespace profcollect
