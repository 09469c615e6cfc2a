// A directory used only through its descriptor, so that what is read and written in it is what
// was checked, whatever is renamed or planted around it meanwhile. Every entry is opened
// relative to the descriptor with O_NOFOLLOW: an entry that is a symbolic link is never followed,
// and an entry that belongs to another user is refused (in a shared, world-writable output
// directory another user may plant either). Refusals and failures throw OutputError naming the
// entry's path and the reason.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/atomic_file.h"

namespace profcollect {

class DirectoryHandle {
 public:
  // The directory at `path`, created with `create_mode` when missing (its parents as the umask
  // allows). The path itself is the caller's choice and may pass through links; what lies in it
  // is checked entry by entry.
  static DirectoryHandle open_path(const std::string& path, mode_t create_mode);
  // The directory at `path`, which must exist and whose last component must not be a link (the
  // daemon's output directory: a link planted in its place is not followed). Throws OutputError.
  static DirectoryHandle open_existing(const std::string& path);

  DirectoryHandle(DirectoryHandle&& other) noexcept;
  DirectoryHandle& operator=(DirectoryHandle&& other) noexcept;
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;
  ~DirectoryHandle();

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  std::string path_of(std::string_view name) const { return path_ + "/" + std::string(name); }

  // The subdirectory `name`; nullopt when there is no such entry. Throws OutputError when the
  // entry is a symlink, not a directory, or another user's.
  std::optional<DirectoryHandle> open_subdirectory(const std::string& name) const;
  // A new subdirectory (mkdirat); throws OutputError if anything is already there.
  DirectoryHandle create_subdirectory(const std::string& name, mode_t mode) const;

  // The content of the regular file `name`; nullopt when there is no such entry. Throws
  // OutputError when the entry is a symlink, not a regular file, another user's, or unreadable.
  std::optional<std::string> read_file(const std::string& name) const;
  // Creates `name` (it must not exist), writes `content` and fsyncs it.
  void create_file(const std::string& name, std::string_view content, mode_t mode) const;
  // Replaces `name` atomically: a new file beside it, fsynced, renamed over it. An entry `name`
  // that is a symlink is replaced, never followed.
  void replace_file(const std::string& name, std::string_view content, mode_t mode) const;

  // Entry names, "." and ".." left out.
  std::vector<std::string> entries() const;
  // Whether `name` is an entry (of any type), without following it.
  bool has_entry(const std::string& name) const;
  // Whether `name` is an entry this user owns (without following it).
  bool owns_entry(const std::string& name) const;
  void rename_entry(const std::string& from, const std::string& to) const;
  // Hard-links `name` of `from` into this directory under the same name.
  void link_from(const DirectoryHandle& from, const std::string& name) const;
  // Removes `name`: a file or symlink, or a directory with everything in it (never following a
  // link inside). Absent is not an error.
  void remove_tree(const std::string& name) const;
  // Makes the entries' creations, renames and removals durable.
  void sync() const;

 private:
  DirectoryHandle(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// A name for a temporary entry: `prefix` then 12 random hex digits.
std::string temporary_name(std::string_view prefix);

}  // namespace profcollect
