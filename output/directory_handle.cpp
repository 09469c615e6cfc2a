#include "output/directory_handle.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace profcollect {

namespace {

// Why an entry may not be used, from what fstatat/fstat said about it; empty when it may.
std::string refusal(const struct stat& st, bool want_directory) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link: not followed";
  if (st.st_uid != ::geteuid())
    return "belongs to another user (uid " + std::to_string(st.st_uid) + "): not used";
  if (want_directory && !S_ISDIR(st.st_mode)) return "is not a directory";
  if (!want_directory && !S_ISREG(st.st_mode)) return "is not a regular file";
  return {};
}

}  // namespace

std::string temporary_name(std::string_view prefix) {
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    // Never fails for 6 bytes once the pool is initialized; the time is a fallback.
    const uint64_t t = static_cast<uint64_t>(::time(nullptr)) ^ static_cast<uint64_t>(::getpid());
    std::memcpy(bytes, &t, sizeof bytes);
  }
  char hex[13];
  for (size_t i = 0; i < sizeof bytes; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return std::string(prefix) + hex;
}

DirectoryHandle DirectoryHandle::open_path(const std::string& path, mode_t create_mode) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path() && !p.parent_path().empty())
    std::filesystem::create_directories(p.parent_path(), ec);
  if (::mkdir(path.c_str(), create_mode) != 0 && errno != EEXIST) {
    throw OutputError(path, "cannot create directory: " + errno_text(errno));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw OutputError(
        path, e == ENOTDIR ? std::string("is not a directory") : "cannot open: " + errno_text(e));
  }
  return DirectoryHandle(fd, path);
}

DirectoryHandle DirectoryHandle::open_existing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      throw OutputError(path, "is a symbolic link: not followed");
    if (e == ENOTDIR) throw OutputError(path, "is not a directory");
    throw OutputError(path, "cannot open: " + errno_text(e));
  }
  return DirectoryHandle(fd, path);
}

DirectoryHandle::DirectoryHandle(DirectoryHandle&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

DirectoryHandle& DirectoryHandle::operator=(DirectoryHandle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

DirectoryHandle::~DirectoryHandle() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<DirectoryHandle> DirectoryHandle::open_subdirectory(const std::string& name) const {
  const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return std::nullopt;
    struct stat st {};
    if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      const std::string why = refusal(st, true);
      if (!why.empty()) throw OutputError(path_of(name), why);
    }
    throw OutputError(path_of(name), "cannot open: " + errno_text(e));
  }
  DirectoryHandle sub(fd, path_of(name));
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw OutputError(sub.path(), "cannot stat: " + errno_text(errno));
  const std::string why = refusal(st, true);
  if (!why.empty()) throw OutputError(sub.path(), why);
  return sub;
}

DirectoryHandle DirectoryHandle::create_subdirectory(const std::string& name, mode_t mode) const {
  if (::mkdirat(fd_, name.c_str(), mode) != 0) {
    throw OutputError(path_of(name), "cannot create directory: " + errno_text(errno));
  }
  auto sub = open_subdirectory(name);
  if (!sub) throw OutputError(path_of(name), "vanished right after it was made");
  return std::move(*sub);
}

std::optional<std::string> DirectoryHandle::read_file(const std::string& name) const {
  // O_NONBLOCK: a FIFO planted under a profile's name must not hang the reader.
  const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return std::nullopt;
    if (e == ELOOP) throw OutputError(path_of(name), "is a symbolic link: not followed");
    throw OutputError(path_of(name), "cannot open: " + errno_text(e));
  }
  struct stat st {};
  std::string why =
      ::fstat(fd, &st) != 0 ? "cannot stat: " + errno_text(errno) : refusal(st, false);
  std::string content;
  if (why.empty()) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = "read failed: " + errno_text(errno);
        break;
      }
      if (n == 0) break;
      content.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (!why.empty()) throw OutputError(path_of(name), why);
  return content;
}

void DirectoryHandle::create_file(const std::string& name, std::string_view content,
                                  mode_t mode) const {
  const int fd =
      ::openat(fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw OutputError(path_of(name), "cannot create: " + errno_text(errno));
  try {
    write_all(fd, path_of(name), content);
    if (::fsync(fd) != 0) throw OutputError(path_of(name), "fsync failed: " + errno_text(errno));
  } catch (...) {
    ::close(fd);
    ::unlinkat(fd_, name.c_str(), 0);
    throw;
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlinkat(fd_, name.c_str(), 0);
    throw OutputError(path_of(name), "close failed: " + errno_text(e));
  }
}

void DirectoryHandle::replace_file(const std::string& name, std::string_view content,
                                   mode_t mode) const {
  const std::string temp = temporary_name("." + name + ".tmp-");
  create_file(temp, content, mode);
  if (::renameat(fd_, temp.c_str(), fd_, name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(fd_, temp.c_str(), 0);
    throw OutputError(path_of(name), "rename failed: " + errno_text(e));
  }
  sync();
}

std::vector<std::string> DirectoryHandle::entries() const {
  std::vector<std::string> names;
  const int fd = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw OutputError(path_, "cannot list: " + errno_text(errno));
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    throw OutputError(path_, "cannot list: " + errno_text(errno));
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  return names;
}

bool DirectoryHandle::has_entry(const std::string& name) const {
  struct stat st {};
  return ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool DirectoryHandle::owns_entry(const std::string& name) const {
  struct stat st {};
  return ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == ::geteuid();
}

void DirectoryHandle::rename_entry(const std::string& from, const std::string& to) const {
  if (::renameat(fd_, from.c_str(), fd_, to.c_str()) != 0) {
    throw OutputError(path_of(from), "cannot rename to " + to + ": " + errno_text(errno));
  }
}

void DirectoryHandle::link_from(const DirectoryHandle& from, const std::string& name) const {
  if (::linkat(from.fd_, name.c_str(), fd_, name.c_str(), 0) != 0) {
    throw OutputError(path_of(name),
                      "cannot link from " + from.path_of(name) + ": " + errno_text(errno));
  }
}

void DirectoryHandle::remove_tree(const std::string& name) const {
  if (::unlinkat(fd_, name.c_str(), 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM)
    throw OutputError(path_of(name), "cannot remove: " + errno_text(errno));
  // A directory: opened without following, emptied, removed.
  const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw OutputError(path_of(name), "cannot remove: " + errno_text(errno));
  DirectoryHandle sub(fd, path_of(name));
  for (const std::string& entry : sub.entries()) sub.remove_tree(entry);
  if (::unlinkat(fd_, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    throw OutputError(path_of(name), "cannot remove: " + errno_text(errno));
  }
}

void DirectoryHandle::sync() const {
  // A directory's fsync makes its entries durable; a file system that cannot is no reason to fail.
  ::fsync(fd_);
}

}  // namespace profcollect
