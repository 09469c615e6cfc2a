#include "output/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace profcollect {

namespace {
std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
}  // namespace

std::string errno_text(int error) { return std::strerror(error); }

void write_all(int fd, const std::string& path, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError(path, "write failed: " + errno_text(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  struct stat st;
  const bool replaces = ::stat(path_.c_str(), &st) == 0;
  if (replaces && S_ISDIR(st.st_mode)) {
    throw OutputError(path_, "is a directory");
  }
  std::string dir = dir_of(path_);
  std::string base = path_.substr(path_.rfind('/') == std::string::npos ? 0 : path_.rfind('/') + 1);
  std::string templ = dir + "/." + base + ".tmp.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) {
    int e = errno;
    if (::access(dir.c_str(), F_OK) != 0)
      throw OutputError(path_, "directory " + dir + " does not exist");
    throw OutputError(path_, "cannot create a file in " + dir + ": " + errno_text(e));
  }
  temp_path_ = buf.data();
  if (replaces && S_ISREG(st.st_mode)) {
    // The new content takes the place of the old file: it keeps its mode and owner (changing
    // the owner needs privilege; without it the file is ours, as a new one would be).
    ::fchmod(fd_, st.st_mode & 07777);
    if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
      if (::fchown(fd_, st.st_uid, st.st_gid) == 0) ::fchmod(fd_, st.st_mode & 07777);
    }
  } else {
    // mkstemp makes the file 0600; a new profile is an ordinary file, as the umask allows.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
  }
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void AtomicFileWriter::write(std::string_view data) {
  if (fd_ < 0) throw OutputError(path_, "already committed");
  try {
    write_all(fd_, path_, data);
  } catch (const OutputError&) {
    discard();
    throw;
  }
}

void AtomicFileWriter::sync() {
  if (fd_ < 0) throw OutputError(path_, "already committed");
  if (::fsync(fd_) != 0) {
    int e = errno;
    discard();
    throw OutputError(path_, "fsync failed: " + errno_text(e));
  }
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw OutputError(path_, "already committed");
  if (::fsync(fd_) != 0) {
    int e = errno;
    discard();
    throw OutputError(path_, "fsync failed: " + errno_text(e));
  }
  if (::close(fd_) != 0) {
    int e = errno;
    fd_ = -1;
    discard();
    throw OutputError(path_, "close failed: " + errno_text(e));
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    discard();
    throw OutputError(path_, "rename failed: " + errno_text(e));
  }
  temp_path_.clear();
  // Make the rename itself durable.
  int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const std::string& path, std::string_view data) {
  AtomicFileWriter w(path);
  w.write(data);
  w.commit();
}

}  // namespace profcollect
