// A syscall-heavy load for kernel profiles (tests/fixtures/kernel_src/syscall_load.c): built at
// test time with gcc, and run as several processes that are killed when the object goes.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace profcollect::test {

// Builds the load program into `dir`; empty with the compiler's output in `error` on failure.
inline std::filesystem::path build_syscall_load(const std::filesystem::path& dir,
                                                std::string& error) {
  const std::filesystem::path load = dir / "syscall_load";
  const std::vector<std::string> cc = {
      "gcc", "-O2", "-o", load.string(),
      (source_dir() / "tests/fixtures/kernel_src/syscall_load.c").string()};
  const CommandResult r = run_command(cc);
  if (r.exit_code != 0) {
    error = r.describe(cc);
    return {};
  }
  return load;
}

class SyscallLoad {
 public:
  SyscallLoad(const std::filesystem::path& program, double seconds, unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        const std::string s = std::to_string(seconds);
        ::execl(program.c_str(), program.c_str(), s.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~SyscallLoad() {
    for (pid_t p : pids_) ::kill(p, SIGKILL);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
  }
  SyscallLoad(const SyscallLoad&) = delete;
  SyscallLoad& operator=(const SyscallLoad&) = delete;
  size_t started() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace profcollect::test
