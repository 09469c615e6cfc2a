// What a session says, on stderr as one line each, for the commands that run one in the
// foreground (live collection, `profcollect kernel`). The session speaks of settings; they are
// spelled as the command's flags. Quiet: errors only.
#pragma once

#include <cstdio>
#include <string>

#include "collector/cli/cli_spelling.h"
#include "collector/session/collection_session.h"

namespace profcollect {

class StderrLogger : public SessionLogger {
 public:
  explicit StderrLogger(bool quiet) : quiet_(quiet) {}
  void note(const std::string& m) override {
    if (!quiet_) std::fprintf(stderr, "profcollect: %s\n", in_cli_terms(m).c_str());
  }
  void warning(const std::string& m) override {
    if (!quiet_) std::fprintf(stderr, "profcollect: warning: %s\n", in_cli_terms(m).c_str());
  }
  void error(const std::string& m) override {
    std::fprintf(stderr, "profcollect: error: %s\n", in_cli_terms(m).c_str());
  }

 private:
  bool quiet_;
};

}  // namespace profcollect
