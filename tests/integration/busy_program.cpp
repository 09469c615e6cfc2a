#include "tests/integration/busy_program.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "tests/integration/test_support.h"

namespace profcollect::test {

namespace {

constexpr const char* kSource = R"(
#include <stdio.h>
__attribute__((noinline)) double spin(long n) {
  double s = 0;
  for (long i = 1; i < n; i++) s += (i % 3) ? 1.0 / i : -0.5 / i;
  return s;
}
int main(void) {
  double t = 0;
  for (;;) {
    t += spin(1000000);
    if (t == 12345.0) printf("%f\n", t);
  }
}
)";

}  // namespace

std::filesystem::path build_busy_program(const std::filesystem::path& dir, std::string& error) {
  const auto source = dir / "busy.c";
  const auto exe = dir / "busy";
  write_file(source, kSource);
  for (const char* cc : {"cc", "gcc", "clang-19"}) {
    if (!have_executable(cc)) continue;
    const std::vector<std::string> argv = {cc, "-O1", "-o", exe.string(), source.string()};
    const CommandResult r = run_command(argv);
    if (r.exit_code == 0) return std::filesystem::canonical(exe);
    error = r.describe(argv);
  }
  if (error.empty()) error = "no C compiler (cc, gcc, clang-19) installed";
  return {};
}

ChildProcess ChildProcess::spawn(const std::filesystem::path& exe) {
  ChildProcess c = held_before_exec(exe);
  c.release();
  return c;
}

ChildProcess ChildProcess::held_before_exec(const std::filesystem::path& exe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  const std::string path = exe.string();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    ::close(fds[1]);
    char byte;
    while (::read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    char* const argv[] = {const_cast<char*>(path.c_str()), nullptr};
    ::execv(path.c_str(), argv);
    ::_exit(127);
  }
  ::close(fds[0]);
  return ChildProcess(pid, fds[1]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), release_fd_(other.release_fd_) {
  other.pid_ = -1;
  other.release_fd_ = -1;
}

ChildProcess::~ChildProcess() { kill_and_reap(); }

void ChildProcess::release() {
  if (release_fd_ < 0) return;
  const char byte = 1;
  (void)!::write(release_fd_, &byte, 1);
  ::close(release_fd_);
  release_fd_ = -1;
}

bool ChildProcess::wait_for_exec(const std::filesystem::path& exe, int timeout_ms) const {
  const auto link = "/proc/" + std::to_string(pid_) + "/exe";
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    std::error_code ec;
    if (std::filesystem::read_symlink(link, ec) == exe) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ChildProcess::kill_and_reap() {
  if (release_fd_ >= 0) {
    ::close(release_fd_);
    release_fd_ = -1;
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

}  // namespace profcollect::test
