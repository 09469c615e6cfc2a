// Errors the commands report to the user: one line, naming the file and the reason. Thrown by
// the commands and caught in main(), the only place that decides the exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace profcollect {

class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace profcollect
