// Writes a file so that a reader never sees a partial one: the content goes to a temporary file
// in the same directory, is fsynced, and is renamed over the target. The temporary file is made
// when the writer is created, so an unwritable destination fails before any work is done; if the
// writer is destroyed without commit(), the temporary file is removed and the target is untouched.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace profcollect {

class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// errno's text, for an OutputError's reason.
std::string errno_text(int error);

// Writes all of data to fd, again after EINTR; throws OutputError naming path.
void write_all(int fd, const std::string& path, std::string_view data);

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);  // throws OutputError
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view data);  // throws OutputError (e.g. disk full)
  void sync();                        // fsync what was written; throws OutputError
  void commit();                      // fsync, rename, fsync the directory; throws OutputError

  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;
  std::string path_, temp_path_;
  int fd_ = -1;
};

// Convenience: the whole content at once.
void write_file_atomically(const std::string& path, std::string_view data);

}  // namespace profcollect
