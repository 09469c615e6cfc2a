// One daemon per control socket and per output directory: an exclusive flock() on a lock file
// beside the socket (SOCKET.lock) and in the output directory (.profcollect-daemon.lock), taken
// before the daemon touches either and held until it ends. The file holds the holder's PID, so
// that a second daemon can name the first; the kernel drops the lock when its holder dies, so a
// daemon killed with SIGKILL leaves nothing stale behind. The lock file is opened with
// O_NOFOLLOW: a link planted in its place is refused, never followed.
#pragma once

#include <stdexcept>
#include <string>

namespace profcollect {

// Another process holds the lock (its PID said when known), or the lock file could not be made.
class InstanceLockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InstanceLock {
 public:
  // Takes the lock of `file` (its directory must exist) for `what` ("socket /run/x/ctl").
  // Throws InstanceLockError.
  InstanceLock(const std::string& file, const std::string& what);
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  int fd_ = -1;
};

// The lock files of a socket and of an output directory.
std::string socket_lock_file(const std::string& socket);
std::string output_dir_lock_file(const std::string& output_dir);

}  // namespace profcollect
