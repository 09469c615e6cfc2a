#include "collector/service/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace profcollect {

namespace {

// The PID the holder wrote, if the file says one.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return {};
  std::string pid(text, static_cast<size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return {};
  return pid;
}

}  // namespace

std::string socket_lock_file(const std::string& socket) { return socket + ".lock"; }

std::string output_dir_lock_file(const std::string& output_dir) {
  return output_dir + "/.profcollect-daemon.lock";
}

InstanceLock::InstanceLock(const std::string& file, const std::string& what) : file_(file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd_ < 0) {
    const int err = errno;
    throw InstanceLockError(
        file + ": cannot lock " + what + ": " +
        (err == ELOOP ? "it is a symbolic link, which is not followed" : std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InstanceLockError(file + ": cannot lock " + what + ": not a regular file");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = err == EWOULDBLOCK ? holder_of(fd_) : std::string();
    ::close(fd_);
    if (err != EWOULDBLOCK)
      throw InstanceLockError(file + ": cannot lock " + what + ": " + std::strerror(err));
    throw InstanceLockError("another profcollect daemon" +
                            (pid.empty() ? std::string() : " (PID " + pid + ")") + " holds " +
                            what + " (" + file + "); stop it first");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds all the same; only the PID a second daemon would name is missing.
  }
}

InstanceLock::~InstanceLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace profcollect
