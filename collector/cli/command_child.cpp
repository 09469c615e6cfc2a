#include "collector/cli/command_child.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "collector/cli/cli_error.h"

namespace profcollect {

std::string resolve_command_path(const std::string& command) {
  auto real = [](const std::string& p) {
    char buf[PATH_MAX];
    return realpath(p.c_str(), buf) ? std::string(buf) : p;
  };
  if (command.find('/') != std::string::npos) return real(command);
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0) return real(candidate);
  }
  return command;
}

CommandChild::CommandChild(const std::vector<std::string>& argv) : name_(argv.at(0)) {
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw CliError(std::string("cannot start ") + name_ + ": " + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw CliError(std::string("cannot start ") + name_ + ": " + std::strerror(errno));
  if (pid_ == 0) {
    // Child: wait for the parent to open the events, then exec. Only async-signal-safe calls.
    close(go[1]);
    close(err[0]);
    char c;
    while (read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::signal(SIGPIPE, SIG_DFL);
    // profcollect reads its signals from a signalfd, with them blocked: the command gets them.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof e);
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  go_fd_ = go[1];
  error_fd_ = err[0];
}

CommandChild::~CommandChild() {
  // Never leave a held child behind when collection could not start. It is killed before its
  // go pipe closes: the end of the pipe would let it exec the command.
  if (!exited_ && pid_ > 0) kill(pid_, SIGKILL);
  if (go_fd_ >= 0) close(go_fd_);
  if (error_fd_ >= 0) close(error_fd_);
  if (!exited_ && pid_ > 0) waitpid(pid_, nullptr, 0);
}

void CommandChild::go() {
  close(go_fd_);
  go_fd_ = -1;
  int e = 0;
  ssize_t n;
  while ((n = read(error_fd_, &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(error_fd_);
  error_fd_ = -1;
  if (n == static_cast<ssize_t>(sizeof e)) {
    waitpid(pid_, &status_, 0);
    exited_ = true;
    throw CliError("cannot run " + name_ + ": " + std::strerror(e), 127);
  }
}

bool CommandChild::reap() {
  if (exited_) return true;
  pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) exited_ = true;
  return exited_;
}

void CommandChild::wait() {
  while (!exited_) {
    pid_t r = waitpid(pid_, &status_, 0);
    if (r == pid_ || (r < 0 && errno != EINTR)) exited_ = true;
  }
}

void CommandChild::signal(int sig) {
  if (!exited_) kill(pid_, sig);
}

int CommandChild::exit_code() const {
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return 1;
}

}  // namespace profcollect
