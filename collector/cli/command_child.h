// The workload of `profcollect -- CMD ARGS...`: forked at once but held before its exec until
// the events that follow it are open, so that its first instruction is already sampled
// (enable_on_exec). The child keeps profcollect's process group, so Ctrl-C reaches both.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace profcollect {

// PATH lookup as execvp does it, then realpath: the path the kernel's MMAP2 records will name.
std::string resolve_command_path(const std::string& command);

class CommandChild {
 public:
  explicit CommandChild(const std::vector<std::string>& argv);  // throws CliError
  ~CommandChild();
  CommandChild(const CommandChild&) = delete;
  CommandChild& operator=(const CommandChild&) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec. Throws CliError if the exec failed (the child has then exited).
  void go();
  // Non-blocking: true once the child has exited (its status is kept).
  bool reap();
  // Blocks until the child has exited.
  void wait();
  void signal(int sig);
  // The child's exit status as a shell reports it: its code, or 128 + the signal.
  int exit_code() const;

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;     // write end: closing it releases the child
  int error_fd_ = -1;  // read end: the child writes its exec errno here
  int status_ = 0;
  bool exited_ = false;
  std::string name_;
};

}  // namespace profcollect
