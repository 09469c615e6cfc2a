#include "output/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace profcollect {

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") return;
  struct stat target {};
  if (::stat(path_.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode)) throw OutputError(path_, "is a directory");
    if (!S_ISREG(target.st_mode)) return;  // a device or FIFO: written in place at commit
    struct stat link {};
    if (::lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      char resolved[PATH_MAX];
      if (::realpath(path_.c_str(), resolved) == nullptr) {
        throw OutputError(path_, std::string("cannot resolve the link: ") + std::strerror(errno));
      }
      replaced_ = std::make_unique<AtomicFileWriter>(resolved);
      return;
    }
  }
  replaced_ = std::make_unique<AtomicFileWriter>(path_);
}

OutputFile::~OutputFile() = default;

void OutputFile::stage(std::string_view content) {
  if (replaced_) {
    replaced_->write(content);
    replaced_->sync();
  } else {
    pending_.assign(content);
  }
}

void OutputFile::commit() {
  if (replaced_) {
    replaced_->commit();
    return;
  }
  if (path_ == "-") {
    write_all(STDOUT_FILENO, "standard output", pending_);
    return;
  }
  // O_NOCTTY: a terminal device named as output must not become our controlling terminal.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw OutputError(path_, std::string("cannot open: ") + std::strerror(errno));
  try {
    write_all(fd, path_, pending_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw OutputError(path_, std::string("close failed: ") + std::strerror(errno));
}

}  // namespace profcollect
