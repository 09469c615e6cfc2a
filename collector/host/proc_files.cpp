#include "collector/host/proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace profcollect {

bool read_whole_file(const std::string& path, std::string& text) {
  text.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[8192];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      ok = false;
      break;
    }
  }
  ::close(fd);
  return ok;
}

bool read_first_line(const std::string& path, std::string& line) {
  if (!read_whole_file(path, line)) return false;
  if (auto nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
  return true;
}

}  // namespace profcollect
