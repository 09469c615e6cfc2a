// A small C program that spins in one function until killed, compiled for the live-collection
// tests, and ways to start it: running (for --pid) or held before its exec (command mode).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace profcollect::test {

// Compiles the program into `dir` with the system C compiler; empty path and `error` set when
// no compiler works.
std::filesystem::path build_busy_program(const std::filesystem::path& dir, std::string& error);

// A child process that is killed and reaped on destruction.
class ChildProcess {
 public:
  // Starts `exe` now.
  static ChildProcess spawn(const std::filesystem::path& exe);
  // Forks a child that waits, before its exec of `exe`, until release() is called.
  static ChildProcess held_before_exec(const std::filesystem::path& exe);

  ChildProcess(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  void release();
  // Waits until /proc/PID/exe names `exe` (the exec happened); false after `timeout_ms` (long:
  // a loaded machine may take a while, an exec that happens ends the wait at once).
  bool wait_for_exec(const std::filesystem::path& exe, int timeout_ms = 120000) const;
  void kill_and_reap();

 private:
  ChildProcess(pid_t pid, int release_fd) : pid_(pid), release_fd_(release_fd) {}
  pid_t pid_ = -1;
  int release_fd_ = -1;
};

}  // namespace profcollect::test
