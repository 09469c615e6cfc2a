// A SessionLogger for tests that run the session library directly: notes are dropped, warnings
// and errors kept to be shown when an assertion fails.
#pragma once

#include <string>
#include <vector>

#include "collector/session/collection_session.h"

namespace profcollect::test {

class QuietLogger : public SessionLogger {
 public:
  void note(const std::string&) override {}
  void warning(const std::string& m) override { messages.push_back("warning: " + m); }
  void error(const std::string& m) override { messages.push_back("error: " + m); }
  // The warnings and errors, a line each.
  std::string text() const {
    std::string out;
    for (const std::string& m : messages) out += m + "\n";
    return out;
  }
  std::vector<std::string> messages;
};

}  // namespace profcollect::test
